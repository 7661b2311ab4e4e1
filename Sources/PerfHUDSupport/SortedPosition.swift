extension Array where Element: Comparable {
    /// In an array in ascending order: the first index whose element is not below `value` — where
    /// `value` goes in to keep the order, and where it is when it is there. A binary search.
    package func firstIndex(notBelow value: Element) -> Int {
        var low = 0, high = count
        while low < high {
            let middle = (low + high) / 2
            if self[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
