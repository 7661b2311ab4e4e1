import ArgumentParser
import PerfHUDSupport
import PerfHUDSampling
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
    /// Instead: the cost of finding PID's descendants once, by a libproc2 scan of every process
    /// (the old once-a-second discovery) and by the `/proc` listing that now runs every tick.
    @Flag var discovery = false

    func run() throws {
        if discovery { return timeDiscovery() }
        let sampler = try ProcessSampler(pid: pid)
        var sink: UInt64 = 0
        for _ in 0..<1000 { sink &+= sampler.sample().residentBytes ?? 0 }
        let start = monotonicNanoseconds()
        for _ in 0..<iterations { sink &+= sampler.sample().residentBytes ?? 0 }
        let elapsed = monotonicNanoseconds() - start
        print("perfhud_sampler_ns_per_sample \(Double(elapsed) / Double(iterations)) \(sink % 2)")
    }

    private func timeDiscovery() {
        let directory = ProcessDirectory(), scan = DescendantScan()
        var found: [(pid: Int32, startTicks: UInt64)] = []
        let rounds = max(1, iterations / 1000)
        var sink = 0
        var start = monotonicNanoseconds()
        for _ in 0..<rounds { sink &+= directory.descendants(of: pid).count }
        let libproc2 = Double(monotonicNanoseconds() - start) / Double(rounds)
        scan.descendants(of: pid, into: &found)          // the first scan reads every stat once
        start = monotonicNanoseconds()
        for _ in 0..<rounds { scan.descendants(of: pid, into: &found); sink &+= found.count }
        let listing = Double(monotonicNanoseconds() - start) / Double(rounds)
        print("perfhud_discovery_libproc2_ns \(libproc2)\nperfhud_discovery_proc_listing_ns \(listing) \(sink % 2)")
    }
}
