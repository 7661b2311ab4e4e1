#if canImport(Glibc)
import Glibc
#endif

/// Whether the switch `name` is on in the environment: set to anything but empty or `0`
/// (`PERFHUD_NO_WHY=1`, `PERFHUD_NO_CGROUP=1`, `PERFHUD_NO_REALTIME=1`; `=0` leaves it off).
public func environmentFlag(_ name: String) -> Bool {
    guard let value = getenv(name), value.pointee != 0 else { return false }
    return String(cString: value) != "0"
}
