import PerfHUDSupport
import PerfHUDSampling

/// What the daemon asks inotify to watch for units (`ControlGroupEvents`): the directory where systemd
/// makes each unit's group, and each unit target's `cgroup.events`.
///
/// Kept apart from discovery because it is the kernel's side only (what to watch, what fired);
/// what to do about it is `UnitDiscovery`'s and `TargetDiscovery`'s. Without inotify (nil
/// `ControlGroupEvents`) everything here does nothing and discovery polls.
final class UnitWatch {
    private let unitGroups = UnitControlGroup()
    /// Units starting, stopping and appearing, as they do (nil without inotify: polling only).
    private let groupEvents = ControlGroupEvents()
    /// With the directory of units watched, `--units` looks at it again only this often besides.
    private static let unitsRescanNanoseconds: UInt64 = 30_000_000_000

    /// Where systemd makes a directory for each unit it starts.
    private var unitsDirectory: String { unitGroups.root + "/system.slice" }

    /// What the loop polls for inotify's events (-1 without: poll ignores it).
    var descriptor: Int32 { groupEvents?.descriptor ?? -1 }

    /// How often `--units` reads the directory of units: rarely while inotify reports changes to
    /// it, else every discovery interval.
    func rescanInterval(discoveryNanoseconds: UInt64) -> UInt64 {
        groupEvents?.isWatching(unitsDirectory) == true ? Self.unitsRescanNanoseconds : discoveryNanoseconds
    }

    /// The units under the hierarchy whose names match a `--units` pattern.
    func units(matching pattern: String) -> [String] { unitGroups.units(matching: pattern) }

    /// `--units`: units that appear are seen at once (the directory may not have existed before).
    func watchUnitsDirectory() {
        if groupEvents?.isWatching(unitsDirectory) == false { groupEvents?.watch(unitsDirectory, directory: true) }
    }

    /// A unit target's `cgroup.events` is watched while its group exists, and the directory of
    /// units while any unit is a target: a unit that starts or stops is seen at once.
    func watchGroup(of target: DaemonTarget) {
        guard let groupEvents, case .unit = target.spec.selector else { return }
        if !groupEvents.isWatching(unitsDirectory) { groupEvents.watch(unitsDirectory, directory: true) }
        if let file = target.resolver.unitEventsFile { groupEvents.watch(file, directory: false) }
    }

    /// What inotify reported since the last call (nil without inotify): the files that changed,
    /// whether the kernel dropped events (then everything must be looked at), and whether units
    /// came or went (either of those).
    func drain() -> (changed: Set<String>, overflowed: Bool, unitsCameOrWent: Bool)? {
        guard let groupEvents else { return nil }
        let (changed, overflowed) = groupEvents.drain()
        return (changed, overflowed, overflowed || changed.contains(unitsDirectory))
    }
}
