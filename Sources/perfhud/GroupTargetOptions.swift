import ArgumentParser
import PerfHUDSampling

/// The options that name a group of processes as one target (`--match`, `--unit`, `--container`,
/// `--cgroup`, `--pod`), as the daemon's do: declared once for `attach` and `status`.
struct GroupTargetOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: ArgumentHelp("Every process whose command line matches this extended regular expression, summed (as the daemon's --match).",
                                                        valueName: "PATTERN"))
    var match: Given<String>?
    @Option(parsing: .unconditional, help: ArgumentHelp("The processes of this systemd unit, summed (as the daemon's --unit).", valueName: "UNIT"))
    var unit: Given<String>?
    @Option(parsing: .unconditional, help: ArgumentHelp("The processes of this container (Docker, podman), by its name or ID, summed (as the daemon's --container).",
                                                        valueName: "NAME|ID"))
    var container: Given<String>?
    @Option(parsing: .unconditional, help: ArgumentHelp("The processes of this control group (its path below the hierarchy's root, or its directory under /sys/fs/cgroup), summed (as the daemon's --cgroup).",
                                                        valueName: "PATH"))
    var cgroup: Given<String>?
    @Option(parsing: .unconditional, help: ArgumentHelp("The processes of this Kubernetes pod on this node (all its containers), summed (as the daemon's --pod).",
                                                        valueName: "NAMESPACE/POD"))
    var pod: Given<String>?

    /// The group named, nil where none is; a refusal for a value that does not read, or for two.
    /// - Parameter command: `attach`, `status`: the command the messages name.
    func selector(in command: String) throws -> TargetSelector? {
        let group = try match.map { TargetSelector.match(try $0.value("--match", in: command) { !$0.isEmpty }) }
            ?? unit.map { TargetSelector.unit(named: try $0.value("--unit", in: command) { !$0.isEmpty }) }
            ?? container.map { TargetSelector.container(try $0.value("--container", in: command) { !$0.isEmpty }) }
            ?? cgroup.map { TargetSelector.controlGroup(given: try $0.value("--cgroup", in: command) { !$0.isEmpty }) }
            ?? pod.map { TargetSelector.pod(try $0.value("--pod", in: command) { $0.split(separator: "/", omittingEmptySubsequences: false).count == 2 }) }
        if [match != nil, unit != nil, container != nil, cgroup != nil, pod != nil].filter({ $0 }).count > 1 {
            throw Refusal.because("\(command) watches one target: one of --match, --unit, --container, --cgroup and --pod")
        }
        return group
    }
}
