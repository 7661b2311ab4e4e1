#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport
import PerfHUDOutput

/// The OpenGL/EGL hook (a preloaded library) and the Vulkan layer that time an unmodified
/// program's presents and send them to `PERFHUD_SOCKET` as `perfhud.frame:…|ms|#source:gl`
/// (Sources/FrameHooks). Found beside the perfhud executable (a build: `.build/release/`) or in
/// `../lib/perfhud/` from it (the package: /usr/bin → /usr/lib/perfhud).
enum FrameHooks {
    static let glLibrary = "libperfhud-gl.so"
    static let vulkanManifest = "perfhud_vulkan_layer.json"

    /// The directory holding the hooks, or nil.
    package static func directory() -> String? {
        guard let executable = SystemCall.readLink("/proc/self/exe") else { return nil }
        let here = executable.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        for candidate in [here, here + "/../lib/perfhud"] where access(candidate + "/" + glLibrary, R_OK) == 0 {
            return candidate
        }
        return nil
    }

    /// The variables that load the hooks `mode` asks for into the program (and its children):
    /// LD_PRELOAD gains the GL hook (what the user preloads stays, after it); the Vulkan layer is
    /// added to the loader's layer path and enabled for this program only.
    static func environment(for mode: FrameMode, warn: (String) -> Void) -> [String: String] {
        guard mode.injectsGL || mode.injectsVulkan else { return [:] }
        guard let directory = directory() else {
            if mode != .auto { warn("the frame hooks are not installed beside perfhud; frames from the terminal and events only") }
            return [:]
        }
        var environment: [String: String] = [:]
        if mode.injectsGL { environment["LD_PRELOAD"] = appending(directory + "/" + glLibrary, to: "LD_PRELOAD") }
        if mode.injectsVulkan, access(directory + "/" + vulkanManifest, R_OK) == 0 {
            // Debian 12's loader (1.3.239) reads no implicit-layer path from the environment, and a
            // layer found through VK_ADD_LAYER_PATH is explicit: it is also named in
            // VK_INSTANCE_LAYERS (VK_LAYER_PATH would replace the user's own layer paths). Newer
            // loaders take VK_ADD_IMPLICIT_LAYER_PATH, where PERFHUD_VULKAN=1 enables it.
            for variable in ["VK_ADD_LAYER_PATH", "VK_ADD_IMPLICIT_LAYER_PATH"] { environment[variable] = appending(directory, to: variable) }
            environment["VK_INSTANCE_LAYERS"] = appending(vulkanLayerName, to: "VK_INSTANCE_LAYERS")
            environment["PERFHUD_VULKAN"] = "1"
        }
        return environment
    }

    static let vulkanLayerName = "VK_LAYER_PERFHUD_frames"

    /// `value`, then what the user's `variable` already holds (`:`-separated): theirs stays.
    private static func appending(_ value: String, to variable: String) -> String {
        let existing = getenv(variable).map { String(cString: $0) } ?? ""
        return existing.isEmpty ? value : value + ":" + existing
    }
}
