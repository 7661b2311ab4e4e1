/// The names that are figures' but not one tick figure's, declared once beside the table of
/// figures (`Figure.all`): the run figures `report` has besides the table's summaries, a phase's
/// own, and the target's Prometheus series that no single figure fills. Each is a contract as the
/// JSON row's keys are (`report`'s JSON, `--fail-on`, the daemon's exposition): code names them by
/// their case, never as a string again (Tests/EndToEnd/test_figure_names.py fails on one).

/// A run figure that summarises no tick figure: the run's extent, and those of every frame and
/// action of the run (`RunFrames`, `RunActions`), in `report`'s order.
public enum RunFigure: String, CaseIterable, Sendable {
    case duration_s, samples
    case frames, fps_avg, frame_p50_ms, frame_p97_ms, frame_p99_ms, frame_p99_9_ms, fps_1pct_low, fps_0_1pct_low, janky_frames
    case dropped_frames, actions_total

    /// `report`'s key.
    public var key: String { rawValue }
    /// Its unit, in the words of the table's (`Figure.unit`).
    public var unit: String {
        switch self {
        case .duration_s: return "seconds"
        case .samples: return "rows"
        case .frames, .janky_frames, .dropped_frames: return "frames"
        case .fps_avg, .fps_1pct_low, .fps_0_1pct_low: return "frames per second"
        case .frame_p50_ms, .frame_p97_ms, .frame_p99_ms, .frame_p99_9_ms: return "milliseconds"
        case .actions_total: return "actions"
        }
    }
    /// Before the table's summaries: the run's extent.
    public static let extent: [RunFigure] = [.duration_s, .samples]
    /// After them: every frame's and action's.
    public static let ofFramesAndActions: [RunFigure] = allCases.filter { !extent.contains($0) }
}

/// A phase's own figures (`phase.NAME.KEY` of `--fail-on`), besides the table's summaries over
/// its ticks.
public enum PhaseFigure: String, CaseIterable, Sendable {
    case visits, time_s, kept_bytes, kept_bytes_max, rss_entry_bytes, rss_exit_bytes
    case fps_avg, fps_1pct_low

    public var key: String { rawValue }
    public var unit: String {
        switch self {
        case .visits: return "visits"
        case .time_s: return "seconds"
        case .kept_bytes, .kept_bytes_max, .rss_entry_bytes, .rss_exit_bytes: return "bytes"
        case .fps_avg, .fps_1pct_low: return "frames per second"
        }
    }
}

/// A target's Prometheus series that no one tick figure fills (the table's entries name the rest:
/// `Figure.metric`): the daemon writes them, `export --format openmetrics` writes those a
/// recording has, `perfhud top` reads them.
public enum TargetSeries: String, CaseIterable, Sendable {
    case perfhud_target_up, perfhud_target_info, perfhud_target_start_time_seconds
    case perfhud_phase_info, perfhud_frame_source_info, perfhud_target_busiest_thread_info
    case perfhud_high_frequency_action_rate, perfhud_frame_duration_seconds
    case perfhud_target_alert

    public var name: String { rawValue }
}

extension Figure {
    /// The Prometheus name the daemon exports `field` under (a table entry with a metric).
    public static func metricName(_ field: Field) -> String {
        guard let metric = Figure[field].metric else { preconditionFailure("the table of figures exports no \(field.rawValue)") }
        return metric.name
    }
}
