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

    /// The label of an action as The Composable Architecture's `.actionLabels` printer names it:
    /// the type and the case path, associated values dropped, e.g.
    /// `Feature.Action.slider(.changed(_:))`. An enum payload is followed into; a tuple payload
    /// shows its labels (`_:` when unlabeled); any other payload shows as `_:`.
    public static func label(of action: Any) -> String {
        typeName(type(of: action)) + casePath(action)
    }

    private static func casePath(_ value: Any) -> String {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .enum else { return "" }
        guard let child = mirror.children.first else { return "." + String(describing: value) }
        return "." + (child.label ?? "") + "(" + payload(child.value) + ")"
    }

    private static func payload(_ value: Any) -> String {
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .enum:
            return casePath(value)
        case .tuple:
            return mirror.children.map { child in
                guard let label = child.label, !label.hasPrefix(".") else { return "_:" }
                return label + ":"
            }.joined(separator: ", ")
        default:
            return "_:"
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
