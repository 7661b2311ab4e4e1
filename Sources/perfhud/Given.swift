import ArgumentParser
import PerfHUDSupport
import PerfHUDEvents
import PerfHUDRender
import PerfHUDOutput
import PerfHUDTop

/// An option's or an argument's value as it was typed, read when the command validates.
///
/// ArgumentParser reads a value with its type's `init?(argument:)` and refuses one that does not
/// read in a sentence of its own, which names the option but not what it takes, and which perfhud
/// would have to read back to say it in its words. So every option takes its text whatever it is
/// (its `init(argument:)` never refuses; `parsing: .unconditional` takes `--tick -1s`'s `-1s` as
/// the value rather than as an option, and no option of perfhud takes a negative number), and the
/// command's `validate()` reads it with `value(_:)`, which refuses a text that does not read, or a
/// value out of range, with a `ValidationError` in the words of `Accepted`.
struct Given<Value: ReadableValue>: ExpressibleByArgument, ExpressibleByStringLiteral {
    /// As typed.
    let text: String

    init(argument: String) { text = argument }
    /// A default, as it would be typed: `var history: Given<DurationValue> = "10m"`.
    init(stringLiteral text: String) { self.text = text }

    var defaultValueDescription: String { text }
    /// An enumeration's values, for `--help` and shell completion.
    static var allValueStrings: [String] { Value.allTexts }

    /// The value the text reads as, where `accepts` takes it; else a refusal naming `option`
    /// (`--tick`, `<pid>`) and what it takes. A text that reads as an option (`-7`, `--no-color`
    /// after `--tick`) is refused whatever the type: it was a value missed, not one given.
    /// - Parameter command: where the option's form differs by command (`report --format`).
    func value(_ option: String, in command: String? = nil, where accepts: (Value) -> Bool = { _ in true }) throws -> Value {
        let readsAsOption = text.count > 1 && text.hasPrefix("-")
        guard !readsAsOption, let value = Value(commandLine: text), accepts(value) else {
            throw Refusal.because(Accepted.complaint(option, got: text, in: command))
        }
        return value
    }
}

/// A type an option's text reads as.
protocol ReadableValue {
    init?(commandLine text: String)
    /// Every value, where there are few (an enumeration's cases); else none.
    static var allTexts: [String] { get }
}

extension ReadableValue {
    static var allTexts: [String] { [] }
}

extension ReadableValue where Self: CaseIterable & RawRepresentable, RawValue == String {
    init?(commandLine text: String) { self.init(rawValue: text) }
    static var allTexts: [String] { allCases.map(\.rawValue) }
}

extension String: ReadableValue {
    init?(commandLine text: String) { self = text }
}
extension Int: ReadableValue {
    init?(commandLine text: String) { self.init(text) }
}
extension Int32: ReadableValue {
    init?(commandLine text: String) { self.init(text) }
}
extension Double: ReadableValue {
    /// Finite only: `nan` and `inf` read as Doubles but mean nothing as a threshold or a rate.
    init?(commandLine text: String) {
        guard let value = Double(text), value.isFinite else { return nil }
        self = value
    }
}

extension SessionConfiguration.Output: ReadableValue {}
extension HUDStyle.Position: ReadableValue {}
extension StatusFormat: ReadableValue {}
extension AcceptPolicy: ReadableValue {}
extension FrameMode: ReadableValue {}
extension TopSort: ReadableValue {}
