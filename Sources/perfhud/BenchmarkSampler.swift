import ArgumentParser
import PerfHUDCore
#if canImport(Glibc)
import Glibc
#endif

/// `perfhud benchmark-sampler PID`: the cost of one sample of perfhud's own sampler, for
/// `Benchmarks/compare.py`, which runs the physical limit and libproc2 beside it.
struct BenchmarkSampler: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "benchmark-sampler", abstract: "Time perfhud's sampler (for Benchmarks/).", shouldDisplay: false)

    @Argument var pid: Int32
    @Option var iterations = 200_000

    func run() throws {
        let sampler = try ProcessSampler(pid: pid)
        var sink: UInt64 = 0
        for _ in 0..<1000 { sink &+= sampler.sample().residentBytes ?? 0 }
        let start = monotonicNanoseconds()
        for _ in 0..<iterations { sink &+= sampler.sample().residentBytes ?? 0 }
        let elapsed = monotonicNanoseconds() - start
        print("perfhud_sampler_ns_per_sample \(Double(elapsed) / Double(iterations)) \(sink % 2)")
    }
}
