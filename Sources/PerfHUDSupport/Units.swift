/// Human units for the HUD and plain output.
public enum Units {
    /// `412.3 MiB`, `1.21 GiB`, `512 KiB`, `0 B`.
    public static func bytes(_ value: Double) -> String {
        let magnitude = abs(value)
        let sign = value < 0 ? "-" : ""
        if magnitude >= 1024 * 1024 * 1024 {
            let gib = magnitude / (1024 * 1024 * 1024)
            return sign + twoDecimals(gib) + " GiB"
        }
        if magnitude >= 1024 * 1024 { return sign + String(format1: magnitude / (1024 * 1024)) + " MiB" }
        if magnitude >= 1024 { return sign + String((magnitude / 1024).rounded().clampedInt) + " KiB" }
        return sign + String(magnitude.clampedInt) + " B"
    }

    /// A rate with an explicit sign: `+1.2 MiB/s`, `-512 KiB/s`, `±0 B/s`.
    public static func byteRate(_ value: Double) -> String { signedBytes(value) + "/s" }

    /// A change with an explicit sign: `+20.0 MiB`, `-512 KiB`, `±0 B`.
    public static func signedBytes(_ value: Double) -> String {
        if abs(value) < 1 { return "±0 B" }
        return (value > 0 ? "+" : "") + bytes(value)
    }

    /// A share of CPU without the sign, one decimal below 10: `0.5`, `9.9`, `52`.
    public static func compactPercent(_ value: Double) -> String {
        value < 9.95 ? String(format1: value) : String(value.rounded().clampedInt)
    }

    /// `52.3%`.
    public static func percent(_ value: Double) -> String { String(format1: value) + "%" }

    private static func twoDecimals(_ value: Double) -> String {
        let hundredths = (value * 100).rounded().clampedInt
        let fraction = hundredths % 100
        return "\(hundredths / 100)." + (fraction < 10 ? "0" : "") + "\(fraction)"
    }
}
