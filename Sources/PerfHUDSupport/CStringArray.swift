#if canImport(Glibc)
import Glibc
#endif

/// Calls `body` with a NULL-terminated C array of `strings`.
public func withCStrings<T>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> T) -> T {
    let pointers = strings.map { strdup($0) } + [nil]
    defer { pointers.forEach { free($0) } }
    return body(pointers)
}
