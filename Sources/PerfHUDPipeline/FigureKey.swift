import PerfHUDSupport

extension Figure {
    /// A key as the JSON row writes it, `"key":`, in UTF-8 bytes copied once when the table is
    /// made: a plain pointer and count, which a row writer copies without counting a reference (a
    /// `String` of more than 15 bytes would be retained and released per field per row). Followed
    /// by `ByteBuffer.wordSlack` zero bytes, so that it is copied a word at a time (`putWords`).
    package struct Key {
        package let start: UnsafePointer<UInt8>
        package let count: Int

        package init(_ text: String) {
            let bytes = Array("\"\(text)\":".utf8)
            let copy = UnsafeMutablePointer<UInt8>.allocate(capacity: bytes.count + ByteBuffer.wordSlack)
            copy.initialize(repeating: 0, count: bytes.count + ByteBuffer.wordSlack)
            copy.update(from: bytes, count: bytes.count)
            start = UnsafePointer(copy); count = bytes.count
        }

        package func free() { UnsafeMutablePointer(mutating: start).deallocate() }
    }
}
