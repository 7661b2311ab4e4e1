#if canImport(Glibc)
import Glibc
#endif

/// The OpenGL/EGL hook (a preloaded library) and the Vulkan layer that time an unmodified
/// program's presents and send them to `PERFHUD_SOCKET` as `perfhud.frame:…|ms|#source:gl`
/// (Sources/FrameHooks). Found beside the perfhud executable (a build: `.build/release/`) or in
/// `../lib/perfhud/` from it (the package: /usr/bin → /usr/lib/perfhud).
enum FrameHooks {
    static let glLibrary = "libperfhud-gl.so"
    static let vulkanManifest = "perfhud_vulkan_layer.json"

    /// The directory holding the hooks, or nil.
    static func directory() -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        let executable = String(cString: buffer)
        let here = executable.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        for candidate in [here, here + "/../lib/perfhud"] where access(candidate + "/" + glLibrary, R_OK) == 0 {
            return candidate
        }
        return nil
    }

    /// The variables that load the hooks `mode` asks for into the program (and its children):
    /// LD_PRELOAD gains the GL hook (what the user preloads stays, after it); the Vulkan layer is
    /// implicit, found through the loader's layer path and enabled by PERFHUD_VULKAN=1 only.
    static func environment(for mode: FrameMode, warn: (String) -> Void) -> [String: String] {
        guard mode.injectsGL || mode.injectsVulkan else { return [:] }
        guard let directory = directory() else {
            if mode != .auto { warn("the frame hooks are not installed beside perfhud; frames from the terminal and events only") }
            return [:]
        }
        var environment: [String: String] = [:]
        if mode.injectsGL {
            let existing = getenv("LD_PRELOAD").map { String(cString: $0) } ?? ""
            environment["LD_PRELOAD"] = directory + "/" + glLibrary + (existing.isEmpty ? "" : ":" + existing)
        }
        if mode.injectsVulkan, access(directory + "/" + vulkanManifest, R_OK) == 0 {
            for variable in vulkanLayerPathVariables {
                let existing = getenv(variable).map { String(cString: $0) } ?? ""
                environment[variable] = directory + (existing.isEmpty ? "" : ":" + existing)
            }
            environment["PERFHUD_VULKAN"] = "1"
        }
        return environment
    }

    /// Where the Vulkan loader looks for extra implicit layers.
    static let vulkanLayerPathVariables = ["VK_ADD_IMPLICIT_LAYER_PATH"]
}
