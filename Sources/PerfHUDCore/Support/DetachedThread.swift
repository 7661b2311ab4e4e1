#if canImport(Glibc)
import Glibc
#endif

/// Starts `body` on a detached thread of its own (never joined: a call stuck in a driver or the
/// kernel cannot hold perfhud's exit), for the monitors that read once a second off the tick (the
/// GPU's, the network's). - Returns: false where the thread could not be made.
func startDetachedThread(_ body: @escaping () -> Void) -> Bool {
    final class Body { let run: () -> Void; init(_ run: @escaping () -> Void) { self.run = run } }
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    var handle = pthread_t()
    let context = Unmanaged.passRetained(Body(body)).toOpaque()
    let created = pthread_create(&handle, &attributes, { context in
        Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
        return nil
    }, context)
    if created != 0 { Unmanaged<Body>.fromOpaque(context).release() }
    return created == 0
}
