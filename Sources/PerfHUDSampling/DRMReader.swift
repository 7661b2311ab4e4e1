#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport

/// The DRM clients (`DRMFdinfo`) of given processes: their descriptors of DRM character devices
/// (major 226, `/dev/dri/*`), each read through `/proc/PID/fdinfo/FD`. Used by the GPU thread.
///
/// The devices themselves come from sysfs (`/sys/class/drm/renderD*`): each one is there, with the
/// target on it or not (a measured 0), named by its driver and PCI address (`drm-pdev`'s form);
/// amdgpu also says its load and VRAM (`gpu_busy_percent`, `mem_info_vram_used`/`_total`, as
/// MangoHud reads them).
package final class DRMReader {
    private var clients = DRMClients()
    private static let drmMajor: UInt64 = 226
    /// The render nodes' device directories (`…/renderD128/device`), one a device.
    private let devices: [(device: GPUDevice, directory: String)]

    /// nil where the machine has no DRM device at all.
    package init?(sysfs: String = "/sys/class/drm", dev: String = "/dev/dri") {
        guard access(dev, F_OK) == 0 else { return nil }
        devices = Self.renderNodes(in: sysfs)
    }

    package func read(pids: [Int32], into reading: inout GPUReading, now: UInt64) {
        Self.addDevices(devices, into: &reading)
        Self.add(pids.map { ($0, Self.clients(of: $0)) }, to: &clients, into: &reading, now: now)
    }

    /// The render nodes of `sysfs` (`renderD*`), by PCI address (or node name off PCI), each named
    /// by its driver.
    package static func renderNodes(in sysfs: String) -> [(device: GPUDevice, directory: String)] {
        var found: [(device: GPUDevice, directory: String)] = []
        forEachEntry(in: sysfs) { _, name in
            guard name.hasPrefix("renderD") else { return }
            let deviceDirectory = sysfs + "/" + name + "/device"
            let address = link(deviceDirectory) ?? name
            let driver = link(deviceDirectory + "/driver") ?? "DRM GPU"
            found.append((GPUDevice(name: TerminalText.escaped(driver), id: TerminalText.escaped(address)), deviceDirectory))
        }
        return found.sorted { $0.device.id < $1.device.id }
    }

    /// The devices and what sysfs says of them now, before the clients (which find theirs by id).
    package static func addDevices(_ devices: [(device: GPUDevice, directory: String)], into reading: inout GPUReading) {
        for (device, directory) in devices {
            var device = device
            device.busyPercent = number(directory + "/gpu_busy_percent").map { Double($0) }
            device.memoryUsedBytes = number(directory + "/mem_info_vram_used")
            device.memoryTotalBytes = number(directory + "/mem_info_vram_total")
            reading.devices.append(device)
        }
    }

    /// The last component of the symbolic link `path` points to (`…/0000:03:00.0`, `…/amdgpu`).
    private static func link(_ path: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = readlink(path, &buffer, buffer.count)
        guard count > 0 else { return nil }
        let target = String(decoding: buffer[..<count], as: UTF8.self)
        return target.split(separator: "/").last.map(String.init)
    }

    private static func number(_ path: String) -> UInt64? {
        guard case .success(let bytes) = KeptOpenFile.contents(of: path, limit: 64) else { return nil }
        return UInt64(String(decoding: bytes, as: UTF8.self).trimmingLeadingSpaces.trimmingTrailingSpaces.split(separator: "\n").first ?? "")
    }

    /// Each process's DRM descriptors as clients, each client once with every process holding it
    /// (a parent and the child it forked share one open), and their devices, into `reading`.
    package static func add(_ found: [(pid: Int32, infos: [DRMFdinfo])], to clients: inout DRMClients, into reading: inout GPUReading, now: UInt64) {
        var byClient: [String: (info: DRMFdinfo, pids: [Int32])] = [:]
        var order: [String] = []
        for (pid, infos) in found {
            for info in infos {
                guard let key = info.key else { continue }
                if byClient[key] == nil { byClient[key] = (info, []); order.append(key) }
                if !byClient[key]!.pids.contains(pid) { byClient[key]!.pids.append(pid) }
            }
        }
        var devices: [String: Int] = [:]
        for (index, device) in reading.devices.enumerated() where devices[device.id] == nil { devices[device.id] = index }
        for key in order {
            let info = byClient[key]!.info
            let id = info.deviceID
            if devices[id] == nil {
                devices[id] = reading.devices.count
                reading.devices.append(GPUDevice(name: TerminalText.escaped(info.driver ?? "DRM GPU"), id: TerminalText.escaped(id)))
            }
        }
        let seen = order.map { byClient[$0]! }
        // Every client's device is in `devices`: a sysfs node's, or added above.
        reading.clients += clients.pass(seen, now: now) { devices[$0.deviceID]! }
    }

    /// The DRM clients one process holds open (one entry a descriptor; the caller merges them).
    package static func clients(of pid: Int32) -> [DRMFdinfo] {
        var found: [DRMFdinfo] = []
        forEachEntry(in: "/proc/\(pid)/fd") { descriptors, name in
            var status = stat()
            guard fstatat(descriptors, name, &status, 0) == 0, status.st_mode & S_IFMT == S_IFCHR,
                  major(UInt64(status.st_rdev)) == drmMajor else { return }
            guard case .success(let bytes) = KeptOpenFile.contents(of: "/proc/\(pid)/fdinfo/\(name)", limit: 64 << 10),
                  let info = DRMFdinfo.parse(Substring(String(decoding: bytes, as: UTF8.self))) else { return }
            found.append(info)
        }
        return found
    }

    /// The major number of a device number, as glibc's `major()` (a macro Swift does not import).
    package static func major(_ device: UInt64) -> UInt64 { ((device >> 32) & 0xffff_f000) | ((device >> 8) & 0x0fff) }
}
