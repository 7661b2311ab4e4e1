#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSampling
import PerfHUDPipeline
import PerfHUDRender
import PerfHUDTerminal
import PerfHUDOutput

/// `run` and `demo`: starts the program with what the session gives it — the event socket in its
/// environment, the frame hooks (`run`), its share of the screen, the user's terminal settings —
/// and prepares the session's side: frames read from its terminal output, keys passed one by one.
enum ProgramLauncher {
    /// - Parameters:
    ///   - isRun: `run` (an unmodified program the keys go to), not the demo (which reports itself).
    ///   - keyboard: standard input, put in raw mode when reports go to standard output and a person
    ///     types to the program (under the HUD the screen does that).
    package static func launch(_ command: [String], isRun: Bool, configuration: SessionConfiguration, events: SessionEvents,
                       size: TerminalSize, drawsHUD: Bool, keyboard: Terminal, warn: (String) -> Void) throws -> LaunchedProgram {
        var environment = events.receiver.map { ["PERFHUD_SOCKET": $0.path] } ?? [:]
        if isRun, events.receiver != nil {
            let hooks = FrameHooks.environment(for: configuration.frames, warn: warn)
            events.presentHooksInjected = !hooks.isEmpty
            environment.merge(hooks) { $1 }
        }
        // With --include-children the tree's CPU is counted by a control group of its own, where
        // one can be made (`ControlGroupCPU`); else from /proc.
        let program = try LaunchedProgram(command: command, size: size, settings: Terminal.settings(of: STDIN_FILENO),
                                          environment: environment,
                                          controlGroup: configuration.watch.includeChildren ? ControlGroupCPU.make() : nil)
        if isRun && configuration.frames.readsTerminal {
            events.readFrames(fromTerminalOutputWithGap: configuration.frameGapNanoseconds)
        }
        // Plain or JSON reports while a person uses the program: restored on every exit, a crash too.
        if isRun, !drawsHUD, configuration.actionsFrom != "-", Terminal.isTerminal(STDIN_FILENO) {
            keyboard.enter(.raw)
            keyboard.installCrashRestore(restoreSequence: "")
        }
        events.target(launchedPID: program.pid, linkByPID: configuration.watch.eventsPath == nil)
        return program
    }
}
