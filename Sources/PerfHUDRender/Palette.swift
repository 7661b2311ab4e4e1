/// SGR colours and attributes, or nothing when colour is off (`--no-color`, `NO_COLOR`).
package struct Palette {
    package let enabled: Bool
    package init(enabled: Bool) { self.enabled = enabled }
    package func bold(_ text: String) -> String { enabled ? "\u{1B}[1m" + text + "\u{1B}[22m" : text }
    package func dim(_ text: String) -> String { enabled ? "\u{1B}[2m" + text + "\u{1B}[22m" : text }
    package func red(_ text: String) -> String { enabled ? "\u{1B}[31m" + text + "\u{1B}[39m" : text }
    package func yellow(_ text: String) -> String { enabled ? "\u{1B}[33m" + text + "\u{1B}[39m" : text }
    package func green(_ text: String) -> String { enabled ? "\u{1B}[32m" + text + "\u{1B}[39m" : text }
    package func cyan(_ text: String) -> String { enabled ? "\u{1B}[36m" + text + "\u{1B}[39m" : text }
    package func color(_ code: String, _ text: String) -> String { enabled ? "\u{1B}[\(code)m" + text + "\u{1B}[39m" : text }
    /// The status line stands out by reverse video, which needs no colour.
    package func inverse(_ text: String) -> String { "\u{1B}[7m" + text + "\u{1B}[0m" }
    /// A figure an `--alert` watches: the alert colour (bold red) while it holds, green while not.
    package func alert(_ holds: Bool, _ text: String) -> String { holds ? red(bold(text)) : green(text) }
    package func threshold(_ value: Double, warn: Double, alarm: Double, _ text: String) -> String {
        value >= alarm ? red(text) : value >= warn ? yellow(text) : green(text)
    }
}
