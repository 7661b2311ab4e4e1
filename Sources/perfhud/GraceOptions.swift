import ArgumentParser
import PerfHUDOutput

/// How perfhud ends a program it launched (`run`, and the demo's program) when it ends the
/// session itself: SIGTERM, then SIGKILL after the grace. `attach` ends nothing, so it has none.
struct GraceOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: "When perfhud ends the program (--duration, --count, q in the demo), the time between SIGTERM and SIGKILL, 0s…60s.")
    var grace: Given<DurationValue> = "2s"

    func validate() throws {
        var configuration = SessionConfiguration()
        try apply(to: &configuration)
    }

    func apply(to configuration: inout SessionConfiguration) throws {
        configuration.graceNanoseconds = try grace.value("--grace") { $0.nanoseconds <= 60_000_000_000 }.nanoseconds
    }
}
