@testable import PerfHUDClient
@testable import PerfHUDEvents
#if canImport(Glibc)
import Glibc
#endif

/// perfhud's real event socket and aggregator, in a private directory, for the client to send to:
/// the peer the client meets in use, not a stand-in.
final class LiveReceiver {
    let directory: String
    let receiver: EventReceiver

    private init(directory: String, receiver: EventReceiver) {
        self.directory = directory
        self.receiver = receiver
    }

    /// A receiver at /tmp/perfhud-NAME-PID/s.sock and a client sending to it.
    static func open(named name: String) throws -> (client: PerfHUD, aggregator: EventAggregator, receiver: LiveReceiver) {
        let directory = "/tmp/perfhud-\(name)-\(getpid())"
        mkdir(directory, 0o700)
        let aggregator = EventAggregator()
        let receiver = try EventReceiver(path: directory + "/s.sock", aggregator: aggregator, policy: .sameUser, targetPID: getpid())
        receiver.start()
        return (PerfHUD(socketPath: receiver.path), aggregator, LiveReceiver(directory: directory, receiver: receiver))
    }

    func close() {
        receiver.stop()
        rmdir(directory)
    }
}
