/// The table of figures itself (`Figure.all`): one entry a `Field`, in the JSON row's order.
extension Figure {
    package static func size(_ value: Double?) -> UInt64? { value.flatMap { $0 >= 0 && $0 < 1.8e19 ? UInt64($0) : nil } }
    package static func count(_ value: Double?) -> UInt64 { size(value) ?? 0 }


    /// Every field of a tick row, in the JSON row's order (after `time`, `pid` and `alive`).
    public static let all: [Figure] = Field.allCases.map(entry)

    /// The table: what each field is (see `Figure`).
    private static func entry(_ field: Field) -> Figure {
        switch field {
        case .cpu_percent:
            // CSV: psrecord's `cpu` column is this figure.
            // The daemon's gauge is the row's figure (`perfhud top` shows it): not a rate of the counter again.
            return Figure(field, "percent of one CPU", .number(decimals: 2), .target, column: "cpu_centi", storage: .fixed(100),
                          metric: .gauge("perfhud_target_cpu_ratio", "CPU time over wall time of the target's last tick, 1 = one core busy (the JSON row's cpu_percent / 100).",
                                         scale: 0.01),
                          summaries: [.mean("cpu_percent_avg"), .max("cpu_percent_max")], inCSV: false)
        case .cpu_machine_percent:
            return Figure(field, "percent of all CPUs", .number(decimals: 2), .target)
        case .cpu_user_percent:
            return Figure(field, "percent of one CPU", .number(decimals: 2), .target, column: "cpu_user_centi", storage: .fixed(100))
        case .cpu_system_percent:
            return Figure(field, "percent of one CPU", .number(decimals: 2), .target, column: "cpu_system_centi", storage: .fixed(100))
        case .rss_bytes:
            return Figure(field, "bytes", .number(decimals: 0), .target, column: "rss_bytes", storage: .integer,
                          metric: .gauge("perfhud_target_resident_memory_bytes",
                                         "The target's memory counted once: one process's resident set size (statm), a tree's or a group's PSS sum."),
                          summaries: [.atStart("rss_start_bytes"), .max("rss_peak_bytes"), .last("rss_end_bytes")])
        case .pss_bytes:
            return Figure(field, "bytes", .number(decimals: 0), .target, column: "pss_bytes", storage: .integer,
                          metric: .gauge("perfhud_target_proportional_memory_bytes", "Proportional set size (smaps_rollup Pss) of the target's processes, summed; absent where it may not be read."),
                          summaries: [.max("pss_peak_bytes")])
        case .vsize_bytes:
            return Figure(field, "bytes", .number(decimals: 0), .target, column: "vsize_bytes", storage: .integer,
                          metric: .gauge("perfhud_target_virtual_memory_bytes", "Virtual memory size."))
        case .threads:
            return Figure(field, "threads", .number(decimals: 0), .target, column: "threads", storage: .integer, metric: .gauge("perfhud_target_threads", "Threads of the target."))
        case .fps:
            return Figure(field, "frames per second", .number(decimals: 2), .events, column: "fps_centi", storage: .fixed(100),
                          metric: .gauge("perfhud_frames_per_second", "Frames that ended in the last second (the JSON row's fps); absent before the first frame."))
        case .frame_p50_ms:
            return Figure(field, "milliseconds", .number(decimals: 3), .events, column: "p50_us", storage: .fixed(1000))
        case .frame_p95_ms:
            return Figure(field, "milliseconds", .number(decimals: 3), .events, column: "p95_us", storage: .fixed(1000))
        case .frame_p99_ms:
            return Figure(field, "milliseconds", .number(decimals: 3), .events, column: "p99_us", storage: .fixed(1000))
        case .fps_1pct_low:
            return Figure(field, "frames per second", .number(decimals: 2), .events)
        case .janky_frames:
            return Figure(field, "frames", .number(decimals: 2), .events, column: "janky", storage: .real, metric: .counter("perfhud_janky_frames_total", "Frames longer than --jank-factor × the program's recent pace (or × the frame budget with --refresh)."))
        case .dropped_frames:
            return Figure(field, "frames", .number(decimals: 2), .events, column: "dropped", storage: .real, metric: .counter("perfhud_dropped_frames_total", "Σ max(0, round(duration / budget) − 1) over the frames."))
        case .actions_per_second:
            return Figure(field, "actions per second", .number(decimals: 2), .events, column: "aps_centi", storage: .fixed(100),
                          metric: .gauge("perfhud_actions_per_second", "Actions of every label in the last second (the JSON row's actions_per_second)."))
        case .high_frequency_actions:
            return Figure(field, "", .special(.highFrequencyActions), .events)
        case .phase:
            return Figure(field, "", .special(.phase), .events)
        case .events_received:
            return Figure(field, "lines", .number(decimals: 0), .events, column: "received", storage: .integer,
                          metric: .counter("perfhud_events_received_total", "Event lines received."))
        case .events_malformed:
            return Figure(field, "lines", .number(decimals: 0), .events, column: "malformed", storage: .integer,
                          metric: .counter("perfhud_events_malformed_total", "Event lines that could not be parsed."))
        case .events_rejected:
            // The total is recorded; the reasons beside it (rejected_reasons, when they change).
            return Figure(field, "datagrams", .number(decimals: 0), .events, column: "rejected", storage: .integer,
                          metric: .labelled("perfhud_events_rejected_total"))
        case .events_rejected_by_reason:
            return Figure(field, "", .special(.rejectedByReason), .events, nullWithoutEvents: false)
        case .events_ignored:
            return Figure(field, "lines", .number(decimals: 0), .events, column: "ignored", storage: .integer, nullWithoutEvents: false)
        case .frames_total:
            return Figure(field, "frames", .number(decimals: 2), .events, column: "frames_total", storage: .real,
                          metric: .counter("perfhud_frames_total", "Frames the program reported."), nullWithoutEvents: false)
        case .actions_total:
            return Figure(field, "actions", .number(decimals: 2), .events, column: "actions_total", storage: .real,
                          metric: .labelled("perfhud_actions_total"), nullWithoutEvents: false)
        case .frame_source:
            return Figure(field, "", .special(.frameSource), .events)
        case .frames_unreported_reason:
            // Why there is no frame figure (`FramesUnreported`); in the JSON row only while there is one. Recorded
            // as a code (`FramesUnreported.codes`), which the `samples` view turns back into the text.
            return Figure(field, "", .special(.framesUnreportedReason), .events, column: "frames_unreported", storage: .integer,
                          nullWithoutEvents: false)
        case .input_latency_p50_ms:
            return Figure(field, "milliseconds", .number(decimals: 3), .events, column: "latency_p50_us", storage: .fixed(1000))
        case .input_latency_p99_ms:
            return Figure(field, "milliseconds", .number(decimals: 3), .events, column: "latency_p99_us", storage: .fixed(1000))
        case .command:
            return Figure(field, "", .special(.command), .target)
        case .elapsed_seconds:
            // CSV: psrecord's `elapsed_time` column is this figure.
            return Figure(field, "seconds", .number(decimals: 3), .target, column: "t_ms", storage: .fixed(1000), inCSV: false)
        case .rss_trend_bytes_per_second:
            return Figure(field, "bytes per second", .number(decimals: 0), .target, column: "rss_trend", storage: .real)
        case .processes:
            return Figure(field, "processes", .number(decimals: 0), .target, column: "processes", storage: .integer,
                          metric: .gauge("perfhud_target_processes", "Processes summed into the target's figures."))
        case .cpu_seconds_total:
            return Figure(field, "seconds", .number(decimals: 6), .target, column: "cpu_total_us", storage: .fixed(1e6),
                          metric: .labelled("perfhud_target_cpu_seconds_total"))
        case .cpu_wait_percent:
            // Why it is slow (see README, Definitions): `Activity`, derived by `MetricsStore`. The daemon
            // exports the rates as counters of the kernel's own totals (`.kernelTotal`), several figures
            // sharing a family told apart by a label (`kind`, `direction`, `resource`).
            return Figure(field, "percent of one CPU", .number(decimals: 2), .target, since: 4, column: "cpu_wait_centi", storage: .fixed(100),
                          metric: .kernelTotal("perfhud_target_cpu_wait_seconds_total", .cpuWaitSeconds, Help.wait, scale: 0.01),
                          summaries: [.mean("cpu_wait_percent_avg"), .max("cpu_wait_percent_max")])
        case .context_switches_voluntary_per_second:
            return Figure(field, "switches per second", .number(decimals: 2), .target, since: 4, column: "cs_voluntary_centi",
                          storage: .fixed(100), metric: .kernelTotal("perfhud_target_context_switches_total", .voluntarySwitches, Help.switches,
                                                                    labels: [("kind", "voluntary")]),
                          summaries: [.max("context_switches_voluntary_per_second_max")])
        case .context_switches_involuntary_per_second:
            return Figure(field, "switches per second", .number(decimals: 2), .target, since: 4, column: "cs_involuntary_centi",
                          storage: .fixed(100), metric: .kernelTotal("perfhud_target_context_switches_total", .involuntarySwitches, Help.switches,
                                                                    labels: [("kind", "involuntary")]),
                          summaries: [.max("context_switches_involuntary_per_second_max")])
        case .page_faults_minor_per_second:
            return Figure(field, "faults per second", .number(decimals: 2), .target, since: 4, column: "faults_minor_centi", storage: .fixed(100),
                          metric: .kernelTotal("perfhud_target_page_faults_total", .minorFaults, Help.faults, labels: [("kind", "minor")]),
                          summaries: [.max("page_faults_minor_per_second_max")])
        case .page_faults_major_per_second:
            return Figure(field, "faults per second", .number(decimals: 2), .target, since: 4, column: "faults_major_centi", storage: .fixed(100),
                          metric: .kernelTotal("perfhud_target_page_faults_total", .majorFaults, Help.faults, labels: [("kind", "major")]),
                          summaries: [.max("page_faults_major_per_second_max")])
        case .io_read_bytes_per_second:
            return Figure(field, "bytes per second", .number(decimals: 0), .target, since: 4, column: "io_read_bytes", storage: .integer,
                          metric: .kernelTotal("perfhud_target_io_bytes_total", .ioReadBytes, Help.io, labels: [("direction", "read")]),
                          summaries: [.mean("io_read_bytes_per_second_avg"), .max("io_read_bytes_per_second_max")])
        case .io_write_bytes_per_second:
            return Figure(field, "bytes per second", .number(decimals: 0), .target, since: 4, column: "io_write_bytes", storage: .integer,
                          metric: .kernelTotal("perfhud_target_io_bytes_total", .ioWriteBytes, Help.io, labels: [("direction", "write")]),
                          summaries: [.mean("io_write_bytes_per_second_avg"), .max("io_write_bytes_per_second_max")])
        case .io_read_chars_per_second:
            return Figure(field, "bytes per second", .number(decimals: 0), .target, since: 4, column: "io_read_chars", storage: .integer)
        case .io_write_chars_per_second:
            return Figure(field, "bytes per second", .number(decimals: 0), .target, since: 4, column: "io_write_chars", storage: .integer)
        case .fds_open:
            return Figure(field, "descriptors", .number(decimals: 0), .target, since: 4, column: "fds_open", storage: .integer,
                          metric: .gauge("perfhud_target_open_fds", "Open file descriptors of the target (/proc/PID/fd), read once a second."),
                          summaries: [.max("fds_open_max")])
        case .fds_limit:
            return Figure(field, "descriptors", .number(decimals: 0), .target, since: 4, column: "fds_limit", storage: .integer,
                          metric: .gauge("perfhud_target_max_fds", "The target's soft limit of open file descriptors (/proc/PID/limits)."))
        case .rss_anon_bytes:
            return Figure(field, "bytes", .number(decimals: 0), .target, since: 4, column: "rss_anon_bytes", storage: .integer,
                          metric: .gauge("perfhud_target_memory_bytes", Help.memory, labels: [("kind", "anon")]),
                          summaries: [.max("rss_anon_peak_bytes")])
        case .rss_file_bytes:
            return Figure(field, "bytes", .number(decimals: 0), .target, since: 4, column: "rss_file_bytes", storage: .integer,
                          metric: .gauge("perfhud_target_memory_bytes", Help.memory, labels: [("kind", "file")]))
        case .rss_shmem_bytes:
            return Figure(field, "bytes", .number(decimals: 0), .target, since: 4, column: "rss_shmem_bytes", storage: .integer,
                          metric: .gauge("perfhud_target_memory_bytes", Help.memory, labels: [("kind", "shmem")]))
        case .swap_bytes:
            return Figure(field, "bytes", .number(decimals: 0), .target, since: 4, column: "swap_bytes", storage: .integer,
                          metric: .gauge("perfhud_target_memory_bytes", Help.memory, labels: [("kind", "swap")]),
                          summaries: [.max("swap_peak_bytes")])
        case .busiest_threads:
            // perfhud_target_busiest_thread_cpu_ratio and …_busiest_thread_info{thread}: the first of the list.
            return Figure(field, "", .special(.busiestThreads), .target, since: 4, metric: .labelled("perfhud_target_busiest_thread_cpu_ratio"))
        case .cpu_throttled_percent:
            return Figure(field, "percent of the wall time", .number(decimals: 2), .target, since: 4, column: "throttled_centi", storage: .fixed(100),
                          metric: .kernelTotal("perfhud_target_cpu_throttled_seconds_total", .throttledSeconds, Help.throttled, scale: 0.01),
                          summaries: [.mean("cpu_throttled_percent_avg"), .max("cpu_throttled_percent_max")])
        case .pressure_cpu_some_percent:
            return Figure(field, "percent of the wall time", .number(decimals: 2), .target, since: 4, column: "psi_cpu_some_centi",
                          storage: .fixed(100),
                          metric: .kernelTotal("perfhud_target_pressure_seconds_total", .pressureCPUSomeSeconds, Help.pressure, scale: 0.01,
                                               labels: [("resource", "cpu"), ("kind", "some")]),
                          summaries: [.max("pressure_cpu_some_percent_max")])
        case .pressure_cpu_full_percent:
            return Figure(field, "percent of the wall time", .number(decimals: 2), .target, since: 4, column: "psi_cpu_full_centi",
                          storage: .fixed(100),
                          metric: .kernelTotal("perfhud_target_pressure_seconds_total", .pressureCPUFullSeconds, Help.pressure, scale: 0.01,
                                               labels: [("resource", "cpu"), ("kind", "full")]))
        case .pressure_memory_some_percent:
            return Figure(field, "percent of the wall time", .number(decimals: 2), .target, since: 4, column: "psi_memory_some_centi",
                          storage: .fixed(100),
                          metric: .kernelTotal("perfhud_target_pressure_seconds_total", .pressureMemorySomeSeconds, Help.pressure, scale: 0.01,
                                               labels: [("resource", "memory"), ("kind", "some")]),
                          summaries: [.max("pressure_memory_some_percent_max")])
        case .pressure_memory_full_percent:
            return Figure(field, "percent of the wall time", .number(decimals: 2), .target, since: 4, column: "psi_memory_full_centi",
                          storage: .fixed(100),
                          metric: .kernelTotal("perfhud_target_pressure_seconds_total", .pressureMemoryFullSeconds, Help.pressure, scale: 0.01,
                                               labels: [("resource", "memory"), ("kind", "full")]))
        case .pressure_io_some_percent:
            return Figure(field, "percent of the wall time", .number(decimals: 2), .target, since: 4, column: "psi_io_some_centi",
                          storage: .fixed(100),
                          metric: .kernelTotal("perfhud_target_pressure_seconds_total", .pressureIOSomeSeconds, Help.pressure, scale: 0.01,
                                               labels: [("resource", "io"), ("kind", "some")]),
                          summaries: [.max("pressure_io_some_percent_max")])
        case .pressure_io_full_percent:
            return Figure(field, "percent of the wall time", .number(decimals: 2), .target, since: 4, column: "psi_io_full_centi",
                          storage: .fixed(100),
                          metric: .kernelTotal("perfhud_target_pressure_seconds_total", .pressureIOFullSeconds, Help.pressure, scale: 0.01,
                                               labels: [("resource", "io"), ("kind", "full")]))
        case .rss_trend_bytes_per_hour:
            return Figure(field, "bytes per hour", .number(decimals: 0), .target, since: 4, column: "rss_trend_per_hour", storage: .integer,
                          metric: .gauge("perfhud_target_rss_trend_bytes_per_second",
                                         "Slope of a least-squares line through RSS over --leak-window (bytes per second).", scale: 1.0 / 3600),
                          summaries: [.last("rss_trend_bytes_per_hour_end")])
        case .rss_trend_r2:
            return Figure(field, "r²", .number(decimals: 3), .target, since: 4, column: "rss_trend_r2_milli", storage: .fixed(1000))
        case .leak_suspected:
            return Figure(field, "", .boolean, .target, since: 4, column: "leak_suspected", storage: .integer,
                          metric: .gauge("perfhud_target_leak_suspected",
                                         "1 while RSS over a full --leak-window fits a line with r² ≥ 0.8 and a slope ≥ --leak-threshold."),
                          summaries: [.last("leak_suspected"), .max("leak_suspected_ever")], inCSV: true)
        case .oom_score:
            // Which process the kernel kills first when memory runs out (`/proc/PID/oom_score`, 0…2000), read
            // once a second: `Activity.EverySecond.levels`; of several processes, the highest.
            return Figure(field, "score", .number(decimals: 0), .target, since: 5, column: "oom_score", storage: .integer,
                          metric: .gauge("perfhud_target_oom_score",
                                         "The target's /proc/PID/oom_score (0 to 2000): the higher, the sooner the kernel kills it when memory runs out; of several processes, the highest."),
                          summaries: [.max("oom_score_max")])
        // The GPU (`GPUReading`: NVML, DRM fdinfo), read once a second on a thread of its own; format 6.
        case .gpu_percent:
            return Figure(field, "percent of one GPU", .number(decimals: 1), .target, since: 6, column: "gpu_deci", storage: .fixed(10),
                          metric: .gauge("perfhud_target_gpu_busy_ratio",
                                         "Share of a GPU's time the target's work kept it busy over the last second (NVML's per-process SM share, or the busiest DRM engine), 1 = one GPU; absent where unknown.",
                                         scale: 0.01),
                          summaries: [.mean("gpu_percent_avg"), .max("gpu_percent_max")])
        case .gpu_memory_bytes:
            return Figure(field, "bytes", .number(decimals: 0), .target, since: 6, column: "gpu_memory_bytes", storage: .integer,
                          metric: .gauge("perfhud_target_gpu_memory_bytes", "Device memory the target holds (NVML's used GPU memory, or DRM resident memory); absent where unknown."),
                          summaries: [.max("gpu_memory_bytes_max"), .last("gpu_memory_bytes_end")])
        case .gpu_memory_busy_percent:
            return Figure(field, "percent of one GPU", .number(decimals: 1), .target, since: 6, column: "gpu_memory_busy_deci", storage: .fixed(10),
                          summaries: [.max("gpu_memory_busy_percent_max")])
        case .gpu_encoder_percent:
            return Figure(field, "percent of one GPU", .number(decimals: 1), .target, since: 6, column: "gpu_encoder_deci", storage: .fixed(10),
                          summaries: [.max("gpu_encoder_percent_max")])
        case .gpu_decoder_percent:
            return Figure(field, "percent of one GPU", .number(decimals: 1), .target, since: 6, column: "gpu_decoder_deci", storage: .fixed(10),
                          summaries: [.max("gpu_decoder_percent_max")])
        case .gpu_name:
            return Figure(field, "", .special(.gpuName), .target, since: 6)
        case .gpu_device_percent:
            return Figure(field, "percent of the device", .number(decimals: 1), .target, since: 6, column: "gpu_device_deci", storage: .fixed(10),
                          summaries: [.max("gpu_device_percent_max")])
        case .gpu_device_memory_used_bytes:
            return Figure(field, "bytes", .number(decimals: 0), .target, since: 6, column: "gpu_device_memory_used_bytes", storage: .integer,
                          summaries: [.max("gpu_device_memory_used_bytes_max")])
        case .gpu_device_memory_total_bytes:
            return Figure(field, "bytes", .number(decimals: 0), .target, since: 6, column: "gpu_device_memory_total_bytes", storage: .integer)
        case .gpu_temperature_celsius:
            return Figure(field, "degrees Celsius", .number(decimals: 0), .target, since: 6, column: "gpu_temperature", storage: .integer,
                          summaries: [.max("gpu_temperature_celsius_max")])
        case .gpu_power_watts:
            return Figure(field, "watts", .number(decimals: 3), .target, since: 6, column: "gpu_power_mw", storage: .fixed(1000),
                          summaries: [.mean("gpu_power_watts_avg"), .max("gpu_power_watts_max")])
        case .gpu_clock_mhz:
            return Figure(field, "MHz", .number(decimals: 0), .target, since: 6, column: "gpu_clock_mhz", storage: .integer)
        case .gpu_throttle_reasons:
            // NVML's clock event reasons, a bit set (docs/figures.md lists the bits); 0: none.
            return Figure(field, "bit set", .number(decimals: 0), .target, since: 6, column: "gpu_throttle_reasons", storage: .integer,
                          inCSV: true)
        case .gpu_unreported_reason:
            // Why there is no GPU figure (`GPUUnreported`); recorded as a code, as frames_unreported_reason.
            return Figure(field, "", .special(.gpuUnreportedReason), .target, since: 6, column: "gpu_unreported", storage: .integer)
        // The network (`NetworkMonitor`: sock_diag, the namespace's interfaces), read once a second on a thread of its own; format 7.
        case .net_tx_bytes_per_second:
            return Figure(field, "bytes per second", .number(decimals: 0), .target, since: 7, column: "net_tx_rate", storage: .integer,
                          summaries: [.mean("net_tx_bytes_per_second_avg"), .max("net_tx_bytes_per_second_max")])
        case .net_rx_bytes_per_second:
            return Figure(field, "bytes per second", .number(decimals: 0), .target, since: 7, column: "net_rx_rate", storage: .integer,
                          summaries: [.mean("net_rx_bytes_per_second_avg"), .max("net_rx_bytes_per_second_max")])
        case .net_tx_bytes_total:
            return Figure(field, "bytes", .number(decimals: 0), .target, since: 7, column: "net_tx_total", storage: .integer,
                          metric: .counter("perfhud_target_network_transmit_bytes_total", Help.networkBytes("sent", "acknowledged by the peer")),
                          summaries: [.last("net_tx_bytes_total")])
        case .net_rx_bytes_total:
            return Figure(field, "bytes", .number(decimals: 0), .target, since: 7, column: "net_rx_total", storage: .integer,
                          metric: .counter("perfhud_target_network_receive_bytes_total", Help.networkBytes("received", "received")),
                          summaries: [.last("net_rx_bytes_total")])
        case .tcp_connections:
            return Figure(field, "connections", .number(decimals: 0), .target, since: 7, column: "tcp_connections", storage: .integer,
                          metric: .gauge("perfhud_target_tcp_connections", "Established TCP connections of the target's sockets (sock_diag), read once a second."),
                          summaries: [.max("tcp_connections_max")])
        case .tcp_retransmits_per_second:
            return Figure(field, "segments per second", .number(decimals: 2), .target, since: 7, column: "tcp_retrans_centi", storage: .fixed(100),
                          summaries: [.max("tcp_retransmits_per_second_max")])
        case .tcp_retransmits_total:
            return Figure(field, "segments", .number(decimals: 0), .target, since: 7, column: "tcp_retrans_total", storage: .integer,
                          metric: .counter("perfhud_target_tcp_retransmits_total",
                                           "TCP segments the target's sockets retransmitted since perfhud started watching (tcp_info total_retrans)."),
                          summaries: [.last("tcp_retransmits_total")])
        case .tcp_retransmit_percent:
            return Figure(field, "percent of data segments", .number(decimals: 2), .target, since: 7, column: "tcp_retrans_share_centi",
                          storage: .fixed(100),
                          metric: .gauge("perfhud_target_tcp_retransmit_ratio",
                                         "Retransmitted over data segments the target's TCP sockets sent in the last second (0 to 1).", scale: 0.01),
                          summaries: [.max("tcp_retransmit_percent_max")])
        case .tcp_rtt_ms:
            return Figure(field, "milliseconds", .number(decimals: 3), .target, since: 7, column: "tcp_rtt_us", storage: .fixed(1000),
                          metric: .gauge("perfhud_target_tcp_rtt_seconds",
                                         "Mean smoothed round-trip time of the target's established TCP connections (tcp_info rtt); absent without one.",
                                         scale: 0.001),
                          summaries: [.mean("tcp_rtt_ms_avg"), .max("tcp_rtt_ms_max")])
        case .net_source:
            // Where the bytes come from (`NetworkSource`); recorded as a code.
            return Figure(field, "", .special(.netSource), .target, since: 7, column: "net_source", storage: .integer)
        case .net_unreported_reason:
            // Why a network figure is unknown or part of the traffic is not counted (`NetworkUnreported`); recorded as a code.
            return Figure(field, "", .special(.netUnreportedReason), .target, since: 7, column: "net_unreported", storage: .integer)
        case .memory_limit_bytes:
            // The smallest memory limit on the target's control group and those above it (cgroup v2
            // memory.max, v1 memory.limit_in_bytes: `ControlGroupMemoryLimit`), read once a second;
            // null where none applies. Format 8.
            return Figure(field, "bytes", .number(decimals: 0), .target, since: 8, column: "memory_limit_bytes", storage: .integer,
                          metric: .gauge("perfhud_target_memory_limit_bytes",
                                         "The smallest memory limit on the target's control group and those above it (cgroup v2 memory.max, v1 memory.limit_in_bytes); absent where none applies."),
                          summaries: [.min("memory_limit_bytes_min")])
        case .rss_sum_bytes:
            // The plain sum of its processes' RSS (statm), as htop and psrecord sum a tree: a page
            // two of them share counts twice. One process's is its RSS. Format 9.
            return Figure(field, "bytes", .number(decimals: 0), .target, since: 9, column: "rss_sum_bytes", storage: .integer,
                          metric: .gauge("perfhud_target_resident_memory_sum_bytes",
                                         "Resident set sizes of the target's processes summed (statm): a page two of them share counts twice."),
                          summaries: [.max("rss_sum_peak_bytes")])
        case .pss_age_seconds:
            // How old the oldest reading in pss_bytes is (0: all read at this row's tick), where
            // smaps_rollup of a big tree costs more than 1 % of a core to read every second
            // (`ProportionalMemory`). Format 9.
            return Figure(field, "seconds", .number(decimals: 3), .target, since: 9, column: "pss_age_ms", storage: .fixed(1000),
                          metric: .gauge("perfhud_target_proportional_memory_age_seconds",
                                         "How old the oldest smaps_rollup reading in perfhud_target_proportional_memory_bytes is."))
        case .memory_unreported_reason:
            // Why pss_bytes (and a tree's rss_bytes, its PSS sum) is null (`MemoryUnreported`); recorded as a code. Format 9.
            return Figure(field, "", .special(.memoryUnreportedReason), .target, since: 9, column: "memory_unreported", storage: .integer)
        case .oom_kills:
            // Processes the OOM killer killed in the target's control group since perfhud began
            // to watch it (`ControlGroupOOMKills`: memory.events or memory.oom_control oom_kill). Format 9.
            return Figure(field, "processes", .number(decimals: 0), .target, since: 9, column: "oom_kills", storage: .integer,
                          metric: .counter("perfhud_target_oom_kills_total",
                                           "Processes the OOM killer killed in the target's control group since perfhud began to watch it (memory.events or memory.oom_control oom_kill)."),
                          summaries: [.last("oom_kills")])
        case .oom_killed:
            // The target ended as the OOM killer killed in its group: the exit row says `true`
            // (the other rows leave the key out). Format 9.
            return Figure(field, "", .special(.oomKilled), .target, since: 9, column: "oom_killed", storage: .integer,
                          summaries: [.max("oom_killed")])
        case .tcp_connections_opened_total:
            // Connected or accepted since perfhud started watching (`TCPAccounting.opened`). Format 9.
            return Figure(field, "connections", .number(decimals: 0), .target, since: 9, column: "tcp_opened_total", storage: .integer,
                          metric: .counter("perfhud_target_tcp_connections_opened_total",
                                           "TCP connections the target's processes opened or accepted since perfhud started watching (sock_diag; an accepted one shorter than a second by its destroy event)."),
                          summaries: [.last("tcp_connections_opened_total")])
        case .tcp_connections_opened_per_second:
            return Figure(field, "connections per second", .number(decimals: 2), .target, since: 9, column: "tcp_opened_centi", storage: .fixed(100),
                          summaries: [.max("tcp_connections_opened_per_second_max")])
        case .cpu_limit_cores:
            // The smallest CPU quota on the target's control group and those above it
            // (`ControlGroupCPULimit`), read with the memory limit; null where none applies. Format 10.
            return Figure(field, "cores", .number(decimals: 2), .target, since: 10, column: "cpu_limit_centi", storage: .fixed(100),
                          metric: .gauge("perfhud_target_cpu_limit_cores",
                                         "The smallest CPU quota on the target's control group and those above it, in cores (cgroup v2 cpu.max, v1 cpu.cfs_quota_us over cpu.cfs_period_us); absent where none applies."),
                          summaries: [.min("cpu_limit_cores_min")])
        case .group_memory_bytes:
            // The whole group's memory as the kernel counts it for the group (`GroupMemory`): a
            // unit's, a container's, a --cgroup's; null for the other targets. Format 10.
            return Figure(field, "bytes", .number(decimals: 0), .target, since: 10, column: "group_memory_bytes", storage: .integer,
                          metric: .gauge("perfhud_target_group_memory_bytes",
                                         "Memory charged to the target's control group (cgroup v2 memory.current, v1 memory.usage_in_bytes): page cache and kernel memory included, what its memory limit holds; absent where the target is not one group."),
                          summaries: [.max("group_memory_peak_bytes")])
        case .group_working_set_bytes:
            return Figure(field, "bytes", .number(decimals: 0), .target, since: 10, column: "group_working_set_bytes", storage: .integer,
                          metric: .gauge("perfhud_target_group_working_set_bytes",
                                         "The control group's memory less its inactive file cache: the kubelet's working set and docker stats' memory usage; absent where the target is not one group."),
                          summaries: [.max("group_working_set_peak_bytes")])
        case .group_anon_bytes:
            return Figure(field, "bytes", .number(decimals: 0), .target, since: 10, column: "group_anon_bytes", storage: .integer,
                          metric: .gauge("perfhud_target_group_memory_stat_bytes", Help.groupMemory, labels: [("kind", "anon")]))
        case .group_file_bytes:
            return Figure(field, "bytes", .number(decimals: 0), .target, since: 10, column: "group_file_bytes", storage: .integer,
                          metric: .gauge("perfhud_target_group_memory_stat_bytes", Help.groupMemory, labels: [("kind", "file")]))
        case .group_kernel_bytes:
            return Figure(field, "bytes", .number(decimals: 0), .target, since: 10, column: "group_kernel_bytes", storage: .integer,
                          metric: .gauge("perfhud_target_group_memory_stat_bytes", Help.groupMemory, labels: [("kind", "kernel")]))
        case .exit:
            return Figure(field, "", .special(.exitStatus), .target)
        }
    }

