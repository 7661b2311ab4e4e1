extension PerfHUD {
    /// Wraps a reduce function so that every action it receives is reported by its label.
    ///
    /// ```swift
    /// let reduce = PerfHUD.shared.reducer { (state: inout Feature.State, action: Feature.Action) in
    ///     Feature.reduce(into: &state, action: action)
    /// }
    /// ```
    public func reducer<State, Action, Result>(
        _ reduce: @escaping (inout State, Action) -> Result
    ) -> (inout State, Action) -> Result {
        { state, action in
            if self.isEnabled { self.action(PerfHUD.label(of: action)) }
            return reduce(&state, action)
        }
    }

    /// The label of an action as The Composable Architecture's `.actionLabels` printer names it
    /// (its `debugCaseOutput`), so that a program reporting through this helper and one logging
    /// with `_printChanges()` give perfhud the same labels: the type, then every enum case at every
    /// depth; a payload that is not a case shows as its label (`x:`), as `_:` when unlabelled
    /// among several, and not at all when it is the only one:
    /// `Feature.Action.slider(.changed)`, `Feature.Action.moved(x:, y:)`,
    /// `AppFeature.Action.path(.element(id:, action: .detail(.delegate(.saved))))`.
    ///
    /// Unlike TCA, an action's own `debugDescription` is not used: it may carry values, and a label
    /// is a metric label, which must stay few. Cases nested deeper than 32 (an indirect enum used
    /// as a list) are cut there rather than followed to the end of the stack.
    public static func label(of action: Any) -> String {
        typeName(type(of: action)) + caseOutput(action, depth: 0)
    }

    /// TCA's `debugCaseOutputHelp`: `.case(payload)` for an enum, `label: output, …` for a tuple
    /// (Swift reflects several associated values, or a labelled one, as a tuple), "" otherwise.
    private static func caseOutput(_ value: Any, depth: Int) -> String {
        guard depth < 32 else { return "" }
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .enum:
            guard let child = mirror.children.first else {
                let name = String(describing: value)
                return name == typeName(type(of: value)) ? "" : "." + name
            }
            let payload = caseOutput(child.value, depth: depth + 1)
            return "." + (child.label ?? "") + (payload.isEmpty ? "" : "(" + payload + ")")
        case .tuple:
            return mirror.children.map { child in
                let payload = caseOutput(child.value, depth: depth + 1)
                // Unlabelled tuple elements are reflected as ".0", ".1", …
                let label = child.label.map { $0.allSatisfy { $0 == "." || $0.isNumber } ? "_:" : $0 + ":" } ?? ""
                return label + (payload.isEmpty ? "" : " " + payload)
            }.joined(separator: ", ")
        default:
            return ""
        }
    }

    /// `Module.Feature.Action` → `Feature.Action`; generic arguments and local contexts dropped.
    static func typeName(_ type: Any.Type) -> String {
        var name = String(reflecting: type)
        if let generic = name.firstIndex(of: "<") { name = String(name[..<generic]) }
        let parts = name.split(separator: ".").filter { !$0.hasPrefix("(") && !$0.hasPrefix("unknown context") }
        return parts.dropFirst(parts.count > 1 ? 1 : 0).joined(separator: ".")
    }
}
