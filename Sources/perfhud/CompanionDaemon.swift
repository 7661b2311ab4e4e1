import PerfHUDSupport
import PerfHUDSampling
#if canImport(Glibc)
import Glibc
#endif

/// `perfhud top --containers`: a daemon of top's own, watching every running container and pod of
/// the host (`--containers '*' --pods '*'`) on a free loopback port for as long as the table runs,
/// so that a quick look needs no daemon configured. The same daemon as `perfhud daemon` (the same
/// figures, the same names), a child process: it ends when top ends, also when top is killed (it
/// watches its parent: `DaemonService`'s `PERFHUD_EXIT_WITH_PARENT`).
struct CompanionDaemon {
    let pid: pid_t
    let port: Int
    private let directory: String

    /// Starts it and waits until it answers on its port (10 s at most).
    /// - Throws: `PerfHUDError` `.unavailable` with the daemon's own first error line where it
    ///   could not start (not root, no cgroup file system), or why it could not be started.
    static func start(executable: String) throws -> CompanionDaemon {
        var template = Array("/tmp/perfhud-top-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw PerfHUDError(.cannotCreate, "cannot make a directory in /tmp for the daemon's sockets") }
        let directory = String(cString: made)
        _ = mkdir(directory + "/events", 0o755)
        let port = try freePort()
        let log = directory + "/daemon.log"
        let command = [executable, "daemon", "--containers", "*", "--pods", "*", "--listen", "127.0.0.1:\(port)",
                       "--events", directory + "/events", "--tick", "1s", "--log-interval", "1h"]
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var environment = [String]()
        var entry = environ
        while let pointer = entry.pointee { environment.append(String(cString: pointer)); entry += 1 }
        environment.append("PERFHUD_EXIT_WITH_PARENT=\(getpid())")
        var child: pid_t = 0
        let result = withCStrings(command) { arguments in
            withCStrings(environment) { variables in
                var arguments = arguments, variables = variables
                return posix_spawn(&child, executable, &actions, nil, &arguments, &variables)
            }
        }
        guard result == 0 else { throw PerfHUDError(.unavailable, "cannot start a daemon for --containers: \(String(cString: strerror(result)))") }
        let companion = CompanionDaemon(pid: child, port: port, directory: directory)
        let deadline = monotonicNanoseconds() &+ 10_000_000_000
        while monotonicNanoseconds() < deadline {
            if companion.answers() { return companion }
            var status: Int32 = 0
            if waitpid(child, &status, WNOHANG) == child {
                let said = (try? KeptOpenFile.contents(of: log, limit: 4096).get()).map { String(decoding: $0, as: UTF8.self) } ?? ""
                let first = said.split(separator: "\n").first { $0.contains("error") || $0.hasPrefix("perfhud: ") && !$0.contains("notice") }
                companion.removeDirectory()
                throw PerfHUDError(.unavailable, "the daemon for --containers could not start: " + (first.map { String($0.dropFirst("perfhud: ".count)) } ?? "status \(status)"))
            }
            usleep(50_000)
        }
        companion.stop()
        throw PerfHUDError(.unavailable, "the daemon for --containers did not answer on 127.0.0.1:\(port) within 10 s")
    }

    /// A port no one listens on now (the kernel's choice for a socket bound to port 0).
    private static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw PerfHUDError(.unavailable, "cannot make a socket: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard bound else { throw PerfHUDError(.unavailable, "cannot find a free port on 127.0.0.1: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether its port accepts a connection.
    private func answers() -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// Stops it (SIGTERM: it ends after one last tick) and removes its directory.
    func stop() {
        kill(pid, SIGTERM)
        var status: Int32 = 0, reaped = false
        for _ in 0..<100 {
            if waitpid(pid, &status, WNOHANG) == pid { reaped = true; break }
            usleep(20_000)
        }
        if !reaped {
            kill(pid, SIGKILL)
            _ = waitpid(pid, &status, 0)
        }
        removeDirectory()
    }

    private func removeDirectory() {
        let events = directory + "/events"
        forEachEntry(in: events) { _, name in _ = unlink(events + "/" + name) }
        _ = rmdir(events)
        _ = unlink(directory + "/daemon.log")
        _ = rmdir(directory)
    }
}
