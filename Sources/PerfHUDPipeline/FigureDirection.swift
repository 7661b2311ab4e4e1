/// Which way of a figure is good, declared for every figure of the table (`Figure.better`), every
/// run figure (`RunFigure.better`) and every phase figure (`PhaseFigure.better`): the HTML report
/// marks a change against a baseline better or worse by it, and nothing guesses it from a key.
/// Switches without a default, so a new figure does not compile until it says.
extension Figure {
    public enum Better: Sendable, Equatable {
        /// More is better (frames a second).
        case higher
        /// Less is better (CPU, memory, frame times, stalls, faults, retransmits).
        case lower
        /// Neither: a count of what the program chose to do, a limit, a name, a device's state.
        case neither
    }

    /// Which way of `field` is good.
    package static func better(_ field: Field) -> Better {
        switch field {
        case .fps, .fps_1pct_low:
            return .higher
        case .cpu_percent, .cpu_machine_percent, .cpu_user_percent, .cpu_system_percent, .cpu_seconds_total, .cpu_wait_percent,
             .cpu_throttled_percent, .rss_bytes, .pss_bytes, .rss_anon_bytes, .rss_file_bytes, .rss_shmem_bytes, .swap_bytes,
             .rss_trend_bytes_per_second, .rss_trend_bytes_per_hour, .leak_suspected, .oom_score,
             .frame_p50_ms, .frame_p95_ms, .frame_p99_ms, .janky_frames, .dropped_frames, .input_latency_p50_ms, .input_latency_p99_ms,
             .context_switches_voluntary_per_second, .context_switches_involuntary_per_second,
             .page_faults_minor_per_second, .page_faults_major_per_second,
             .io_read_bytes_per_second, .io_write_bytes_per_second, .io_read_chars_per_second, .io_write_chars_per_second, .fds_open,
             .pressure_cpu_some_percent, .pressure_cpu_full_percent, .pressure_memory_some_percent, .pressure_memory_full_percent,
             .pressure_io_some_percent, .pressure_io_full_percent,
             .tcp_retransmits_per_second, .tcp_retransmits_total, .tcp_retransmit_percent, .tcp_rtt_ms,
             .events_malformed, .events_rejected, .rss_sum_bytes, .oom_kills, .oom_killed,
             .group_memory_bytes, .group_working_set_bytes, .group_anon_bytes, .group_file_bytes, .group_kernel_bytes:
            return .lower
        case .vsize_bytes, .threads, .processes, .actions_per_second, .high_frequency_actions, .phase, .events_received,
             .events_rejected_by_reason, .events_ignored, .frames_total, .actions_total, .frame_source, .frames_unreported_reason,
             .command, .elapsed_seconds, .fds_limit, .busiest_threads, .rss_trend_r2, .memory_limit_bytes, .cpu_limit_cores, .exit,
             .gpu_percent, .gpu_memory_bytes, .gpu_memory_busy_percent, .gpu_encoder_percent, .gpu_decoder_percent, .gpu_name,
             .gpu_device_percent, .gpu_device_memory_used_bytes, .gpu_device_memory_total_bytes, .gpu_temperature_celsius,
             .gpu_power_watts, .gpu_clock_mhz, .gpu_throttle_reasons, .gpu_unreported_reason,
             .net_tx_bytes_per_second, .net_rx_bytes_per_second, .net_tx_bytes_total, .net_rx_bytes_total, .tcp_connections, .tcp_connections_opened_total, .tcp_connections_opened_per_second,
             .net_source, .net_unreported_reason, .pss_age_seconds, .memory_unreported_reason:
            return .neither
        }
    }
}

extension RunFigure {
    /// Which way of it is good.
    public var better: Figure.Better {
        switch self {
        case .fps_avg, .fps_1pct_low, .fps_0_1pct_low: return .higher
        case .frame_p50_ms, .frame_p97_ms, .frame_p99_ms, .frame_p99_9_ms, .janky_frames, .dropped_frames: return .lower
        case .duration_s, .samples, .frames, .actions_total: return .neither
        }
    }
}

extension PhaseFigure {
    /// Which way of it is good.
    public var better: Figure.Better {
        switch self {
        case .fps_avg, .fps_1pct_low: return .higher
        case .kept_bytes, .kept_bytes_max, .rss_entry_bytes, .rss_exit_bytes: return .lower
        case .visits, .time_s: return .neither
        }
    }
}
