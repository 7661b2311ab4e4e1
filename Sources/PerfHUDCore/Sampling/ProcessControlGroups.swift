/// One line of `/proc/PID/cgroup`: `ID:CONTROLLERS:PATH` — `0::/system.slice/web.service` for the
/// v2 hierarchy, `4:cpu,cpuacct:/system.slice/web.service` or `1:name=systemd:/…` for v1 ones.
/// The paths are relative to the reader's cgroup namespace. Parsed once here for each reader of
/// the file (the CPU group a child joins, the quota and pressure files, a sender's unit).
public struct ProcessControlGroup {
    public let hierarchyID: Substring
    public let controllers: Substring
    public let path: Substring

    /// The v2 hierarchy's line (`0::PATH`).
    public var isUnified: Bool { hierarchyID == "0" && controllers.isEmpty }

    /// Whether this v1 hierarchy has `controller` (`cpu`, `cpuacct`, `name=systemd`).
    public func has(controller: Substring) -> Bool { controllers.split(separator: ",").contains(controller) }

    /// The lines of the file's text; lines that are not three fields are skipped.
    public static func parse(_ text: String) -> [ProcessControlGroup] {
        text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { return nil }
            return ProcessControlGroup(hierarchyID: fields[0], controllers: fields[1], path: fields[2])
        }
    }
}
