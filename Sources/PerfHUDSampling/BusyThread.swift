/// A thread and the CPU it used over the last second (100 = one core).
public struct BusyThread: Equatable, Sendable {
    public var pid: Int32
    public var tid: Int32
    public var name: String
    public var cpuPercent: Double
    public init(pid: Int32, tid: Int32, name: String, cpuPercent: Double) {
        self.pid = pid; self.tid = tid; self.name = name; self.cpuPercent = cpuPercent
    }
}

extension BusyThread {
    /// The thread perfhud's frame hooks run inside the target (`Sources/FrameHooks/common.c`
    /// names it): its CPU is perfhud's cost, not the program's work, and is named so wherever a
    /// busiest thread is shown (the details line, the rows, the recording, `report`).
    static let frameHookThread = "perfhud-flush"

    /// A thread's `comm` as shown: perfhud's own hook thread said to be perfhud's, in a name short
    /// enough for the details line (16 characters).
    static func shownName(_ name: String) -> String {
        name == frameHookThread ? "perfhud's hook" : name
    }
}
