import PerfHUDSupport
import PerfHUDRecordings

/// What each option and argument takes, in the words of every message about it: a value the
/// parser cannot read (`--tick 100`), one the command refuses (`--tick 20s`), one missing
/// (`--tick -1s`, which reads as an option) all say `--tick wants a duration such as 100ms or 2s,
/// from 1ms to 10s; got '100'`. Tests/EndToEnd/test_usage_messages.py gives every option of
/// every command a bad value and checks that its message comes from here.
enum Accepted {
    /// `command option` where commands differ (`report --format`, `replay --history`), else the
    /// option or the argument (`<pid>`) alone.
    private static let forms: [String: String] = [
        // WatchOptions: attach, run, demo, daemon
        "--tick": "a duration such as 100ms or 2s, from 1ms to 10s",
        "--history": "a duration such as 10m or 1h, at least one --tick",
        "--events": "the path of a socket",
        "--accept-from": "any, same-user or target",
        "--action-threshold": "a number of actions per second above 0, such as 20",
        "--refresh": "a refresh rate from 1 to 1000 Hz, such as 60",
        "--jank-factor": "a number of frame budgets, at least 1, such as 1.5",
        "--frame-window": "a duration such as 10s, longer than 0",
        "--max-action-labels": "a whole number from 1 to 10000",
        "--statsd-udp": "HOST:PORT, such as 127.0.0.1:8125",
        "--leak-window": "a duration such as 5m, at least 1s",
        "--leak-threshold": "a size per hour such as 50MiB/h",
        "--alert": "a condition such as \"cpu_percent > 80 for 20s\"",
        // HUDOptions, ScreenOptions: attach, run, demo (and replay)
        "--duration": "a duration such as 30s or 1m30s, longer than 0",
        "--count": "a whole number of reports, at least 1",
        "--actions-from": "a file, or - for standard input",
        "--record": "the path of the recording to write",
        "--feed": "the path of a socket to make (under 108 bytes)",
        "--output": "hud, plain or json",
        "--report-every": "a duration such as 1s, at least one --tick",
        "--position": "top or bottom",
        "--graph-rows": "a whole number from 0 to 20",
        "--crash-after": "a whole number",
        // GraceOptions: run, demo
        "--grace": "a duration such as 2s, from 0s to 60s",
        // RunOptions
        "--frames": "auto, gl, vulkan, tty, events or none",
        "--frame-gap": "a duration such as 8ms, from 1ms to 1s",
        // attach
        "<pid>": "the PID of a running process, a positive number",
        "<command>": "a command to run: perfhud run [options] [--] CMD [ARGS]",
        // daemon
        "--pid": "the PID of a running process, a positive number, optionally NAME=PID",
        "--pidfile": "the path of a file that holds a PID, optionally NAME=FILE",
        "--match": "an extended regular expression, optionally NAME=REGEX",
        "--unit": "the name of a systemd unit, optionally NAME=UNIT",
        "--units": "a glob of unit names such as '*.service' (each unit is named after itself)",
        "--container": "a container's name or ID (or its first digits), optionally NAME=CONTAINER",
        "--containers": "a glob of container names such as 'web-*' or '*' (each container is named after itself)",
        "--cgroup": "a control group's path such as /system.slice/web.service, optionally NAME=PATH",
        "--pod": "a pod as NAMESPACE/POD, such as default/web-0, optionally NAME=NAMESPACE/POD",
        "--pods": "a glob of NAMESPACE/POD such as 'shop/*' (each pod is named after itself)",
        "--config": "the path of a file of targets, one a line",
        "--max-targets": "a whole number of targets, at least 1",
        "--forget-after": "a duration such as 10m, longer than 0",
        "--metrics-listen": "HOST:PORT, such as 127.0.0.1:9469 or [::1]:9469 (an IPv6 address in brackets)",
        "--log-interval": "a duration such as 1m, longer than 0",
        "--full-every": "a duration such as 15s, longer than 0",
        "--record-max-size": "a size of at least 1MiB, such as 500MiB",
        // top
        "--from": "the http URL of a daemon's metrics, such as http://127.0.0.1:9469",
        "--sort": "cpu, memory, name, fps or actions",
        // emit
        "<kind>": "action, frame or phase",
        "<value>": "the action's label, the frame's milliseconds or the phase's name",
        "--rss-of": "the PID whose resident memory a phase line carries, a number (0: none)",
        // status
        "status --format": "plain, json, waybar, i3bar or tmux",
        "status --tick": "a duration such as 1s, from 100ms to 10s",
        "--target": "a daemon's target, by its label",
        "status --events": "the directory of a daemon's sockets (its --events)",
        // report, export, replay
        "<file>": "a recording made with --record",
        "report --output": "the path of the file to write",
        "export --output": "the path of the file to write",
        "-o": "the path of the file to write",
        "report --format": "markdown, json or html",
        "export --format": "csv, ndjson or openmetrics",
        "--phase": "the name of a phase",
        "--baseline": "a recording made with --record",
        "--fail-on": "a condition such as \"rss_peak_bytes > 200MiB\"",
        "--speed": "a speed from \(ReplayPlayhead.slowest) to \(Int(ReplayPlayhead.fastest)), such as 2 or 0.5",
        "replay --history": "a duration such as 10m, longer than 0",
        // benchmark-sampler, benchmark-client (hidden)
        "--iterations": "a whole number",
        "--burst": "a whole number",
    ]

    /// What `option` (`--tick`, `<pid>`) of `command` takes; nil for one this table lacks.
    static func form(of option: String, in command: String?) -> String? {
        let option = option == "--listen" ? "--metrics-listen" : option
        if let command, let form = forms[command + " " + option] { return form }
        return forms[option]
    }

    /// `--tick wants a duration such as 100ms or 2s, from 1ms to 10s; got '100'`; for an
    /// argument, the command wants it: `attach wants the PID of a running process…; got '-5'`.
    /// - Parameter value: nil when none was given.
    static func complaint(_ option: String, got value: String?, in command: String? = nil) -> String {
        let subject = option.hasPrefix("<") ? (command ?? "perfhud") : option
        let got = value.map { $0.isEmpty ? "; got nothing" : "; got " + quoted($0) } ?? ""
        guard let form = form(of: option, in: command) else { return "\(subject) cannot take \(quoted(value ?? ""))" }
        return "\(subject) wants \(form)\(got)"
    }

    /// A value as typed, quoted and with its control characters escaped.
    static func quoted(_ value: String) -> String { "'" + TerminalText.escaped(value, maxLength: 80) + "'" }
}
