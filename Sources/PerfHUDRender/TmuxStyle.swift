/// The HUD's lines, drawn with SGR escapes for a terminal, as tmux status-line text (`--tmux`):
/// each escape becomes tmux's own style syntax (`#[fg=red,bold]`), and every `#` of the text is
/// doubled so that nothing in a program's name or an action's label is read as a format. The
/// escapes are all perfhud's own (`Palette`): untrusted text reaches the line escaped already
/// (`TerminalText.escaped`), so no ESC in it is anybody else's.
public enum TmuxStyle {
    public static func line(fromSGR text: String) -> String {
        var out = ""
        var index = text.unicodeScalars.startIndex
        let scalars = text.unicodeScalars
        while index < scalars.endIndex {
            let scalar = scalars[index]
            if scalar == "\u{1B}", scalars.index(after: index) < scalars.endIndex, scalars[scalars.index(after: index)] == "[" {
                // CSI parameters up to the final byte; only SGR (`m`) is ours to translate.
                var end = scalars.index(index, offsetBy: 2)
                var parameters = ""
                while end < scalars.endIndex, (0x30...0x3F).contains(scalars[end].value) {
                    parameters.unicodeScalars.append(scalars[end])
                    end = scalars.index(after: end)
                }
                if end < scalars.endIndex {
                    if scalars[end] == "m" { out += style(parameters) }
                    index = scalars.index(after: end)
                    continue
                }
                break
            }
            if scalar == "#" { out += "##" } else if scalar.value >= 0x20 && scalar.value != 0x7F { out.unicodeScalars.append(scalar) }
            index = scalars.index(after: index)
        }
        return out
    }

    private static let names = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"]

    /// `1;31` → `#[bold,fg=red]`; an empty list (`ESC[m`) is a reset.
    static func style(_ parameters: String) -> String {
        let codes = parameters.isEmpty ? [0] : parameters.split(separator: ";", omittingEmptySubsequences: false).map { Int($0) ?? 0 }
        var parts: [String] = []
        for code in codes {
            switch code {
            case 0: parts.append("default")
            case 1: parts.append("bold")
            case 2: parts.append("dim")
            case 22: parts += ["nobold", "nodim"]
            case 7: parts.append("reverse")
            case 27: parts.append("noreverse")
            case 30...37: parts.append("fg=" + names[code - 30])
            case 39: parts.append("fg=default")
            case 40...47: parts.append("bg=" + names[code - 40])
            case 49: parts.append("bg=default")
            case 90...97: parts.append("fg=bright" + names[code - 90])
            default: continue
            }
        }
        return parts.isEmpty ? "" : "#[" + parts.joined(separator: ",") + "]"
    }
}
