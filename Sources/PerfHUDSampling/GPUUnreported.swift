import PerfHUDSupport

/// Why a target's GPU figures are unknown (`gpu_unreported_reason`): a fixed list (`codes`, append
/// only), recorded as `FramesUnreported`'s is.
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
    /// One of NVML's two process lists refused (NVML_ERROR_NO_PERMISSION), the other answered: a
    /// target on the answer has that list's figures, with this reason; one not on it is unknown.
    public static let computeListRefused = "no permission (NVML compute process list): figures from the graphics list alone"
    public static let graphicsListRefused = "no permission (NVML graphics process list): figures from the compute list alone"

    package static let codes = ReasonCodes("gpu", [noDriver, noDevice, notReadYet, stale, mig, noPermission, noPermissionForProcesses, driverNotLoaded,
                                    versionMismatch, lost, otherError, noThread, pidNamespace, computeListRefused, graphicsListRefused])
}
