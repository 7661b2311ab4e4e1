#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport
import PerfHUDPipeline
import PerfHUDRender

/// How a HUD session (`attach`, `run`, `demo`) samples and reports; filled from the command line.
public struct SessionConfiguration {
    public enum Output: String, CaseIterable { case hud, plain, json }

    /// What the daemon shares: tick, history, children, the event stream.
    public var watch = WatchConfiguration()
    public var output: Output = .hud
    /// `perfhud status --follow`: the rows are a status bar's lines of this format (`StatusText`).
    public var statusFormat: StatusFormat?
    /// Plain and JSON report every this often (default: every tick).
    public var reportEveryNanoseconds: UInt64?
    public var durationNanoseconds: UInt64?
    public var count: Int?
    /// `--grace`: how long a program perfhud ends (`--duration`, `--count`, `q`) has between
    /// SIGTERM and SIGKILL.
    public var graceNanoseconds: UInt64 = 2_000_000_000
    public var style = HUDStyle()
    /// `--actions-from FILE|-`: a reducer log to read actions from, followed as it grows.
    public var actionsFrom: String?
    /// `--actions-from-output` (run): read actions from the program's own output.
    public var actionsFromOutput = false
    /// `--frames` (run): where frames of the program come from.
    public var frames = FrameMode.auto
    /// `--frame-gap`: the quiet that ends an output burst of a terminal program (one frame).
    public var frameGapNanoseconds: UInt64 = 8_000_000
    /// `--record FILE`: the session is recorded there (see `Recorder`).
    public var recordPath: String?
    /// `--feed PATH`: the JSON rows of the ticks to any number of readers of this Unix socket.
    public var feedPath: String?
    /// The run's key figures under the program's output when a HUD session ends (`--no-summary`: no).
    public var summary = true
    /// perfhud's version, for the recording's metadata.
    public var version = ""
    /// Whether the session reads the "why" figures (`Activity`): the rows and the recording always
    /// carry them; the HUD needs them only where it shows them (its details line).
    public var showsDetails: Bool {
        get { style.showsDetails }
        set { style.showsDetails = newValue }
    }
    public var collectsActivity: Bool {
        if environmentFlag(Self.noActivityVariable) { return false }
        return output != .hud || recordPath != nil || showsDetails
    }
    /// Set (to anything but empty or 0) to read none of the "why" figures (they print null): to
    /// measure what they cost (Benchmarks/why.sh) and to troubleshoot.
    public static let noActivityVariable = "PERFHUD_NO_WHY"
    /// Test hook: crash on purpose after this many reports, to test the crash restore path.
    public var crashAfterReports: Int?

    public init() {}
}

/// `--frames`: which frames of a program perfhud runs are measured.
public enum FrameMode: String, CaseIterable {
    /// Every source: the program's events, the OpenGL and Vulkan hooks, its terminal output.
    case auto
    case gl, vulkan, tty
    /// The program's own `perfhud.frame` events only: nothing injected, the output not read for frames.
    case events
    /// Nothing injected and the output not read for frames (what the program sends still counts).
    case none

    public var injectsGL: Bool { self == .auto || self == .gl }
    public var injectsVulkan: Bool { self == .auto || self == .vulkan }
    public var readsTerminal: Bool { self == .auto || self == .tty }
}
