/// A thread and the CPU it used over the last second (100 = one core).
public struct BusyThread: Equatable {
    public var pid: Int32
    public var tid: Int32
    public var name: String
    public var cpuPercent: Double
    public init(pid: Int32, tid: Int32, name: String, cpuPercent: Double) {
        self.pid = pid; self.tid = tid; self.name = name; self.cpuPercent = cpuPercent
    }
}
