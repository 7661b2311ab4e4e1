/// "RSS at start" of a run (`rss_start_bytes`, the `.atStart` rule of `RunAggregates`, so the end
/// summary and `report` share it): the value of the first row one tick or more after the start of
/// the run and after the program's last exec. The row taken the instant a program was launched or exec'd shows the loader, not
/// the program (592 KiB for Python, whatever it goes on to take), and a launcher — a pyenv shim,
/// a wrapper script — that execs the real program is not what was measured. A run too short for
/// such a row takes the first row of its last program.
struct ResidentAtStart {
    private let tickSeconds: Double
    private var execs = 0
    private var execAt = 0.0
    private var settled: Double?
    private var firstOfProgram: Double?

    package init(tickSeconds: Double) { self.tickSeconds = tickSeconds }

    /// One row, in time order: when it was taken, the execs seen by then, its RSS.
    package mutating func add(t: Double, execs execsSeen: Int, bytes: Double?) {
        if execsSeen != execs {   // an exec: the program before it does not count
            execs = execsSeen
            execAt = t
            settled = nil
            firstOfProgram = nil
        }
        guard let bytes else { return }
        if firstOfProgram == nil { firstOfProgram = bytes }
        // A hair of slack: a tick's row lands a little before or after its nominal time.
        if settled == nil && t >= execAt + tickSeconds * 0.9 { settled = bytes }
    }

    package var value: Double? { settled ?? firstOfProgram }
}
