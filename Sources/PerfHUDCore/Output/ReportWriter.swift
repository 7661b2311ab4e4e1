/// `--output plain|json` (live or replayed): one report a line on standard output, every tick or every
/// `--report-every`. A reader that goes away (a closed pipe) is remembered: the session then ends.
final class ReportWriter {
    private let format: SessionConfiguration.Output
    private let output: Terminal
    private let tickNanoseconds: UInt64
    private let everyNanoseconds: UInt64
    private var last: UInt64?

    init(format: SessionConfiguration.Output, tickNanoseconds: UInt64, everyNanoseconds: UInt64?, output: Terminal) {
        self.format = format
        self.output = output
        self.tickNanoseconds = tickNanoseconds
        self.everyNanoseconds = everyNanoseconds ?? tickNanoseconds
    }

    convenience init(configuration: SessionConfiguration, output: Terminal) {
        self.init(format: configuration.output, tickNanoseconds: configuration.watch.tickNanoseconds,
                  everyNanoseconds: configuration.reportEveryNanoseconds, output: output)
    }

    var readerGone: Bool { output.isClosed }

    /// Writes `report` if a row is due at `now` (the first always; then every `--report-every`,
    /// give or take half a tick). - Returns: whether a row was written.
    func offer(_ report: Report, at now: UInt64, commandName: String, status: TargetStatus, events: EventSnapshot?) -> Bool {
        if let last, now &- last + tickNanoseconds / 2 < everyNanoseconds { return false }
        last = now
        write(report, commandName: commandName, status: status, events: events)
        return true
    }

    func write(_ report: Report, commandName: String, status: TargetStatus, events: EventSnapshot?) {
        let line = format == .json
            ? ReportFormatter.json(report, commandName: commandName, status: status, events: events)
            : ReportFormatter.plain(report, commandName: commandName, status: status, events: events)
        output.write(line + "\n")
    }
}
