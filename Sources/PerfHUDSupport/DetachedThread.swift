#if canImport(Glibc)
import Glibc
#endif

/// Starts `body` on a detached thread of its own (never joined: a call stuck in a driver or the
/// kernel cannot hold perfhud's exit), for the monitors that read once a second off the tick (the
/// GPU's, the network's). - Returns: false where the thread could not be made.
package func startDetachedThread(_ body: @escaping () -> Void) -> Bool {
    final class Body { let run: () -> Void; init(_ run: @escaping () -> Void) { self.run = run } }
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    var handle = pthread_t()
    let context = Unmanaged.passRetained(Body(body)).toOpaque()
    let created = createThreadBlockingSignals(&handle, &attributes, { context in
        Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
        return nil
    }, context)
    if created != 0 { Unmanaged<Body>.fromOpaque(context).release() }
    return created == 0
}

/// `pthread_create` with every signal blocked in the new thread (the caller's mask is back when it
/// returns), for every thread perfhud makes. Signals are the main loop's: read from a signalfd
/// (`SignalChannel`, which blocks them in the main thread only) or handled there. A process-directed
/// signal goes to any thread that does not block it: a SIGCHLD taken by a monitor thread, where it
/// is ignored, never reached the loop, and `run` never saw its program end (seen once, under load).
package func createThreadBlockingSignals(_ handle: UnsafeMutablePointer<pthread_t>, _ attributes: UnsafePointer<pthread_attr_t>?,
                                 _ start: @escaping @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?,
                                 _ context: UnsafeMutableRawPointer?) -> Int32 {
    var all = sigset_t(), previous = sigset_t()
    sigfillset(&all)
    pthread_sigmask(SIG_SETMASK, &all, &previous)
    defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
    return pthread_create(handle, attributes, start, context)
}
