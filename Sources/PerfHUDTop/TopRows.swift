import PerfHUDPipeline

/// One scrape of a daemon's `/metrics`, and when it was taken (monotonic nanoseconds).
public struct TopScrape {
    public var samples: [PrometheusSample]
    public var time: UInt64

    public init(samples: [PrometheusSample], time: UInt64) {
        self.samples = samples
        self.time = time
    }
}

/// One row of `perfhud top`: a target of the daemon, as two consecutive scrapes tell it. A
/// figure the daemon does not export (yet), or a rate before the second scrape, is nil: shown as
/// `-`, never as 0.
public struct TopRow: Equatable {
    public var target: String
    public var up = false
    public var pid: Int32?
    public var commandName: String?
    /// The processes the daemon counts in the target (`perfhud_target_processes`).
    public var processes: Double?
    /// The group the target is (`perfhud_target_info{match}` or `{unit}`); nil for one process.
    public var group: Group?
    /// Whether the daemon counts each process with its descendants (`perfhud_target_info{include_children}`).
    public var includesChildren = false
    /// Percent of one core over the daemon's last tick: its `perfhud_target_cpu_ratio` (the JSON row's
    /// `cpu_percent`), as every other figure of the row is the daemon's own, not derived again here.
    public var cpuPercent: Double?
    public var residentBytes: Double?
    /// Bytes per second: the daemon's `perfhud_target_rss_trend_bytes_per_second` (a line fitted
    /// over `--leak-window`) once it has one, else the change between the two scrapes.
    public var residentTrend: Double?
    /// `perfhud_frames_per_second` (absent, so nil and `-`, for a target that sent no frame) and
    /// `perfhud_actions_per_second`: the rows' `fps` and `actions_per_second`.
    public var framesPerSecond: Double?
    public var actionsPerSecond: Double?
    /// The high-frequency action with the highest rate (`perfhud_high_frequency_action_rate`).
    public var hotAction: (label: String, rate: Double)?
    public var phase: String?
    /// The target's share of a GPU (percent) and its device memory; nil where unknown or no GPU.
    public var gpuPercent: Double?
    public var gpuMemoryBytes: Double?
    /// Bytes sent and received a second between the two scrapes (the daemon's counters), its
    /// established TCP connections, and its retransmitted segments a second; nil where unknown.
    public var netTxPerSecond: Double?
    public var netRxPerSecond: Double?
    public var tcpConnections: Double?
    public var tcpRetransmitsPerSecond: Double?

    /// A target that is a group of processes, as the daemon names it: what `perfhud attach --match`,
    /// `--unit` or `--container` opens.
    public enum Group: Equatable {
        case match(String)
        case unit(String)
        case container(String)
        case controlGroup(String)
        case pod(String)
    }

    public init(target: String) { self.target = target }

    public static func == (left: TopRow, right: TopRow) -> Bool {
        left.target == right.target && left.up == right.up && left.pid == right.pid && left.commandName == right.commandName && left.processes == right.processes
            && left.group == right.group && left.includesChildren == right.includesChildren
            && left.cpuPercent == right.cpuPercent && left.residentBytes == right.residentBytes
            && left.residentTrend == right.residentTrend && left.framesPerSecond == right.framesPerSecond
            && left.actionsPerSecond == right.actionsPerSecond && left.hotAction?.label == right.hotAction?.label
            && left.hotAction?.rate == right.hotAction?.rate && left.phase == right.phase
            && left.gpuPercent == right.gpuPercent && left.gpuMemoryBytes == right.gpuMemoryBytes
            && left.netTxPerSecond == right.netTxPerSecond && left.netRxPerSecond == right.netRxPerSecond
            && left.tcpConnections == right.tcpConnections && left.tcpRetransmitsPerSecond == right.tcpRetransmitsPerSecond
    }
}

