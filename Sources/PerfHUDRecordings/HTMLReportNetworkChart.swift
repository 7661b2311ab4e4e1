import PerfHUDSupport
import PerfHUDPipeline

extension HTMLReportCharts {
    static let sentColor = "#d35400", receivedColor = "#27ae60"

    /// Bytes sent and received each second (`net_tx_bytes_per_second`, `net_rx_bytes_per_second`),
    /// and the connections opened each second where counted: the run's network beside its CPU and
    /// memory. Empty where the recording has no network figures (before format 7, or not read).
    package static func network(_ run: HTMLReport.Run, baseline: HTMLReport.Run?, duration: Double, bands: [SVGChart.Band]) -> String {
        let samples = run.recording.samples
        guard samples.contains(where: { $0.figures.netBox?.value.txBytesPerSecond != nil }) else { return "" }
        var chart = SVGChart(title: "Network", axisTitle: "bytes each second, sent and received", axis: .bytesPerSecond, duration: duration, bands: bands)
        if let baseline, baseline.recording.samples.contains(where: { $0.figures.netBox?.value.txBytesPerSecond != nil }) {
            chart.lines.append(Line(name: "baseline sent", points: baseline.recording.samples.map { ($0.t, $0.figures.netBox?.value.txBytesPerSecond) },
                                    color: baselineColor, dashed: true, opacity: 0.7))
        }
        chart.lines.append(Line(name: "sent", points: samples.map { ($0.t, $0.figures.netBox?.value.txBytesPerSecond) }, color: sentColor))
        chart.lines.append(Line(name: "received", points: samples.map { ($0.t, $0.figures.netBox?.value.rxBytesPerSecond) }, color: receivedColor))
        if let source = samples.last(where: { $0.figures.netBox?.value.source != nil })?.figures.net.source {
            chart.notes.append("source: " + source + " (docs/network.md)")
        }
        // What the totals lack, as the last row read says it (not the first rows' `not read yet`).
        if let reason = samples.last(where: { $0.figures.netBox?.value.txBytesTotal != nil })?.figures.net.unreportedReason {
            chart.notes.append(reason)
        }
        return chart.html()
    }
}
