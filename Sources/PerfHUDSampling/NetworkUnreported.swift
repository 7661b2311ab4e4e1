import PerfHUDSupport

/// Where a target's network bytes come from (`net_source`): recorded as a code.
public enum NetworkSource {
    /// The target's TCP sockets (sock_diag): TCP payload bytes; UDP not counted.
    public static let tcp = "tcp"
    /// The interfaces of the target's own network namespace (`/proc/PID/net/dev`): every protocol, headers included.
    public static let netns = "netns"
    /// systemd's IP accounting of the target's unit (`IPAccounting=yes`, the daemon's `--unit`): every protocol.
    public static let unit = "unit"
    package static let codes = ReasonCodes("net_source", [tcp, netns, unit])
}

/// Why a target's network figures are unknown or incomplete (`net_unreported_reason`): a fixed list
/// (`codes`, append only), recorded as `GPUUnreported`'s is.
public enum NetworkUnreported {
    public static let notReadYet = "network not read yet"
    public static let stale = "stale: the network was not read for over 3 s"
    public static let udpNotCounted = "UDP not counted: the kernel keeps no bytes per UDP socket"
    public static let noPermission = "no permission to read the target's sockets (/proc/PID/fd)"
    public static let namespaceNotEntered = "the target's network namespace may not be entered: its TCP sockets are not read"
    public static let sockDiagFailed = "the kernel's socket list (sock_diag) could not be read"
    public static let noThread = "network not read: no thread for it"
    public static let unitNotAccounted = "the unit's IP accounting is off (IPAccounting=no): its TCP is counted, not its UDP"

    /// D-Bus refused or absent: dbus-daemon refuses a DynamicUser= service (systemd#22737), as the
    /// packaged units are; docs/network.md says how to give perfhud.service a user of its own.
    public static let unitNotRead = "the unit's IP accounting could not be read over D-Bus: its TCP is counted, not its UDP"

    /// A connection of the target's user closed that no pass saw open and none of its listening
    /// ports accepted: maybe the target's own, opened and closed within a second (a client without
    /// keep-alive); the kernel's destroy events name no process, so its bytes are not counted.
    public static let shortConnectionsNotCounted = "connections opened and closed between two passes (under a second) by the target's user are not counted: the kernel's socket events name no process"

    package static let codes = ReasonCodes("net", [notReadYet, stale, udpNotCounted, noPermission, namespaceNotEntered, sockDiagFailed, noThread,
                                    unitNotAccounted, unitNotRead, shortConnectionsNotCounted])
}
