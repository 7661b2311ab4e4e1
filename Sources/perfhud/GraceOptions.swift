import ArgumentParser
import PerfHUDOutput

/// How perfhud ends a program it launched (`run`, and the demo's program) when it ends the
/// session itself: SIGTERM, then SIGKILL after the grace. `attach` ends nothing, so it has none.
struct GraceOptions: ParsableArguments {
    @Option(help: "When perfhud ends the program (--duration, --count, q in the demo), the time between SIGTERM and SIGKILL, 0s…60s.")
    var grace = DurationArgument(nanoseconds: 2_000_000_000)

    func validate() throws {
        guard grace.nanoseconds <= 60_000_000_000 else { throw ValidationError(Accepted.complaint("--grace", got: grace.text)) }
    }

    func apply(to configuration: inout SessionConfiguration) {
        configuration.graceNanoseconds = grace.nanoseconds
    }
}