    /// The help of the metric families several figures share (one text a family).
    private enum Help {
        static let wait = "Time the target's threads were runnable but waiting for a CPU (run-queue delay of /proc/PID/task/*/schedstat, summed over threads, since perfhud watches them)."
        static let switches = "Context switches of the target's threads (task/*/status, since perfhud watches them), by kind: voluntary (it waited) or involuntary (preempted)."
        static let faults = "Page faults of the target since it started (/proc/PID/stat), by kind: minor (no storage read) or major (read from storage)."
        static let io = "Bytes the target fetched from or sent to storage (/proc/PID/io read_bytes, write_bytes), by direction; absent where it may not be read."
        static let memory = "Resident memory of the target by kind (RssAnon, RssFile, RssShmem of /proc/PID/status) and its swapped-out memory (VmSwap, kind swap)."
        static let groupMemory = "The target's control group's memory by kind (memory.stat anon, file; kernel, or v1 total_rss, total_cache and memory.kmem.usage_in_bytes); absent where the target is not one group."
        static let throttled = "Time the target's control group was throttled by its CPU quota (cpu.stat); 0 without a quota."
        static func networkBytes(_ verb: String, _ tcp: String) -> String {
            "Bytes the target \(verb) since perfhud started watching it: TCP payload \(tcp) (sock_diag tcp_info), or every protocol where net_source is netns (its namespace's interfaces) or unit (systemd's IP accounting)."
        }
        static let pressure = "Time some (or all: kind full) tasks of the target's cgroup v2 group stalled on a resource (*.pressure total); absent without one."
    }

    /// The fields of the rows a recording of `format` replays (those its live run printed).
    public static func inFormat(_ format: Int64) -> [Figure] { format >= Recording.formatVersion ? all : all.filter { $0.since <= format } }

    /// The recorded figures, in `sample_log`'s order after its leading columns.
    package static let recorded: [Figure] = all.filter { $0.column != nil && $0.column != "t_ms" }

    /// The figures `export --format csv` has a column of, after psrecord's, in the row's order.
    public static let csvColumns: [Figure] = all.filter(\.inCSV)

    /// The JSON keys printed as null when a session has no event socket (docs/figures.md's list).
    public static let eventKeys: [String] = all.filter { $0.source == .events && $0.nullWithoutEvents }.map(\.name)
}
