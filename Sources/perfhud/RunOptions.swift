import ArgumentParser
import PerfHUDOutput

/// Options only `run` has: they read or hook into a program perfhud launches, which `attach`
/// cannot do and the demo (which reports itself) does not need.
struct RunOptions: ParsableArguments {
    @Flag(help: "Read actions from the program's own output (TCA _printChanges, JSON lines).")
    var actionsFromOutput = false

    @Option(parsing: .unconditional, help: "Where the program's frames come from: auto (its events, else its OpenGL/Vulkan presents, else its terminal output), gl, vulkan, tty, events or none.")
    var frames: Given<FrameMode> = "auto"

    @Option(parsing: .unconditional, help: "The quiet that ends a burst of a terminal program's output (one frame) when it does not use synchronized output.")
    var frameGap: Given<DurationValue> = "8ms"

    func validate() throws {
        var configuration = SessionConfiguration()
        try apply(to: &configuration)
    }

    func apply(to configuration: inout SessionConfiguration) throws {
        configuration.actionsFromOutput = actionsFromOutput
        configuration.frames = try frames.value("--frames")
        configuration.frameGapNanoseconds = try frameGap.value("--frame-gap") { (1_000_000...1_000_000_000).contains($0.nanoseconds) }.nanoseconds
    }
}
