import XCTest
@testable import PerfHUDSupport
@testable import PerfHUDSampling
@testable import PerfHUDRender

/// The network figures' pure parts (issue 33): a daemon group's sum, the details line's field, the
/// namespace's interface totals, and which closing sockets are the target's. The kernel's own
/// answers are checked in InetDiagTests and, end to end, in test_network.py.
final class NetworkTests: XCTestCase {
    private func socket(cookie: UInt64, port: UInt16 = 40000, state: UInt8 = InetDiag.tcpEstablished, acked: UInt64, received: UInt64,
                        retransmits: UInt32 = 0, inode: UInt64 = 0, peerPort: UInt16 = 51000) -> InetDiag.Socket {
        var socket = InetDiag.Socket(inode: inode, state: state)
        socket.family = 2; socket.localPort = port; socket.cookie = cookie; socket.remotePort = state == InetDiag.tcpListen ? 0 : peerPort
        socket.bytesAcked = acked; socket.bytesReceived = received; socket.totalRetransmits = retransmits; socket.dataSegmentsOut = 0
        return socket
    }

    func testASocketsEndAddsItsLastBytesOnceAndAnUnknownOneOnlyFromAListeningPort() {
        var totals = TCPAccounting()
        totals.beginPass()
        totals.see(socket(cookie: 1, acked: 1_001, received: 500))               // watched from here
        totals.see(socket(cookie: 2, port: 8080, state: InetDiag.tcpListen, acked: 0, received: 0))
        _ = totals.endPass()
        XCTAssertEqual(totals.listeningPorts, [TCPAccounting.portKey(family: 2, port: 8080)])
        XCTAssertEqual(totals.sentBytes, 0)

        // Known by its cookie: its increase since the pass, once.
        XCTAssertTrue(totals.closed(socket(cookie: 1, acked: 3_001, received: 900)))
        XCTAssertFalse(totals.closed(socket(cookie: 1, acked: 3_001, received: 900)), "an end is counted once")
        XCTAssertEqual(totals.sentBytes, 2_000)
        XCTAssertEqual(totals.receivedBytes, 400)
        // Never seen, accepted from the target's listening port: from its start (its SYN-ACK not a byte).
        XCTAssertTrue(totals.closed(socket(cookie: 7, port: 8080, acked: 101, received: 50, retransmits: 2)))
        XCTAssertEqual(totals.sentBytes, 2_100)
        XCTAssertEqual(totals.receivedBytes, 450)
        XCTAssertEqual(totals.retransmits, 2)
        // Never seen, from another port (another program's connection): not the target's.
        XCTAssertFalse(totals.closed(socket(cookie: 8, port: 9999, acked: 1_000_001, received: 0)))
        XCTAssertEqual(totals.sentBytes, 2_100)
        // The listening socket itself, closed at the end: no peer, no connection, nothing counted.
        XCTAssertFalse(totals.closed(socket(cookie: 2, port: 8080, acked: 0, received: 0, peerPort: 0)))
        // Opened since watching: the one accepted and closed between passes (cookie 1 was there at the start).
        XCTAssertEqual(totals.opened, 1)
        totals.beginPass()
        totals.see(socket(cookie: 9, acked: 1, received: 0))
        _ = totals.endPass()
        XCTAssertEqual(totals.opened, 2, "a socket first seen after the first pass was opened since")
    }

