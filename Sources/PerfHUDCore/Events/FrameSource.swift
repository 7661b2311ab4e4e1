/// Where frame durations come from. One source is shown at a time: the highest-ranked one seen.
/// The program's own events win (it knows what a frame is); then a present hook; then its
/// terminal output, the guess of last resort.
public enum FrameSource: String, CaseIterable, Sendable {
    /// `perfhud.frame` lines the program sends itself (client library, StatsD).
    case events
    /// The preloaded OpenGL/EGL hook timing `glXSwapBuffers` / `eglSwapBuffers`.
    case gl
    /// The Vulkan layer timing `vkQueuePresentKHR`.
    case vulkan
    /// Synchronized updates (or output bursts) of a terminal program.
    case tty

    var rank: Int {
        switch self {
        case .events: return 3
        case .gl, .vulkan: return 2
        case .tty: return 1
        }
    }

    /// The `source:` tag of a frame line (`#source:gl`); anything else is the program's own.
    init(tag: UnsafeRawBufferPointer?) {
        // Compared as bytes: no String per frame line.
        guard let tag else { self = .events; return }
        if tag.elementsEqual("gl".utf8) { self = .gl }
        else if tag.elementsEqual("vulkan".utf8) { self = .vulkan }
        else { self = .events }
    }
}
