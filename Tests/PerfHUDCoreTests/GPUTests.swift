import XCTest
@testable import PerfHUDSampling

/// The DRM fdinfo figures (issue 32) from fixtures of real drivers' keys (Tests/Fixtures/drm: two
/// samples each, a second apart), and how a reading is attributed to a target.
final class GPUTests: XCTestCase {
    private static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/drm")

    private func fdinfo(_ name: String) throws -> DRMFdinfo {
        let text = try String(contentsOf: Self.fixtures.appendingPathComponent(name + ".txt"), encoding: .utf8)
        return try XCTUnwrap(DRMFdinfo.parse(Substring(text)), name)
    }

    /// The client's figures over the samples `names`, each a second after the one before, as the
    /// processes `pids` hold it; the target is `target`.
    private func figures(_ names: [String], pids: [Int32] = [10], target: [Int32] = [10]) throws -> [GPUFigures] {
        var clients = DRMClients()
        var result: [GPUFigures] = []
        for (index, name) in names.enumerated() {
            let info = try fdinfo(name)
            var reading = GPUReading()
            DRMReader.add(pids.map { ($0, [info]) }, to: &clients, into: &reading, now: UInt64(index + 1) * 1_000_000_000)
            result.append(reading.figures(of: target))
        }
        return result
    }

    func testEngineTimeIsTheBusiestEngineOverTheWallTime() throws {
        let (first, second) = try { let f = try figures(["amdgpu-1", "amdgpu-2"]); return (f[0], f[1]) }()
        XCTAssertNil(first.busyPercent, "no interval yet: unknown, not 0")
        // gfx 0.3 s of 1 s, compute 0.1 s: the busiest.
        XCTAssertEqual(second.busyPercent, 30)
        // The older drm-memory-* keys, summed over regions: 229380 + 13972 + 0 KiB.
        XCTAssertEqual(second.memoryBytes, (229_380 + 13_972) * 1024)
        XCTAssertEqual(second.device?.name, "amdgpu")
        XCTAssertEqual(second.device?.id, "0000:03:00.0")
        XCTAssertNil(second.unreportedReason)
    }

    func testAnEngineOfCapacityTwoIsFullOnlyWhenBothAreBusy() throws {
        let second = try figures(["i915-1", "i915-2"])[1]
        // video: 1.2 s over 1 s on an engine of capacity 2 → 60 %; render 10 %.
        XCTAssertEqual(second.busyPercent, 60)
        // drm-resident-* is preferred to drm-total-*; its unit read (2 MiB).
        XCTAssertEqual(second.memoryBytes, 2 << 20)
    }

    func testCyclesOverTotalCycles() throws {
        let second = try figures(["xe-1", "xe-2"])[1]
        // rcs: 18,000,000 cycles of 60,000,000 elapsed.
        XCTAssertEqual(second.busyPercent, 30)
        XCTAssertEqual(second.memoryBytes, (192 + 23_992) * 1024)
    }

    func testCyclesOverTheMaximumFrequency() throws {
        let second = try figures(["msm-1", "msm-2"])[1]
        // 200,000,000 cycles in 1 s at 800 MHz.
        XCTAssertEqual(second.busyPercent, 25)
        XCTAssertEqual(second.memoryBytes, 3 << 20)
    }

    func testACounterThatGoesBackIsHeldUntilItCatchesUp() throws {
        let result = try figures(["amdgpu-1", "amdgpu-back", "amdgpu-2"])
        XCTAssertEqual(result[1].busyPercent, 0, "never negative")
        // Measured from the held 1,412,958,000 ns, not from the value that went back.
        XCTAssertEqual(result[2].busyPercent, 30)
    }

    func testOneClientSeenFromAParentAndItsChildCountsOnce() throws {
        let both = try figures(["amdgpu-1", "amdgpu-2"], pids: [10, 11], target: [10, 11])[1]
        XCTAssertEqual(both.memoryBytes, (229_380 + 13_972) * 1024)
        XCTAssertEqual(both.busyPercent, 30)
        // Either process alone holds it; a process holding none reads a measured 0.
        XCTAssertEqual(try figures(["amdgpu-1", "amdgpu-2"], pids: [10, 11], target: [11])[1].busyPercent, 30)
        let other = try figures(["amdgpu-1", "amdgpu-2"], pids: [10, 11], target: [12])[1]
        XCTAssertEqual(other.busyPercent, 0)
        XCTAssertEqual(other.memoryBytes, 0)
    }

    func testNotDRMOrMalformedIsNoClient() {
        XCTAssertNil(DRMFdinfo.parse("pos:\t0\nflags:\t02\nmnt_id:\t3\n"))
        XCTAssertNil(DRMFdinfo.parse("drm-driver:\tamdgpu\n"), "no client id: not a client")
        let odd = DRMFdinfo.parse("drm-client-id:\t1\ndrm-engine-gfx:\t99999999999999999999999 ns\ndrm-memory-vram:\t18446744073709551615 GiB\ndrm-engine-x: 5 parsecs\n")
        XCTAssertNotNil(odd)
        XCTAssertNil(odd?.engineNanoseconds["gfx"], "overflow: unknown")
        XCTAssertNil(odd?.memoryBytes, "overflow: unknown")
        XCTAssertNil(odd?.engineNanoseconds["x"], "an unknown unit: unknown")
    }

