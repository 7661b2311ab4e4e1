import PerfHUDSupport
import PerfHUDSampling
import PerfHUDPipeline

/// What a session reads its target through: one process (`ProcessSampler`), or a group of them
/// (`AttachedGroup`: `attach --match`, `attach --unit`).
protocol WatchedProcesses: SampleSource {
    /// The process the session names (a group's root: the member the others descend from, or the
    /// lowest PID), for the event socket's path, the recording and the HUD's title.
    var pid: Int32 { get }
    /// Readable when the target has ended; -1 where that is seen by sampling (a group).
    var exitDescriptor: Int32 { get }
    var execsSeen: Int { get }
    var commandLine: String? { get }
    var isKernelThread: Bool { get }
    /// Whether the "why" figures are read (`d`, the recording).
    var collectsActivity: Bool { get set }
    /// How the end notice names the target: `PID 7`, `processes matching /nginx/`.
    var named: String { get }
}

extension ProcessSampler: WatchedProcesses {
    var named: String { "PID \(pid)" }
}

/// `attach --match PATTERN` and `attach --unit UNIT`: the group the daemon would watch for the
/// same selector, with the same resolver and the same sums (`TargetResolver`, `TargetGroup`), so
/// that `perfhud top`'s Enter opens a HUD that counts what the daemon's row counts. Its members
/// are looked for again once a second (a process that starts joins, one that ends leaves, its CPU
/// time kept in the totals); the session ends when the last one has ended.
final class AttachedGroup: WatchedProcesses {
    let selector: TargetSelector
    private let resolver: TargetResolver
    private let group: TargetGroup
    private let directory: ProcessDirectory
    private let includeChildren: Bool
    private var lookedAt: UInt64 = 0
    /// Notes of members that could not be opened (a PID perfhud may not read), said once each.
    private var notes: [String] = []
    private var said: Set<String> = []
    private(set) var pid: Int32 = 0
    let exitDescriptor: Int32 = -1
    var execsSeen: Int { group.rootPID.flatMap { group.samplers[$0]?.execsSeen } ?? 0 }
    var commandLine: String? { group.rootPID.flatMap { group.samplers[$0]?.commandLine } }
    let isKernelThread = false
    var collectsActivity = true {
        didSet { for sampler in group.samplers.values { sampler.collectsActivity = collectsActivity } }
    }
    var named: String { selector.description }
    var currentCommandName: String? { group.isEmpty ? nil : group.commandName }
    /// The members now: `PIDs 1, 2, 3`.
    var listing: String { TargetGroup.listing(group.pids) }

    /// - Throws: `PerfHUDError` `.noInput` when nothing matches now (`no process matches /x/`,
    ///   `web.service is not running`) or no member can be read; `.usage` for a bad pattern.
    init(selector: TargetSelector, includeChildren: Bool, directory: ProcessDirectory) throws {
        self.selector = selector
        self.includeChildren = includeChildren
        self.directory = directory
        resolver = try TargetResolver(selector: selector, directory: directory)
        group = TargetGroup(includeChildren: includeChildren, isGroup: true)
        var firstFailure: Error?
        switch resolver.resolve() {
        case .success(let pids): take(pids) { firstFailure = firstFailure ?? $0 }
        case .failure(let why):
            if case .match(let pattern) = selector { throw PerfHUDError(.noInput, "no process matches /\(TerminalText.escaped(pattern))/") }
            throw why
        }
        guard let root = group.rootPID ?? group.pids.first else {
            throw firstFailure ?? PerfHUDError(.noInput, "no process of \(selector.description) can be read")
        }
        pid = root
        lookedAt = monotonicNanoseconds()
    }

    func takeSample() -> Sample? {
        let now = monotonicNanoseconds()
        if now &- lookedAt >= 1_000_000_000, !group.isEmpty {
            lookedAt = now
            if case .success(let pids) = resolver.resolve() { take(pids) { _ in } }
        }
        return group.takeSample() ?? group.endSample()
    }

    func takeNotes() -> [String] {
        defer { notes.removeAll() }
        return notes + group.takeNotes()
    }

    private func take(_ pids: [Int32], failed: (Error) -> Void) {
        _ = group.take(found: pids, wholeGroup: resolver.wholeGroupPath, retiresMissing: true, directory: directory, open: { pid in
            let sampler = try ProcessSampler(pid: pid, includeChildren: includeChildren, directory: directory)
            sampler.gpu = GPUWatch()
            let net = NetworkWatch()
            net.waitsAtEnd = false     // a member's end does not hold the tick
            sampler.net = net
            sampler.collectsActivity = collectsActivity
            return sampler
        }, failed: { error in
            failed(error)
            let message = (error as? PerfHUDError)?.message ?? "\(error)"
            if said.insert(message).inserted { notes.append(message + ": left out of the group's figures") }
        })
    }
}