public enum TopRows {
    /// The rows of `current`, one per `target` label: the daemon's own figures (CPU, FPS and
    /// actions per second are its rows' figures, exported as gauges), and the RSS trend against
    /// `previous` (nil: the first scrape) until the daemon has a fitted one.
    public static func rows(previous: TopScrape?, current: TopScrape) -> [TopRow] {
        let now = Totals(current.samples)
        let before = previous.map { Totals($0.samples) }
        let seconds = previous.map { Double(current.time &- $0.time) / 1e9 } ?? 0
        return now.targets.map { target in
            var row = TopRow(target: target)
            row.up = (now.up[target] ?? 0) == 1
            row.pid = now.info[target]?.pid
            row.commandName = now.info[target]?.comm
            row.group = now.info[target]?.group
            row.includesChildren = now.info[target]?.includesChildren ?? false
            row.processes = row.up ? now.processes[target] : nil
            row.cpuPercent = now.cpuRatio[target].map { $0 * 100 }
            row.residentBytes = row.up ? now.resident[target] : nil
            if row.up {
                if let trend = now.trend[target] { row.residentTrend = trend }
                else if seconds > 0, let was = before?.resident[target], let is_ = now.resident[target] {
                    let change = (is_ - was) / seconds
                    row.residentTrend = change.isFinite ? change : nil
                }
            }
            row.framesPerSecond = now.framesPerSecond[target]
            row.actionsPerSecond = now.actionsPerSecond[target]
            row.hotAction = now.hot[target]
            row.phase = now.phase[target]
            row.gpuPercent = row.up ? now.gpuRatio[target].map { $0 * 100 } : nil
            row.gpuMemoryBytes = row.up ? now.gpuMemory[target] : nil
            if row.up {
                // The counters' increase between the scrapes (a counter that went back: a daemon restarted, no rate).
                func rate(_ counter: KeyPath<Totals, [String: Double]>) -> Double? {
                    guard seconds > 0, let was = before?[keyPath: counter][target], let is_ = now[keyPath: counter][target], is_ >= was else { return nil }
                    return (is_ - was) / seconds
                }
                row.netTxPerSecond = rate(\.sentBytes)
                row.netRxPerSecond = rate(\.receivedBytes)
                row.tcpConnections = now.tcpConnections[target]
                row.tcpRetransmitsPerSecond = rate(\.retransmits)
            }
            return row
        }
    }

    /// `rows` in the order of `sort`: largest first for figures (unknown ones last), by name for
    /// names; ties by name, so the order does not flicker between refreshes.
    public static func sorted(_ rows: [TopRow], by sort: TopSort) -> [TopRow] {
        func figure(_ row: TopRow) -> Double? {
            switch sort {
            case .cpu: return row.cpuPercent
            case .memory: return row.residentBytes
            case .fps: return row.framesPerSecond
            case .actions: return row.actionsPerSecond
            case .name: return nil
            }
        }
        return rows.sorted { left, right in
            if sort != .name {
                let a = figure(left).flatMap { $0.isNaN ? nil : $0 }, b = figure(right).flatMap { $0.isNaN ? nil : $0 }
                if a != b {
                    guard let a else { return false }
                    guard let b else { return true }
                    return a > b
                }
            }
            return left.target.unicodeScalars.lexicographicallyPrecedes(right.target.unicodeScalars)
        }
    }

    /// The daemon's series, summed by target.
    private struct Totals {
        var targets: [String] = []
        var up: [String: Double] = [:]
        var info: [String: (comm: String, pid: Int32?, group: TopRow.Group?, includesChildren: Bool)] = [:]
        var cpuRatio: [String: Double] = [:]
        var resident: [String: Double] = [:]
        var processes: [String: Double] = [:]
        var trend: [String: Double] = [:]
        var framesPerSecond: [String: Double] = [:]
        var actionsPerSecond: [String: Double] = [:]
        var hot: [String: (label: String, rate: Double)] = [:]
        var phase: [String: String] = [:]
        var gpuRatio: [String: Double] = [:]
        var gpuMemory: [String: Double] = [:]
        var sentBytes: [String: Double] = [:]
        var receivedBytes: [String: Double] = [:]
        var tcpConnections: [String: Double] = [:]
        var retransmits: [String: Double] = [:]

