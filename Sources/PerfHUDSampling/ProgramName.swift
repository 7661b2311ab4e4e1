#if canImport(Glibc)
import Glibc
#endif

/// The program's name as its user knows it. The kernel's `comm` is cut at 15 bytes
/// (`glmark2-es2-wayland` reads `glmark2-es2-way`): when it is that long and the program's path
/// — its `argv[0]`, else the executable `/proc/PID/exe` links to — ends in a name that begins with
/// it, that name is the program's. A name the program gave itself (`prctl(PR_SET_NAME)`, not the
/// beginning of its path's) is kept as it is.
enum ProgramName {
    /// The kernel keeps 16 bytes of a name, its terminating NUL included (TASK_COMM_LEN).
    static let commandNameLimit = 15

    package static func full(commandName: String, pid: Int32) -> String {
        guard commandName.utf8.count >= commandNameLimit else { return commandName }
        for path in [firstArgument(of: pid), executable(of: pid)] {
            guard let path, let name = path.split(separator: "/").last.map(String.init) else { continue }
            if name.utf8.count > commandName.utf8.count, name.utf8.starts(with: commandName.utf8) { return name }
        }
        return commandName
    }

    /// `argv[0]`: the first NUL-ended word of `/proc/PID/cmdline` (nil when empty or unreadable).
    private static func firstArgument(of pid: Int32) -> String? {
        guard case .success(let bytes) = KeptOpenFile.contents(of: "/proc/\(pid)/cmdline", limit: 4096) else { return nil }
        let first = bytes.prefix { $0 != 0 }
        return first.isEmpty ? nil : String(decoding: first, as: UTF8.self)
    }

    /// Where `/proc/PID/exe` points (another user's process: nil, unless perfhud may ptrace it).
    private static func executable(of pid: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/\(pid)/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