    /// The peers a namespace's interfaces do not count: 127.0.0.0/8, ::1 and ::ffff:127.x.x.x.
    func testLoopbackAddressesAreToldFromOthers() {
        func address(_ bytes: [UInt8]) -> InetDiag.RawAddress {
            var raw = InetDiag.RawAddress()
            withUnsafeMutableBytes(of: &raw) { for (index, byte) in bytes.enumerated() { $0[index] = byte } }
            return raw
        }
        XCTAssertTrue(address([127, 0, 0, 1]).isLoopback(family: 2))
        XCTAssertTrue(address([127, 9, 8, 7]).isLoopback(family: 2))
        XCTAssertFalse(address([10, 0, 0, 1]).isLoopback(family: 2))
        XCTAssertTrue(address(Array(repeating: 0, count: 15) + [1]).isLoopback(family: 10))
        XCTAssertTrue(address(Array(repeating: 0, count: 10) + [0xff, 0xff, 127, 0, 0, 1]).isLoopback(family: 10))
        XCTAssertFalse(address([0x20, 0x01, 0x0d, 0xb8] + Array(repeating: 0, count: 11) + [1]).isLoopback(family: 10))
        XCTAssertFalse(address(Array(repeating: 0, count: 16)).isLoopback(family: 10), "::, not ::1")
    }

    func testASocketShutDownAndGoneFromTheDumpIsStillFoundByItsEnd() {
        // shutdown(SHUT_RDWR) takes a socket out of the kernel's tables at once; its descriptor (and
        // so its destroy event, at close) can come passes later.
        var totals = TCPAccounting()
        totals.beginPass(); totals.see(socket(cookie: 1, acked: 1, received: 0)); _ = totals.endPass()
        totals.beginPass(); totals.see(socket(cookie: 1, acked: 1_001, received: 0)); _ = totals.endPass()
        for _ in 0..<3 { totals.beginPass(); XCTAssertEqual(totals.endPass().connections, 0) }
        XCTAssertTrue(totals.knows(1))
        XCTAssertTrue(totals.closed(socket(cookie: 1, state: 7, acked: 4_001, received: 0)))
        XCTAssertEqual(totals.sentBytes, 4_000, "the bytes sent after the last pass that saw it")
        // Not kept for ever: an end that never comes (no destroy events without privilege).
        totals.beginPass(); totals.see(socket(cookie: 2, acked: 1, received: 0)); _ = totals.endPass()
        for _ in 0..<TCPAccounting.retainedPasses + 1 { totals.beginPass(); _ = totals.endPass() }
        XCTAssertFalse(totals.knows(2))
    }

    func testTheFirstPassOnlyNotesWhereEachSocketStands() {
        var totals = TCPAccounting()
        totals.beginPass()
        totals.see(socket(cookie: 1, acked: 5_000_001, received: 7_000))
        XCTAssertFalse(totals.closed(socket(cookie: 9, port: 8080, acked: 11, received: 0)), "no listening port known before a pass")
        let first = totals.endPass()
        XCTAssertEqual(first.connections, 1)
        XCTAssertEqual(totals.sentBytes, 0, "what was sent before perfhud watched is not counted")
        totals.beginPass()
        totals.see(socket(cookie: 1, acked: 5_000_101, received: 7_000))
        totals.see(socket(cookie: 2, acked: 51, received: 20))                     // opened since
        _ = totals.endPass()
        XCTAssertEqual(totals.sentBytes, 150)
        XCTAssertEqual(totals.receivedBytes, 20)
    }