        /// The series read, their names looked up once (a scrape has a sample per series per
        /// target, each compared with these).
        private enum Name {
            static let up = TargetSeries.perfhud_target_up.name
            static let info = TargetSeries.perfhud_target_info.name
            static let cpuRatio = Figure.metricName(.cpu_percent)
            static let resident = Figure.metricName(.rss_bytes)
            static let processes = Figure.metricName(.processes)
            static let trend = Figure.metricName(.rss_trend_bytes_per_hour)
            static let framesPerSecond = Figure.metricName(.fps)
            static let actionsPerSecond = Figure.metricName(.actions_per_second)
            static let highFrequencyRate = TargetSeries.perfhud_high_frequency_action_rate.name
            static let gpuRatio = Figure.metricName(.gpu_percent)
            static let gpuMemory = Figure.metricName(.gpu_memory_bytes)
            static let sentBytes = Figure.metricName(.net_tx_bytes_total)
            static let receivedBytes = Figure.metricName(.net_rx_bytes_total)
            static let tcpConnections = Figure.metricName(.tcp_connections)
            static let retransmits = Figure.metricName(.tcp_retransmits_total)
            static let phase = TargetSeries.perfhud_phase_info.name
        }

        /// A Kubernetes pod's row (`namespace` and `pod`, as kube-state-metrics labels them): the pod,
        /// or its container (`--container NAMESPACE/POD/CONTAINER`).
        static func kubernetesGroup(_ labels: [String: String]) -> TopRow.Group? {
            guard let namespace = labels["namespace"], let pod = labels["pod"] else { return nil }
            if labels["pod_uid"] != nil { return .pod(namespace + "/" + pod) }
            return labels["container"].map { .container(namespace + "/" + pod + "/" + $0) }
        }

        init(_ samples: [PrometheusSample]) {
            var seen = Set<String>()
            for sample in samples {
                guard let target = sample.labels["target"] else { continue }
                // A target is one that has `perfhud_target_up`; other series only add to it.
                if sample.name == Name.up, seen.insert(target).inserted { targets.append(target) }
                let value = sample.value
                switch sample.name {
                case Name.up: up[target] = value
                case Name.info:
                    let group = sample.labels["match"].map(TopRow.Group.match) ?? sample.labels["unit"].map(TopRow.Group.unit)
                        ?? Self.kubernetesGroup(sample.labels)
                        ?? sample.labels["container"].map(TopRow.Group.container)
                        ?? sample.labels["cgroup"].map(TopRow.Group.controlGroup)
                    info[target] = (sample.labels["comm"] ?? "", sample.labels["pid"].flatMap { Int32($0) }.flatMap { $0 > 0 ? $0 : nil },
                                    group, sample.labels["include_children"] == "true")
                case Name.cpuRatio: cpuRatio[target] = value.isFinite ? value : nil
                case Name.resident: resident[target] = value
                case Name.processes: processes[target] = value
                case Name.trend: trend[target] = value.isFinite ? value : nil
                case Name.framesPerSecond: framesPerSecond[target] = value.isFinite ? value : nil
                case Name.actionsPerSecond: actionsPerSecond[target] = value.isFinite ? value : nil
                case Name.highFrequencyRate:
                    if let label = sample.labels["action"], value.isFinite, value > (hot[target]?.rate ?? -1) { hot[target] = (label, value) }
                case Name.gpuRatio: gpuRatio[target] = value.isFinite ? value : nil
                case Name.gpuMemory: gpuMemory[target] = value.isFinite ? value : nil
                case Name.sentBytes: sentBytes[target] = value.isFinite ? value : nil
                case Name.receivedBytes: receivedBytes[target] = value.isFinite ? value : nil
                case Name.tcpConnections: tcpConnections[target] = value.isFinite ? value : nil
                case Name.retransmits: retransmits[target] = value.isFinite ? value : nil
                case Name.phase: if let name = sample.labels["phase"], value == 1 { phase[target] = name }
                default: break
                }
            }
        }
    }
}
