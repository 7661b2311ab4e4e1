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

/// A control-group hierarchy as mounted here, from a line of `/proc/self/mountinfo`
/// (`ID PARENT MAJOR:MINOR ROOT MOUNTPOINT OPTIONS [OPTIONAL…] - FSTYPE SOURCE SUPEROPTIONS`): parsed
/// once here for both of its readers (where `run` makes its group, where a target's quota and
/// pressure files are).
public struct ControlGroupMount {
    /// The hierarchy's path that is mounted (`/` unless a sub-group is, as in a container).
    public let root: String
    public let mountPoint: String
    /// cgroup2; else a v1 hierarchy, whose controllers are its super options.
    public let isUnified: Bool
    let superOptions: String

    /// Whether this v1 hierarchy has `controller` (`cpu`, `cpuacct`).
    public func has(controller: Substring) -> Bool { !isUnified && superOptions.split(separator: ",").contains(controller) }

    /// Where `group` (a path in this hierarchy, as `/proc/PID/cgroup` says it) is seen through this
    /// mount; nil outside its root, or outside our cgroup namespace (a path that reads `/../…`).
    public func directory(of group: String) -> String? {
        guard !group.contains("/.."), group == root || root == "/" || group.hasPrefix(root + "/") else { return nil }
        let inside = root == "/" ? group : String(group.dropFirst(root.count))
        return mountPoint + (inside == "/" ? "" : inside)
    }

    /// The cgroup and cgroup2 mounts of a mount table's text, in its order.
    public static func parse(_ mountInfo: String) -> [ControlGroupMount] {
        // On bytes: fields split on spaces, then at the lone "-" that ends the optional fields. Split
        // as Characters (grapheme by grapheme), and on the string " - " (the regex-backed string
        // algorithms), a table of 21 lines cost 1.5 to 2.3 million instructions (callgrind), paid for
        // every target the daemon starts watching.
        let space = UInt8(ascii: " ")
        return Array(mountInfo.utf8).split(separator: UInt8(ascii: "\n")).compactMap { line in
            let fields = line.split(separator: space)
            guard let dash = fields.firstIndex(where: { $0.count == 1 && $0.first == UInt8(ascii: "-") }),
                  dash >= 5, fields.count >= dash + 4 else { return nil }
            let type = String(decoding: fields[dash + 1], as: UTF8.self)
            guard type == "cgroup2" || type == "cgroup" else { return nil }
            return ControlGroupMount(root: unescaped(fields[3]), mountPoint: unescaped(fields[4]), isUnified: type == "cgroup2",
                                     superOptions: String(decoding: fields[dash + 3], as: UTF8.self))
        }
    }

    /// A mountinfo field with its octal escapes (`\040` for a space) undone.
    static func unescaped(_ field: ArraySlice<UInt8>) -> String {
        guard field.contains(UInt8(ascii: "\\")) else { return String(decoding: field, as: UTF8.self) }
        var bytes: [UInt8] = [], utf8 = Array(field), index = 0
        while index < utf8.count {
            if utf8[index] == UInt8(ascii: "\\"), index + 3 < utf8.count,
               let code = UInt8(String(decoding: utf8[(index + 1)...(index + 3)], as: UTF8.self), radix: 8) {
                bytes.append(code); index += 4
            } else {
                bytes.append(utf8[index]); index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
