import NIOCore
import PerfHUDSupport
import CSystemShims
#if canImport(Glibc)
import Glibc
#endif

/// Runs `perfhud daemon`: the sampling loop on the calling thread, the HTTP server on SwiftNIO's
/// event loop. SIGTERM and SIGINT end the loop after one last sample (see `StopSignals`), and so
/// does SIGHUP unless `--config` names a file to re-read; then the HTTP server closes, and the exit
/// status is 0.
///
/// No Swift concurrency and no Dispatch here, on purpose: libdispatch's worker pool on Linux
/// starts a manager thread that asks for nice -4 (its monitor timer runs at the highest QoS).
/// Without CAP_SYS_NICE, which no service should have, the kernel refuses, and libdispatch logs
/// "Failed to set thread priority for worker thread … errno=…" to the unit's journal at every
/// start. A poll loop and NIO's own threads need none of it; SIGTERM ends the loop directly.
public enum DaemonRunner {
    /// A fixed mmap threshold for malloc (128 KiB, glibc's initial one), unless the operator set
    /// `MALLOC_MMAP_THRESHOLD_`: glibc raises the threshold to the size of each large block freed,
    /// so from the second scrape on a scrape's buffers (~1 MiB at 200 targets) came from the heap,
    /// and what they left there stayed resident or not by chance. Fixed, they are mapped and given
    /// back whole: anonymous memory at 200 targets 9.9 MiB in every run, against 10.5 or 11.7
    /// before (smaps, 3 runs each).
    static func fixMallocMapThreshold() {
        guard getenv("MALLOC_MMAP_THRESHOLD_") == nil else { return }
        _ = perfhud_malloc_mmap_threshold(128 * 1024)
    }

    /// - Returns: the exit code: 0 after a graceful stop, 69 when the port cannot be had, 73 when
    ///   the event socket cannot.
    /// - Throws: `PerfHUDError` for targets that cannot be planned (a configuration file with an
    ///   error: 78; labels two unnamed targets would share: 64).
    public static func run(configuration: DaemonConfiguration) throws -> ExitStatus {
        fixMallocMapThreshold()
        let service = try DaemonService(configuration: configuration)
        do {
            try service.openEventSockets()
            try service.openRecording()
        } catch {
            service.closeEventSockets()
            service.logError("\(error)")
            return ExitStatus.cannotCreate
        }
        let channel: Channel
        do {
            channel = try MetricsHTTPServer.bind(host: configuration.listenHost, port: Int(configuration.listenPort), metrics: service.metrics).wait()
        } catch {
            service.closeEventSockets()
            service.logError("cannot listen on \(configuration.listenAddress): \(Self.reason(error))")
            return ExitStatus.unavailable
        }
        StopSignals.install(wakingUp: service)
        service.announceReady(metricsAddress: configuration.listenAddress)
        service.runLoop()
        try? channel.close().wait()
        return ExitStatus.success
    }

    /// What went wrong in the user's words: the system's message for an errno, the resolver's
    /// for a name, never NIO's description of the call that failed (`bind(descriptor:ptr:bytes:)`)
    /// or of its own types (`SocketAddressError.UnknownHost: …`).
    static func reason(_ error: Error) -> String {
        if let failure = error as? IOError { return String(cString: strerror(failure.errnoCode)).lowercased() }
        if let unknown = error as? SocketAddressError.UnknownHost { return "no such host (\(unknown.errorDescription.lowercased()))" }
        if error is SocketAddressError { return "not an address this machine has" }
        return "the address cannot be used"
    }
}

/// SIGTERM, SIGINT and SIGHUP as a byte on the sampling loop's wake-up pipe (1: stop, 2: SIGHUP),
/// written by a plain signal handler (write(2) is async-signal-safe; the pipe is non-blocking),
/// whichever thread the kernel picks to run it.
enum StopSignals {
    nonisolated(unsafe) static var descriptor: Int32 = -1

    static func install(wakingUp service: DaemonService) {
        descriptor = service.wakeDescriptor
        for signal in [SIGTERM, SIGINT, SIGHUP] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                WakePipe.send(number == SIGHUP ? 2 : 1, to: StopSignals.descriptor)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(signal, &action, nil)
        }
    }
}
