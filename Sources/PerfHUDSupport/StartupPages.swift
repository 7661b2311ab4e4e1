import CSystemShims

/// The executable's start-up pages, handed back once the loop is about to run.
///
/// Start-up — the loader's relocations, argument parsing and help, the Swift runtime's first
/// metadata and conformance look-ups, SwiftNIO's bootstrap — touches code and constants spread over
/// the whole binary, and the kernel maps a file 64 KiB around each page first touched: about 10 MiB
/// of perfhud's own file stayed resident in an idle daemon, most of it never run again. Dropping
/// those read-only pages from the process (they stay in the page cache) leaves resident what the
/// loop runs, which comes back at its first fault. See `perfhud_release_startup_pages`.
public enum StartupPages {
    /// Call once, after start-up and before the loop. Returns the bytes that were resident.
    @discardableResult
    public static func release() -> Int { perfhud_release_startup_pages() }
}
