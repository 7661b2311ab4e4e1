import XCTest
@testable import PerfHUDSupport
@testable import PerfHUDSampling
@testable import PerfHUDStore

/// The pieces that keep `--include-children` CPU honest: the machine bound on the shown total,
/// and where a control group may be made.
final class ChildrenCPUTests: XCTestCase {
    private let tick: UInt64 = 100_000_000

    func testALumpIsShownNoFasterThanTheMachineAndNothingIsLost() {
        // 2 CPUs, 100 ms ticks: a child reaped with 0.6 s of CPU in one tick (main showed 600 %).
        var total = MachineBoundedCPUTotal(onlineCPUs: 2)
        var store = MetricsStore(pid: 1, capacity: 100, startNanoseconds: 0, onlineCPUs: 2, ticksPerSecond: 100)
        let readings: [UInt64] = [0, 0, 600_000_000, 600_000_000, 600_000_000, 650_000_000, 650_000_000]
        var shown: [UInt64] = []
        for (index, reading) in readings.enumerated() {
            let now = UInt64(index + 1) * tick
            let value = total.update(reading: reading, at: now)
            shown.append(value)
            let report = store.record(Sample(monotonicNanoseconds: now, wallSeconds: 0, alive: true, cpuNanoseconds: value))
            XCTAssertLessThanOrEqual(report.cpuPercent ?? 0, 200, "no tick claims more than the machine")
        }
        XCTAssertEqual(shown, [0, 0, 200_000_000, 400_000_000, 600_000_000, 650_000_000, 650_000_000],
                       "the carry is shown as soon as there is room, then the total is the reading again")
        XCTAssertEqual(zip(shown, shown.dropFirst()).allSatisfy { $0 <= $1 }, true, "never backwards")
    }

    func testTheCarryIsShownAtOnceWhenTheTargetHasEnded() {
        var total = MachineBoundedCPUTotal(onlineCPUs: 1)
        _ = total.update(reading: 1_000_000_000, at: tick)       // what it had spent before: the baseline
        XCTAssertEqual(total.update(reading: 1_500_000_000, at: 2 * tick), 1_100_000_000)
        XCTAssertEqual(total.update(reading: 1_500_000_000, at: 3 * tick, ended: true), 1_500_000_000,
                       "cpu_seconds_total ends exact")
    }

    func testAReadingThatDipsDoesNotTakeTheTotalBack() {
        // A tracked child that exits drops out of the sum until its parent reaps it.
        var total = MachineBoundedCPUTotal(onlineCPUs: 4)
        _ = total.update(reading: 300, at: tick)
        XCTAssertEqual(total.update(reading: 100, at: 2 * tick), 300)
        XCTAssertEqual(total.update(reading: 350, at: 3 * tick), 350)
    }

    func testAGroupGoesBesidePerfhudFirstOnAHybridHierarchy() {
        // This machine's layout: v1 controllers each on its own, v2 (no controllers) at /unified.
        let mounts = """
        31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
        32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
        33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
        35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
        41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
        """
        let groups = "4:memory:/jobs/7\n2:cpuacct:/jobs\n1:cpu:/\n0::/user/me\n"
        let places = ControlGroupCPU.candidatePlaces(mountInfo: mounts, ownGroups: groups)
        XCTAssertEqual(places.map(\.directory), ["/sys/fs/cgroup/unified/user/me", "/sys/fs/cgroup/unified",
                                                 "/sys/fs/cgroup/cpuacct/jobs", "/sys/fs/cgroup/cpuacct"])
        XCTAssertEqual(places.map(\.hierarchy), [.unified, .unified, .cpuacct, .cpuacct])
        XCTAssertEqual(places[0].hierarchyPath, "/user/me")
        XCTAssertEqual(places[3].hierarchyPath, "/")
    }

    func testAPureV2ContainerAndACombinedV1Controller() {
        let systemd = ControlGroupCPU.candidatePlaces(
            mountInfo: "30 24 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n",
            ownGroups: "0::/system.slice/web.service\n")
        XCTAssertEqual(systemd.map(\.directory), ["/sys/fs/cgroup/system.slice/web.service", "/sys/fs/cgroup"])
        // cpu and cpuacct mounted together (most v1 systems), no v2 at all.
        let legacy = ControlGroupCPU.candidatePlaces(
            mountInfo: "33 31 0:30 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n",
            ownGroups: "3:cpu,cpuacct:/\n1:name=systemd:/\n")
        XCTAssertEqual(legacy.map(\.directory), ["/sys/fs/cgroup/cpu,cpuacct"])
        XCTAssertEqual(legacy.map(\.hierarchy), [.cpuacct])
    }

    func testAMountOfASubGroupIsSeenThroughItsRoot() {
        // A container whose /sys/fs/cgroup is the host's /lxc/c1 (no cgroup namespace).
        let places = ControlGroupCPU.candidatePlaces(
            mountInfo: "30 24 0:26 /lxc/c1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
            ownGroups: "0::/lxc/c1/init.scope\n")
        XCTAssertEqual(places.map(\.directory), ["/sys/fs/cgroup/init.scope", "/sys/fs/cgroup"])
        XCTAssertEqual(places[1].hierarchyPath, "/lxc/c1")
        // perfhud's group outside what is mounted: only the mount's top.
        let outside = ControlGroupCPU.candidatePlaces(
            mountInfo: "30 24 0:26 /lxc/c1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", ownGroups: "0::/other\n")
        XCTAssertEqual(outside.map(\.directory), ["/sys/fs/cgroup"])
        XCTAssertEqual(ControlGroupCPU.candidatePlaces(mountInfo: "", ownGroups: "").count, 0, "no cgroups: no group")
        // Entered a container's cgroup namespace from outside (nsenter): our group is not in it.
        let entered = ControlGroupCPU.candidatePlaces(
            mountInfo: "30 24 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", ownGroups: "0::/../../user.slice\n")
        XCTAssertEqual(entered.map(\.directory), ["/sys/fs/cgroup"])
    }

    func testCPUStatFieldsAreFoundByTheirWholeName() {
        let text = Array("usage_usec 465431\nuser_usec 387140\nsystem_usec 78290\nnice_usec 0\n".utf8)
        text.withUnsafeBytes { raw in
            XCTAssertEqual(ControlGroupCPU.value(of: "usage_usec", in: raw), 465_431)
            XCTAssertEqual(ControlGroupCPU.value(of: "system_usec", in: raw), 78_290)
            XCTAssertNil(ControlGroupCPU.value(of: "usage", in: raw), "a prefix of a name is not the name")
            XCTAssertNil(ControlGroupCPU.value(of: "throttled_usec", in: raw))
        }
    }
}
