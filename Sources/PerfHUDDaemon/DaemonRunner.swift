import Logging
import NIOCore
import PerfHUDCore
import ServiceLifecycle
#if canImport(Glibc)
import Glibc
#endif

/// Runs `perfhud daemon`: the sampling and the HTTP server as two services of one ServiceGroup,
/// which turns SIGTERM, SIGINT and SIGHUP into a graceful stop of both.
public enum DaemonRunner {
    /// - Returns: the exit code: 0 after a graceful stop, 69 when the port cannot be had, 73 when
    ///   the event socket cannot.
    public static func run(configuration: DaemonConfiguration, resolver: TargetResolver) async -> Int32 {
        let service = DaemonService(configuration: configuration, resolver: resolver)
        do {
            try service.openEventSocket()
        } catch {
            service.logError("\(error)")
            return ExitStatus.cannotCreate
        }
        let channel: Channel
        do {
            channel = try await MetricsHTTPServer.bind(host: configuration.listenHost, port: Int(configuration.listenPort), metrics: service.metrics)
        } catch {
            service.closeEventSocket()
            service.logError("cannot listen on \(configuration.listenHost):\(configuration.listenPort): \(Self.reason(error))")
            return ExitStatus.unavailable
        }
        service.announceReady(metricsAddress: "\(configuration.listenHost):\(configuration.listenPort)")
        let logger = Logger(label: "perfhud") { _ in SwiftLogNoOpLogHandler() }
        let group = ServiceGroup(
            services: [SamplingService(service: service), HTTPService(channel: channel)],
            gracefulShutdownSignals: [.sigterm, .sigint, .sighup],
            logger: logger
        )
        do {
            try await group.run()
            return ExitStatus.success
        } catch {
            service.logError("\(error)")
            return ExitStatus.software
        }
    }
}

extension DaemonRunner {
    /// What went wrong in the user's words: the system's message for an errno, never NIO's
    /// description of the call that failed (`bind(descriptor:ptr:bytes:)`).
    static func reason(_ error: Error) -> String {
        if let failure = error as? IOError { return String(cString: strerror(failure.errnoCode)).lowercased() }
        if error is SocketAddressError { return "not an address this machine has" }
        return "\(error)"
    }
}

/// The sampling loop, on a thread of its own (it blocks in poll), as a Service.
struct SamplingService: Service {
    let service: DaemonService

    func run() async throws {
        try await withGracefulShutdownHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let box = Unmanaged.passRetained(Box(service: service, done: { continuation.resume() }))
                var thread = pthread_t()
                pthread_create(&thread, nil, { context in
                    let box = Unmanaged<Box>.fromOpaque(context!).takeRetainedValue()
                    box.service.runLoop()
                    box.done()
                    return nil
                }, box.toOpaque())
                pthread_detach(thread)
            }
        } onGracefulShutdown: {
            service.stop()
        }
    }

    final class Box {
        let service: DaemonService
        let done: () -> Void
        init(service: DaemonService, done: @escaping () -> Void) { self.service = service; self.done = done }
    }
}

/// The HTTP server as a Service: serves until the graceful stop closes its channel.
struct HTTPService: Service {
    let channel: Channel

    func run() async throws {
        try await withGracefulShutdownHandler {
            try await channel.closeFuture.get()
        } onGracefulShutdown: {
            channel.close(promise: nil)
        }
    }
}
