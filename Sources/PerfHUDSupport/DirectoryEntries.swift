#if canImport(Glibc)
import Glibc
#endif

/// Calls `body` with the name of each entry of the directory `path` but `.` and `..`, and the
/// open directory's descriptor (for `fstatat`, `readlinkat` on the entry). False where the
/// directory cannot be opened (gone, or not ours to read). Not for the per-tick path: a `String`
/// an entry (`DescendantScan` reads its names in place).
@discardableResult
public func forEachEntry(in path: String, _ body: (_ directory: Int32, _ name: String) -> Void) -> Bool {
    guard let listing = opendir(path) else { return false }
    defer { closedir(listing) }
    let descriptor = dirfd(listing)
    while let entry = readdir(listing) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name != "." && name != ".." { body(descriptor, name) }
    }
    return true
}
