#if canImport(Glibc)
import Glibc
#endif

/// Finds the processes a daemon watches: a PID, a pidfile, a command-line pattern or a unit.
/// A target that is not there yet is normal: `resolve` then says why, and is asked again later.
public final class TargetResolver {
    public let selector: DaemonConfiguration.Selector
    private let directory: ProcessDirectory
    private var pattern = regex_t()
    private var compiled = false

    /// - Throws: a message when the pattern is not a valid extended regular expression.
    public init(selector: DaemonConfiguration.Selector, directory: ProcessDirectory = ProcessDirectory()) throws {
        self.selector = selector
        self.directory = directory
        if case .match(let expression) = selector {
            let status = regcomp(&pattern, expression, REG_EXTENDED | REG_NOSUB)
            guard status == 0 else {
                var message = [CChar](repeating: 0, count: 256)
                regerror(status, &pattern, &message, message.count)
                throw DaemonError(description: "invalid --match pattern /\(expression)/: \(String(cString: message))")
            }
            compiled = true
        }
    }

    deinit { if compiled { regfree(&pattern) } }

    /// The target's root PIDs, or why there are none now.
    public func resolve() -> Result<[Int32], DaemonError> {
        switch selector {
        case .pid(let pid):
            return Self.exists(pid) ? .success([pid]) : .failure(.init(description: "no process with PID \(pid)"))
        case .pidfile(let path):
            let data: [UInt8]
            switch KeptOpenFile.contents(of: path, limit: 64) {
            case .success(let bytes): data = bytes
            case .failure(let error): return .failure(.init(description: "cannot read \(path): \(error)"))
            }
            let text = String(decoding: data, as: UTF8.self)
            guard let pid = Int32(text.split(separator: "\n").first.map { String($0).trimmingTrailingSpaces } ?? ""), pid > 0 else {
                return .failure(.init(description: "\(path) holds no PID"))
            }
            return Self.exists(pid) ? .success([pid]) : .failure(.init(description: "PID \(pid) from \(path) is not running"))
        case .match:
            let ourselves = getpid()
            let matches = directory.commandLines().filter { candidate in
                candidate.pid != ourselves && regexec(&pattern, candidate.commandLine, 0, nil, 0) == 0
            }.map(\.pid)
            return matches.isEmpty ? .failure(.init(description: "no process matches")) : .success(matches)
        case .unit(let unit):
            return Self.unitProcesses(unit)
        }
    }

    static func exists(_ pid: Int32) -> Bool {
        var status = stat()
        return stat("/proc/\(pid)", &status) == 0
    }

    /// The processes of a unit's control group, asking systemd for the group's path.
    static func unitProcesses(_ unit: String) -> Result<[Int32], DaemonError> {
        guard let group = systemctlShow(unit, property: "ControlGroup") else {
            return .failure(.init(description: "cannot ask systemd about \(unit) (is systemd running?)"))
        }
        guard !group.isEmpty else { return .failure(.init(description: "\(unit) is not running")) }
        for root in ["/sys/fs/cgroup", "/sys/fs/cgroup/unified", "/sys/fs/cgroup/systemd"] {
            guard case .success(let data) = KeptOpenFile.contents(of: root + group + "/cgroup.procs") else { continue }
            let pids = String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { Int32($0) }
            return pids.isEmpty ? .failure(.init(description: "\(unit) has no processes")) : .success(pids)
        }
        return .failure(.init(description: "cannot read the control group of \(unit)"))
    }

    /// `systemctl show -p PROPERTY --value UNIT`; nil when systemctl cannot answer.
    public static func systemctlShow(_ unit: String, property: String) -> String? {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { return nil }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
        var child = pid_t()
        let argv = ["systemctl", "show", "-p", property, "--value", "--", unit]
        let spawned = withCStrings(argv) { arguments in posix_spawnp(&child, "systemctl", &actions, nil, arguments, environ) }
        close(pipeEnds[1])
        defer { close(pipeEnds[0]) }
        guard spawned == 0 else { return nil }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(pipeEnds[0], &buffer, buffer.count)
            if count <= 0 { break }
            output += buffer[0..<count]
        }
        var status: Int32 = 0
        waitpid(child, &status, 0)
        guard status == 0 else { return nil }
        return String(String(decoding: output, as: UTF8.self).trimmingTrailingSpaces.split(separator: "\n").first ?? "")
    }
}
