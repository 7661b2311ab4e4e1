import PerfHUDSupport

/// Why a program `run` launched has no frame figure, said in the HUD (`frames not reported (…)`)
/// and in the JSON row (`frames_unreported_reason`) instead of a bare absence — or, worse, an
/// `FPS 0` of a program drawing 60 (issue 18). Given only where perfhud could have seen frames:
/// not for `attach` (nothing can be injected) nor `--frames events|none`.
public enum FramesUnreported {
    /// The hooks saw OpenGL/EGL loaded (linked, dlopened and looked up) and no swap.
    public static let glWithoutPresent = "GL loaded, no present seen"
    /// The Vulkan layer saw an instance created and no vkQueuePresentKHR.
    public static let vulkanWithoutPresent = "Vulkan loaded, no present seen"
    /// A terminal program has drawn its screen but never twice within a second: each redraw comes
    /// after an idle pause, which starts the clock again rather than making a frame.
    public static let terminalIdle = "terminal idle (redraws less than once a second)"
    /// Nothing of the sources perfhud watches.
    public static let nothingDrawn = "no GL/Vulkan/SDL/terminal drawing"
    public static let noTerminalDrawing = "no terminal drawing"

    /// Every reason, as a recording keeps them (append only).
    package static let codes = ReasonCodes("frames", [glWithoutPresent, vulkanWithoutPresent, terminalIdle, nothingDrawn, noTerminalDrawing])

    /// - Parameters:
    ///   - presentHooks: the GL/SDL hook or the Vulkan layer was given to the program.
    ///   - readsTerminal: its terminal output is read for frames.
    ///   - terminalDrawn: it has drawn as a terminal program does (`TerminalFrames.drawsScreen`).
    package static func reason(_ events: EventSnapshot, presentHooks: Bool, readsTerminal: Bool, terminalDrawn: Bool) -> String? {
        guard !events.hasFrames else { return nil }
        if terminalDrawn { return terminalIdle }
        if presentHooks && events.glLoaded { return glWithoutPresent }
        if presentHooks && events.vulkanLoaded { return vulkanWithoutPresent }
        if presentHooks { return nothingDrawn }
        return readsTerminal ? noTerminalDrawing : nil
    }
}
