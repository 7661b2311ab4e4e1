import ArgumentParser
import PerfHUDClient
import PerfHUDSupport
#if canImport(Glibc)
import Glibc
#endif

/// `perfhud benchmark-client [--events PATH]`: nanoseconds per `PerfHUD.action(_:)` in the
/// calling thread, for `Benchmarks/compare.py`. Without a path, the no-op cost.
struct BenchmarkClient: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "benchmark-client", abstract: "Time PerfHUDClient's action() (for Benchmarks/).", shouldDisplay: false)

    @Option var events: String?
    @Option var iterations = 1_000_000
    /// A program's pace: calls in bursts of this many, then a pause of 1 ms.
    @Option var burst = 1000

    func run() throws {
        let client = PerfHUD(socketPath: events)
        var elapsed: UInt64 = 0
        var done = 0
        let label = "Feature.Action.slider(.changed)"
        while done < iterations {
            let start = monotonicNanoseconds()
            for _ in 0..<burst { client.action(label) }
            elapsed += monotonicNanoseconds() - start
            done += burst
            usleep(1000)
        }
        client.flush()
        print("client_ns_per_action \(Double(elapsed) / Double(done)) sent \(client.sentLines) dropped \(client.droppedLines)")
    }
}
