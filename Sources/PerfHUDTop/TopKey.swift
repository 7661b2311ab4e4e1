/// A key of `perfhud top`, from the bytes the terminal sends.
public enum TopKey: Equatable {
    case quit, up, down, pageUp, pageDown, first, last, open
    case sort(TopSort)

    /// The keys in `bytes`, in order; unknown bytes and sequences are skipped.
    public static func parse(_ bytes: [UInt8]) -> [TopKey] {
        var keys: [TopKey] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "q"), UInt8(ascii: "Q"): keys.append(.quit)
            case UInt8(ascii: "c"), UInt8(ascii: "C"), UInt8(ascii: "P"): keys.append(.sort(.cpu))   // P: as top
            case UInt8(ascii: "m"), UInt8(ascii: "M"): keys.append(.sort(.memory))
            case UInt8(ascii: "n"), UInt8(ascii: "N"): keys.append(.sort(.name))
            case UInt8(ascii: "f"), UInt8(ascii: "F"): keys.append(.sort(.fps))
            case UInt8(ascii: "a"), UInt8(ascii: "A"): keys.append(.sort(.actions))
            case UInt8(ascii: "k"): keys.append(.up)
            case UInt8(ascii: "j"): keys.append(.down)
            case UInt8(ascii: "g"): keys.append(.first)
            case UInt8(ascii: "G"): keys.append(.last)
            case UInt8(ascii: "\r"), UInt8(ascii: "\n"): keys.append(.open)
            case 0x1B:
                // CSI or SS3: ESC [ params final, ESC O final. Arrows A/B, Home H/1~/7~, End F/4~/8~, PgUp 5~, PgDn 6~.
                guard index < bytes.count, bytes[index] == UInt8(ascii: "[") || bytes[index] == UInt8(ascii: "O") else { continue }
                index += 1
                var parameters: [UInt8] = []
                while index < bytes.count, (0x20...0x3F).contains(bytes[index]) {
                    if parameters.count < 16 { parameters.append(bytes[index]) }
                    index += 1
                }
                guard index < bytes.count else { break }
                let final = bytes[index]
                index += 1
                let number = String(decoding: parameters, as: UTF8.self)
                switch final {
                case UInt8(ascii: "A"): keys.append(.up)
                case UInt8(ascii: "B"): keys.append(.down)
                case UInt8(ascii: "H"): keys.append(.first)
                case UInt8(ascii: "F"): keys.append(.last)
                case UInt8(ascii: "M") where parameters.isEmpty: keys.append(.open)   // keypad Enter (SS3 M)
                case UInt8(ascii: "~"):
                    switch number {
                    case "1", "7": keys.append(.first)
                    case "4", "8": keys.append(.last)
                    case "5": keys.append(.pageUp)
                    case "6": keys.append(.pageDown)
                    default: break
                    }
                default: break
                }
            default: break
            }
        }
        return keys
    }
}
