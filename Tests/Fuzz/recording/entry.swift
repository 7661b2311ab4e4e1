// A recording someone sent (a CI artifact, a file from a server): whatever its bytes, reading it
// either fails with a data error (65) or gives a recording whose every figure can be summarized
// and turned into rows without a trap. The bytes go to a file because SQLite reads files.
import PerfHUDSupport
import PerfHUDPipeline
import PerfHUDRecordings

#if canImport(Glibc)
import Glibc
#endif

let path: String = {
    var template = Array("/tmp/perfhud-fuzz-recording-XXXXXX".utf8CString)
    let descriptor = mkstemp(&template)
    precondition(descriptor >= 0)
    close(descriptor)
    return String(cString: template)
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    for suffix in ["-wal", "-shm", "-journal"] { unlink(path + suffix) }
    let descriptor = open(path, O_WRONLY | O_TRUNC)
    precondition(descriptor >= 0 && write(descriptor, data, size) == size)
    close(descriptor)
    do {
        let recording = try Recording(path: path)
        let summary = RecordingSummary(recording)
        _ = SummaryFormatter.json(summary, recording: recording, baseline: summary)
        _ = SummaryFormatter.markdown(summary, recording: recording, baseline: summary)
        let run = HTMLReport.Run(recording: recording, summary: summary, path: "fuzz.db")
        _ = HTMLReport.page(run, baseline: run)
        let rows = RecordingRows(recording)
        for index in 0..<rows.count {
            let row = rows.row(index)
            _ = RowFormatter.json(row.figures, commandName: row.commandName, status: row.status, events: row.events)
            _ = RowFormatter.plain(row.figures, commandName: row.commandName, status: row.status, events: row.events)
        }
        var cursor = ReplayCursor(rows: rows, capacity: 16, historySeconds: 1)
        for sample in recording.samples.reversed().prefix(8) { _ = cursor.move(to: sample.t) }
    } catch let error as PerfHUDError {
        precondition(error.exitStatus == .data || error.exitStatus == .noInput, "\(error)")
        precondition(!error.message.contains("\n"), "a message of more than one line")
    } catch {
        preconditionFailure("an error that is not a PerfHUDError: \(error)")
    }
    return 0
}
