import ArgumentParser
import PerfHUDOutput

/// Options only `run` has: they read or hook into a program perfhud launches, which `attach`
/// cannot do and the demo (which reports itself) does not need.
struct RunOptions: ParsableArguments {
    @Flag(help: "Read actions from the program's own output (TCA _printChanges, JSON lines).")
    var actionsFromOutput = false

    @Option(help: "Where the program's frames come from: auto (its events, else its OpenGL/Vulkan presents, else its terminal output), gl, vulkan, tty, events or none.")
    var frames: FrameMode = .auto

    @Option(help: "The quiet that ends a burst of a terminal program's output (one frame) when it does not use synchronized output.")
    var frameGap = DurationArgument(nanoseconds: 8_000_000)

    func validate() throws {
        guard (1_000_000...1_000_000_000).contains(frameGap.nanoseconds) else {
            throw ValidationError(Accepted.complaint("--frame-gap", got: frameGap.text))
        }
    }

    func apply(to configuration: inout SessionConfiguration) {
        configuration.actionsFromOutput = actionsFromOutput
        configuration.frames = frames
        configuration.frameGapNanoseconds = frameGap.nanoseconds
    }
}
