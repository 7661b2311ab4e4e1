/// Why a target's GPU figures are unknown (`gpu_unreported_reason`): a fixed list, so a recording
/// keeps a reason as its place here + 1 (append only), as `FramesUnreported` does.
public enum GPUUnreported {
    public static let noDriver = "no GPU driver"
    public static let noDevice = "no GPU found"
    public static let notReadYet = "GPU not read yet"
    public static let stale = "stale: the GPU driver has not answered for over 3 s"
    public static let mig = "MIG: per-process use not reported"
    public static let noPermission = "no permission (NVML)"
    public static let noPermissionForProcesses = "no permission (NVML process list)"
    public static let driverNotLoaded = "no GPU driver (NVML: the NVIDIA driver is not loaded)"
    public static let versionMismatch = "NVML library and NVIDIA driver versions differ"
    public static let lost = "GPU is lost (NVML)"
    public static let otherError = "NVML error"
    public static let noThread = "GPU not read: no thread for it"
    public static let pidNamespace = "perfhud runs in a PID namespace: NVML's host PIDs cannot be matched"

    static let all = [noDriver, noDevice, notReadYet, stale, mig, noPermission, noPermissionForProcesses, driverNotLoaded,
                      versionMismatch, lost, otherError, noThread, pidNamespace]

    /// The recorded code of `reason` (nil: none, or one this version does not know).
    static func code(_ reason: String?) -> Double? {
        reason.flatMap { all.firstIndex(of: $0) }.map { Double($0 + 1) }
    }

    /// The reason of a recorded code.
    static func reason(code: Double?) -> String? {
        guard let code, code >= 1, code <= Double(all.count) else { return nil }
        return all[Int(code) - 1]
    }
}