    func testAGroupSumsBytesAndConnectionsAndWeighsTheRoundTripByConnections() {
        var a = NetworkFigures(), b = NetworkFigures()
        a.txBytesTotal = 100; a.rxBytesTotal = 10; a.tcpConnections = 1; a.tcpRTTms = 1; a.txBytesPerSecond = 5; a.rxBytesPerSecond = 1
        a.tcpRetransmitsTotal = 1; a.tcpRetransmitPercent = 0.5; a.source = NetworkSource.tcp
        b.txBytesTotal = 300; b.rxBytesTotal = 30; b.tcpConnections = 3; b.tcpRTTms = 5; b.txBytesPerSecond = 15; b.rxBytesPerSecond = 3
        b.tcpRetransmitsTotal = 2; b.tcpRetransmitPercent = 2; b.source = NetworkSource.tcp
        b.unreportedReason = NetworkUnreported.udpNotCounted
        let sum = NetworkFigures.sum(NetworkFiguresBox(a), NetworkFiguresBox(b))!.value
        XCTAssertEqual(sum.txBytesTotal, 400)
        XCTAssertEqual(sum.rxBytesTotal, 40)
        XCTAssertEqual(sum.txBytesPerSecond, 20)
        XCTAssertEqual(sum.tcpConnections, 4)
        XCTAssertEqual(sum.tcpRetransmitsTotal, 3)
        XCTAssertEqual(sum.tcpRetransmitPercent, 2, "the worse member's share")
        XCTAssertEqual(sum.tcpRTTms ?? 0, 4, accuracy: 1e-9, "(1 × 1 + 5 × 3) / 4")
        XCTAssertEqual(sum.unreportedReason, NetworkUnreported.udpNotCounted, "a member's UDP not counted is the group's")
        // Unknown stays unknown: a member without figures makes the sum's unknown, never a partial count.
        var unknown = NetworkFigures(unreported: NetworkUnreported.stale)
        unknown.tcpConnections = nil
        XCTAssertNil(NetworkFigures.sum(NetworkFiguresBox(a), NetworkFiguresBox(unknown))!.value.txBytesTotal)
    }

    func testTheDetailsLineSaysSentReceivedConnectionsRetransmitsAndRoundTrip() {
        var net = NetworkFigures()
        XCTAssertNil(NetworkText.details(net, paint: Palette(enabled: false)), "nothing before the second pass")
        net.txBytesPerSecond = 10.7 * 1024 * 1024; net.rxBytesPerSecond = 2.7 * 1024 * 1024
        net.tcpConnections = 7; net.tcpRetransmitsPerSecond = 3; net.tcpRetransmitPercent = 0.4; net.tcpRTTms = 0.31
        let plain = NetworkText.details(net, paint: Palette(enabled: false))!
        XCTAssertEqual(plain.text, "net ↑ 10.7 MiB/s ↓ 2.7 MiB/s tcp 7 retr 3/s rtt 0.3ms")
        XCTAssertFalse(plain.alarm)
        net.tcpRetransmitPercent = 2.5
        let alarming = NetworkText.details(net, paint: Palette(enabled: true))!
        XCTAssertTrue(alarming.alarm, "past 1 % of the data segments")
        XCTAssertTrue(alarming.text.contains("\u{1B}[") && alarming.text.contains("retr 3/s"), alarming.text)
        XCTAssertEqual(TerminalText.ascii(plain.text), "net tx 10.7 MiB/s rx 2.7 MiB/s tcp 7 retr 3/s rtt 0.3ms")
        net.unreportedReason = NetworkUnreported.udpNotCounted
        XCTAssertTrue(NetworkText.details(net, paint: Palette(enabled: false))!.text.hasSuffix("+udp not counted"))
        XCTAssertEqual(NetworkText.details(NetworkFigures(unreported: NetworkUnreported.stale), paint: Palette(enabled: false))?.text, "net stale")
    }

    func testInterfaceTotalsLeaveLoopbackOut() throws {
        let text = """
        Inter-|   Receive                                                |  Transmit
         face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
            lo: 9999999     100    0    0    0     0          0         0  9999999     100    0    0    0     0       0          0
          eth0:  123456     789    0    0    0     0          0         0   654321     987    0    0    0     0       0          0
        veth-a:    1000      10    0    0    0     0          0         0     2000      20    0    0    0     0       0          0
        """
        let totals = try XCTUnwrap(NetworkNamespace.parseInterfaceTotals(text))
        XCTAssertEqual(totals.received, 124_456)
        XCTAssertEqual(totals.sent, 656_321)
        XCTAssertNil(NetworkNamespace.parseInterfaceTotals("garbage\nmore garbage\n  x: y z\n"), "nothing parsed: unknown, not 0")
    }
}