    func testAttributionSumsTheTargetsClientsAndPicksItsDevice() {
        var reading = GPUReading()
        var first = GPUDevice(name: "A", id: "a"), second = GPUDevice(name: "B", id: "b")
        first.memoryTotalBytes = 1; second.memoryTotalBytes = 2
        reading.devices = [first, second]
        reading.clients = [
            .init(pids: [1], device: 0, busyPercent: 10, memoryBusyPercent: 1, encoderPercent: 0, decoderPercent: 0, memoryBytes: 100),
            .init(pids: [2], device: 1, busyPercent: 20, memoryBusyPercent: 2, encoderPercent: 0, decoderPercent: 0, memoryBytes: 500),
            .init(pids: [3], device: 1, busyPercent: 70, memoryBusyPercent: 7, encoderPercent: 0, decoderPercent: 0, memoryBytes: 900),
        ]
        let tree = reading.figures(of: [1, 2])
        XCTAssertEqual(tree.busyPercent, 30)
        XCTAssertEqual(tree.memoryBytes, 600)
        XCTAssertEqual(tree.device?.name, "B", "the device it uses most")
        let none = reading.figures(of: [9])
        XCTAssertEqual(none.busyPercent, 0)
        XCTAssertEqual(none.device?.name, "A", "the first when it uses none")
        // A client whose share is unknown makes the sum unknown, not smaller.
        reading.clients[1].busyPercent = nil
        XCTAssertNil(reading.figures(of: [1, 2]).busyPercent)
        XCTAssertEqual(reading.figures(of: [1, 2]).memoryBytes, 600)
        reading.unreported = GPUUnreported.noDriver
        XCTAssertEqual(reading.figures(of: [1]).unreportedReason, "no GPU driver")
        XCTAssertNil(reading.figures(of: [1]).memoryBytes)
    }

    /// A sysfs tree as amdgpu's: `renderD128/device` → the PCI device, its `driver` → amdgpu.
    private func sysfs() throws -> String {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("drm-\(getpid())-\(UUID().uuidString)").path
        let pci = root + "/devices/0000:03:00.0"
        try FileManager.default.createDirectory(atPath: pci, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/drivers/amdgpu", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/class/renderD128", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: root + "/class/renderD128/device", withDestinationPath: pci)
        try FileManager.default.createSymbolicLink(atPath: pci + "/driver", withDestinationPath: root + "/drivers/amdgpu")
        try "37\n".write(toFile: pci + "/gpu_busy_percent", atomically: true, encoding: .utf8)
        try "1073741824\n".write(toFile: pci + "/mem_info_vram_used", atomically: true, encoding: .utf8)
        try "8589934592\n".write(toFile: pci + "/mem_info_vram_total", atomically: true, encoding: .utf8)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: root) }
        return root + "/class"
    }

    func testADeviceIsThereWithTheTargetOnItOrNot() throws {
        let nodes = DRMReader.renderNodes(in: try sysfs())
        XCTAssertEqual(nodes.map(\.device.name), ["amdgpu"])
        XCTAssertEqual(nodes.map(\.device.id), ["0000:03:00.0"])
        var clients = DRMClients()
        var result: [GPUFigures] = []
        var offTheGPU: GPUFigures?
        for (index, name) in ["amdgpu-1", "amdgpu-2"].enumerated() {
            var reading = GPUReading()
            DRMReader.addDevices(nodes, into: &reading)
            DRMReader.add([(10, [try fdinfo(name)])], to: &clients, into: &reading, now: UInt64(index + 1) * 1_000_000_000)
            XCTAssertEqual(reading.devices.count, 1, "the client's device is the node's (drm-pdev = its PCI address)")
            result.append(reading.figures(of: [10]))
            offTheGPU = reading.figures(of: [99])
        }
        XCTAssertEqual(result[1].busyPercent, 30)
        // amdgpu's own load and VRAM for the device, as MangoHud reads them.
        XCTAssertEqual(result[1].device?.busyPercent, 37)
        XCTAssertEqual(result[1].device?.memoryUsedBytes, 1 << 30)
        XCTAssertEqual(result[1].device?.memoryTotalBytes, 8 << 30)
        // A process not on the GPU that is there: a measured 0, and the device it would use.
        XCTAssertEqual(offTheGPU?.busyPercent, 0)
        XCTAssertEqual(offTheGPU?.memoryBytes, 0)
        XCTAssertEqual(offTheGPU?.device?.name, "amdgpu")
    }

    func testAReasonIsRecordedAsACode() {
        for reason in GPUUnreported.codes.all {
            XCTAssertEqual(GPUUnreported.codes.reason(code: GPUUnreported.codes.code(reason)), reason)
        }
        XCTAssertNil(GPUUnreported.codes.reason(code: 999))
        // The `samples` view gives the text, from the recording's `reasons` table, whose rows write a quote twice in SQL.
        XCTAssertEqual(GPUUnreported.codes.sqlText(of: "c"), "(SELECT text FROM reasons WHERE kind = 'gpu' AND code = c)")
        XCTAssertTrue(GPUUnreported.codes.sqlRows.contains("('gpu', 13, 'perfhud runs in a PID namespace: NVML''s host PIDs cannot be matched')"))
    }
}
