/// Spaces and tabs trimmed from either end: what log lines and small /proc files need, without
/// Foundation's CharacterSet.
extension Substring {
    public var trimmingTrailingSpaces: Substring {
        var result = self
        while let last = result.last, last == " " || last == "\t" { result.removeLast() }
        return result
    }
    public var trimmingLeadingSpaces: Substring { drop(while: { $0 == " " || $0 == "\t" }) }
}

extension String {
    public var trimmingTrailingSpaces: Substring { self[...].trimmingTrailingSpaces }
    public var trimmingLeadingSpaces: Substring { self[...].trimmingLeadingSpaces }
}
