extension Array where Element: Comparable {
    /// In an array in ascending order: the first index whose element is not below `value` — where
    /// `value` goes in to keep the order, and where it is when it is there. A binary search.
    /// Inlinable: a generic called from another layer is otherwise run unspecialised, through the
    /// element's witness table (the frame judge's search cost 230 instructions a frame that way).
    @inlinable package func firstIndex(notBelow value: Element) -> Int {
        var low = 0, high = count
        while low < high {
            let middle = (low + high) / 2
            if self[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
