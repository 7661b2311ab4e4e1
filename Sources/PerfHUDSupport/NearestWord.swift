/// The word of a list nearest to one typed, for a suggestion: `--tik` → `--tick`,
/// `rss_peak_byte` → `rss_peak_bytes`.
public enum NearestWord {
    /// The candidate at the smallest edit distance from `word`, where that is at most `within`;
    /// nil where none is that near.
    public static func to(_ word: String, in candidates: [String], within: Int = 2) -> String? {
        candidates.map { ($0, distance(word, $0)) }.filter { $0.1 <= within }.min { $0.1 < $1.1 }?.0
    }

    /// Levenshtein distance, for a handful of short words.
    public static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var row = Array(0...b.count)
        for i in 1...max(1, a.count) where !a.isEmpty {
            var previous = row[0]
            row[0] = i
            for j in 1...max(1, b.count) where !b.isEmpty {
                let current = row[j]
                row[j] = Swift.min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = current
            }
        }
        return row[b.count]
    }
}
