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
    /// The preloaded hook timing SDL's presents (`SDL_GL_SwapWindow`, `SDL_RenderPresent`,
    /// `SDL_UpdateWindowSurface`): 2D SDL games and pygame. Last in the list: a recording keeps a
    /// source as its index here.
    case sdl

    package var rank: Int {
        switch self {
        case .events: return 3
        case .gl, .vulkan, .sdl: return 2
        case .tty: return 1
        }
    }

    /// The `source:` tag of a frame line (`#source:gl`); anything else is the program's own.
    package init(tag: UnsafeRawBufferPointer?) {
        // Compared as bytes: no String per frame line.
        guard let tag else { self = .events; return }
        if tag.elementsEqual("gl".utf8) { self = .gl }
        else if tag.elementsEqual("vulkan".utf8) { self = .vulkan }
        else if tag.elementsEqual("sdl".utf8) { self = .sdl }
        else { self = .events }
    }
}
