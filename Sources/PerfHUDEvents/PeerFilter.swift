import CSystemShims
#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport
import PerfHUDSampling

/// Who may send events.
public enum AcceptPolicy: String, CaseIterable {
    /// Anyone who can reach the socket (its mode still limits that to the owner).
    case any
    /// Processes of the same user.
    case sameUser = "same-user"
    /// The target and its descendants only.
    case target
}

/// Why a datagram is refused; its `reason` label in `events_rejected_by_reason`. A byte rather
/// than the label: a batch's verdicts are kept in a buffer on the stack.
enum Refusal: UInt8 {
    case none, truncated, noCredentials, peer, otherTarget

    package var reason: String? {
        switch self {
        case .none: return nil
        case .truncated: return "truncated"
        case .noCredentials: return "no_credentials"
        case .peer: return "peer"
        case .otherTarget: return "other_target"
        }
    }
}

/// Decides whether a sender may send: by user id, or by being the target or its descendant
/// (walking the parent chain in /proc). Decisions are cached for a second per PID.
final class PeerFilter {
    private let policy: AcceptPolicy?
    private var mutex = pthread_mutex_t()
    private var targetPIDs: Set<Int32>
    /// Every one of the daemon's targets' processes, this target's among them (`family(of:)` asks
    /// whether a process is this target's first): one set shared by every target's filter.
    private var daemonTargetPIDs: Set<Int32> = []
    /// Units' control groups (paths as /proc/PID/cgroup shows them): the target's, the others'.
    private var targetGroup: String?
    private var otherGroups: [String] = []
    private var cache: [Int32: (family: Family, at: UInt64)] = [:]
    /// Whose family a sender belongs to: the nearest watched ancestor (itself included) decides.
    enum Family { case target, otherTarget, none }
    private let ourUID = geteuid()

    package init(policy: AcceptPolicy?, targetPID: Int32) {
        self.policy = policy
        targetPIDs = [targetPID]
        pthread_mutex_init(&mutex, nil)
    }

    package func setTarget(pid: Int32) { setTargets([pid]) }

    package func setTargets(_ pids: [Int32]) {
        pthread_mutex_lock(&mutex)
        targetPIDs = Set(pids)
        cache.removeAll()
        pthread_mutex_unlock(&mutex)
    }

    package func setDaemonTargets(_ pids: Set<Int32>) {
        pthread_mutex_lock(&mutex)
        daemonTargetPIDs = pids
        cache.removeAll()
        pthread_mutex_unlock(&mutex)
    }

    package func setControlGroups(target: String?, others: [String]) {
        pthread_mutex_lock(&mutex)
        targetGroup = target
        otherGroups = others
        cache.removeAll()
        pthread_mutex_unlock(&mutex)
    }

    /// Why a datagram from `pid` is refused, or `.none` when it is accepted.
    func refusal(pid: Int32, uid: UInt32) -> Refusal {
        let family = self.family(of: pid)
        if family == .otherTarget { return .otherTarget }
        let allowed: Bool
        switch policy {
        case .any: allowed = true
        case .sameUser: allowed = uid == ourUID
        case .target: allowed = family == .target
        case nil: allowed = uid == ourUID || family == .target
        }
        return allowed ? .none : .peer
    }

    private func family(of pid: Int32) -> Family {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        let now = monotonicNanoseconds()
        if let cached = cache[pid], now &- cached.at < 1_000_000_000 { return cached.family }
        var current = pid
        var family = Family.none
        for _ in 0..<64 {
            if targetPIDs.contains(current) { family = .target; break }
            if daemonTargetPIDs.contains(current) { family = .otherTarget; break }   // not this target's: another's
            guard current > 1, let parent = Self.parent(of: current) else { break }
            current = parent
        }
        if family == .none && (targetGroup != nil || !otherGroups.isEmpty), let groups = Self.controlGroups(of: pid) {
            if let targetGroup, groups.contains(where: { Self.isWithin($0, targetGroup) }) {
                family = .target
            } else if groups.contains(where: { group in otherGroups.contains { Self.isWithin(group, $0) } }) {
                family = .otherTarget
            }
        }
        if cache.count > 1024 { cache.removeAll() }
        cache[pid] = (family, now)
        return family
    }

    package static func parent(of pid: Int32) -> Int32? {
        ProcParser.stat(ofProcess: String(pid))?.parentPID
    }

    /// The control groups of a process, one per hierarchy (`0::/system.slice/web.service`, and
    /// `1:name=systemd:/system.slice/web.service` on v1 and hybrid hosts).
    package static func controlGroups(of pid: Int32) -> [Substring]? {
        guard case .success(let data) = KeptOpenFile.contents(of: "/proc/\(pid)/cgroup", limit: 16384) else { return nil }
        return ProcessControlGroup.parse(String(decoding: data, as: UTF8.self)).map(\.path)
    }

    static func isWithin(_ group: Substring, _ unit: String) -> Bool {
        group == unit || (group.hasPrefix(unit) && group.dropFirst(unit.count).first == "/")
    }
}
