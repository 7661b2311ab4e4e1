import PerfHUDSupport
import PerfHUDEvents
import PerfHUDOutput
#if canImport(Glibc)
import Glibc
#endif

/// The targets' event sockets: where each is made, the names it is linked under, and which
/// processes may send to it.
///
/// A target may run as another user: each socket is open to all, and the credential check
/// (default: the target and its descendants; never another target's processes) decides who may
/// send. So each socket must learn its target's processes, and the other targets', as they change.
final class EventSockets {
    private let configuration: DaemonConfiguration
    private let roster: TargetRoster
    private let status: StatusReporter
    /// One receiving thread for the event sockets of several targets (a single target keeps the
    /// receiver's own thread, as before issue 21).
    private let receivers = EventReceiverPool()

    init(configuration: DaemonConfiguration, roster: TargetRoster, status: StatusReporter) {
        self.configuration = configuration
        self.roster = roster
        self.status = status
    }

    private var single: Bool { configuration.isSingleTarget }

    /// Opens every target's socket (before READY=1).
    /// - Throws: `PerfHUDError` `.cannotCreate` (73) when a socket cannot be had at the start.
    func openAll() throws {
        for target in roster.targets { try open(target, required: true) }
    }

    /// Removes the sockets again and ends the receiving thread (when the daemon cannot start after all).
    func closeAll() {
        for target in roster.targets { target.events.stop(); target.feed = nil }
        receivers.stop()
    }

    /// Ends the receiving thread and removes the feeds (the daemon stops).
    func stopReceiving() {
        for target in roster.targets { target.feed = nil }
        receivers.stop()
    }

    /// Where the sockets of several targets go: `--events DIR`, else systemd's RuntimeDirectory,
    /// else /run/perfhud for root, else the private default directory (`$XDG_RUNTIME_DIR/perfhud`).
    var directory: (path: String, isDefault: Bool)? {
        if let chosen = configuration.eventsDirectory {
            // Made where it is missing (its parent must be there), as /run/perfhud is: a pattern's
            // targets come later, each of which would otherwise go without its socket.
            _ = mkdir(chosen, 0o755)
            return (chosen, false)
        }
        if geteuid() == 0 {
            if mkdir("/run/perfhud", 0o755) != 0 && errno != EEXIST { return nil }
            return ("/run/perfhud", false)
        }
        guard let (path, _) = try? EventReceiver.defaultPath(pid: 0), let slash = path.lastIndex(of: "/") else { return nil }
        return (String(path[..<slash]), true)
    }

    /// Opens one target's socket.
    /// - Parameter required: at the start a socket that cannot be had stops the daemon; a target
    ///   added later (reload, `--units`) goes on with CPU and memory only.
    func open(_ target: DaemonTarget, required: Bool) throws {
        let log = status.log
        if single {
            try target.events.open(pathPID: getpid(), targetPID: 0, configuration: configuration.watch, defaultPolicy: .target, mode: 0o666,
                                   required: true) { [log] in log.warning($0) }
            if let path = target.events.receiver?.path, let slash = path.lastIndex(of: "/") {
                if configuration.watch.eventsPath == nil { target.linkDirectory = String(path[..<slash]) }
                makeFeed(of: target, in: String(path[..<slash]))
            }
            return
        }
        guard let directory else {
            if required { throw PerfHUDError(.cannotCreate, "no directory for the event sockets (give one with --events DIR)") }
            return
        }
        var watch = configuration.watch
        watch.eventsPath = directory.path + "/" + Self.fileName(target.label) + ".sock"
        watch.statsdUDP = nil
        do {
            try target.events.open(pathPID: getpid(), targetPID: 0, configuration: watch, defaultPolicy: .target, mode: 0o666,
                                   required: true, pool: receivers) { [log] in log.warning($0) }
        } catch let error as PerfHUDError {
            if required { throw error }
            status.log(.warning, target, "no event socket (\(error.message)); CPU and memory only")
            return
        }
        if directory.isDefault { target.linkDirectory = directory.path }
        makeFeed(of: target, in: directory.path)
        if let legacy = configuration.legacyEventsLink, target.spec == configuration.targets.first { target.fixedLinks.append(legacy) }
        // A unit's processes find the socket by their unit's name, whatever the target's label.
        if case .unit(let unit) = target.spec.selector, Self.fileName(unit) != Self.fileName(target.label) {
            target.fixedLinks.append(directory.path + "/" + Self.fileName(unit) + ".sock")
        }
        target.events.receiver?.setLinks(target.fixedLinks)
    }

    /// The target's rows beside its socket (`NAME.feed`), for any program that follows them (as
    /// `perfhud run --feed`'s) and for `perfhud status --target NAME`.
    private func makeFeed(of target: DaemonTarget, in directory: String) {
        do { target.feed = try RowFeed(path: directory + "/" + Self.fileName(target.label) + ".feed") }
        catch let error as PerfHUDError { status.log(.warning, target, "no feed of its rows (\(error.message))") }
        catch { status.log(.warning, target, "no feed of its rows (\(error))") }
    }

    /// A label as a file name (`EventReceiver.fileName`).
    static func fileName(_ label: String) -> String { EventReceiver.fileName(label: label) }

    /// A target's processes changed: who may send to its socket, the `PID.sock` links, and whose
    /// memory a phase reads (the moment its event arrives, from the group's first process).
    func follow(_ target: DaemonTarget) {
        let pids = target.group.pids
        target.events.receiver?.setTargets(pids)
        target.events.receiver?.setLinks((target.linkDirectory.map { directory in pids.map { "\(directory)/\($0).sock" } } ?? []) + target.fixedLinks)
        if let first = pids.first { target.events.measurePhasesOf(pid: first) }
    }

    /// Each socket refuses the other targets' processes (`other_target`): by control group, and
    /// with several targets by PID too.
    func shareTargets() {
        let targets = roster.targets
        let groups = targets.map { $0.resolver.unitGroupPath }
        for (index, target) in targets.enumerated() {
            let others = groups.enumerated().compactMap { other, group in other == index ? nil : group }
            target.events.receiver?.setControlGroups(target: groups[index], others: others)
        }
        guard targets.count > 1 else { return }
        // One set for every socket (its storage shared, not copied): a list of the others per
        // target was n² PIDs (423 KiB of a daemon watching 200, measured with heaptrack).
        let every = Set(targets.lazy.flatMap { $0.group.pids })
        for target in targets { target.events.receiver?.setDaemonTargets(every) }
    }
}
