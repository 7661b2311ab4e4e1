import PerfHUDEvents

/// Each phase's frames (its `fps_avg` and `fps_1pct_low`), counted as they come rather than from a
/// list of the run's frames kept to the end: a live run of an hour at 60 FPS kept 216,000 frames,
/// and summing them up judged every one once per phase. A frame counts in a phase when it ended
/// within one of the phase's visits, from its entry to its exit, both included (a visit not left
/// yet lasts to the run's last row), once however many of the phase's visits hold it. One source
/// at a time, as the run's frames (`RunFrames.admit`): a higher-ranked source restarts every phase's
/// count, as it restarts the run's.
///
/// Why no later phase can move a frame placed: a frame is placed once the row at or after its end
/// is counted, with the phases entered by that row. A phase is entered when its line arrives (live)
/// or at its row (`RecordingRows`), so one entered before a frame ended arrived before the frame's
/// line and is in by then. A frame that ended after the last row counted waits (`pending`) for the
/// next row; after the run's last row, it counts only in visits already left.
package struct PhaseFrames {
    /// Each phase's frames, in the order the phases were first entered.
    package private(set) var names: [String] = []
    private var counts: [WeightedDurations] = []
    private var slotOfName: [String: Int] = [:]
    /// The slot of each visit known so far (the visits are `RunSummary`'s, in order).
    private var slotOfVisit: [Int] = []
    /// The frame a slot last counted (a frame in two visits of a phase counts in it once).
    private var lastCounted: [Int] = []
    private var framesSeen = 0
    private var source: FrameSource?
    /// Frames that ended after the last row counted, in the order they came.
    private var pending: [Recording.Frame] = []

    /// Learns the visits entered since the last call (`visits` only grows).
    package mutating func follow(_ visits: [Recording.Phase]) {
        for visit in visits[slotOfVisit.count...] {
            if let slot = slotOfName[visit.name] { slotOfVisit.append(slot); continue }
            slotOfName[visit.name] = names.count
            slotOfVisit.append(names.count)
            names.append(visit.name)
            counts.append(WeightedDurations())
            lastCounted.append(-1)
        }
    }

    /// Counts one frame of the run, in the order the run's frames are counted; `lastRow`: the time
    /// of the last row counted, whose phases `follow` has been given.
    package mutating func add(_ frame: Recording.Frame, visits: [Recording.Phase], lastRow: Double?) {
        guard RunFrames.isCountable(milliseconds: frame.milliseconds, weight: frame.weight) else { return }
        switch RunFrames.admit(frame.source, over: &source) {
        case .refused: return
        case .restarted:
            // The frames counted before were another source's: none of them counts now.
            counts = counts.map { _ in WeightedDurations() }
            pending.removeAll()
        case .admitted: break
        }
        guard let lastRow, frame.t <= lastRow else { pending.append(frame); return }
        place(frame, visits: visits, openEnd: lastRow)
    }

    /// Places the frames waiting for a row, now that the row at `lastRow` is counted.
    mutating func placePending(visits: [Recording.Phase], lastRow: Double) {
        guard !pending.isEmpty else { return }
        var waiting: [Recording.Frame] = []
        for frame in pending {
            if frame.t <= lastRow { place(frame, visits: visits, openEnd: lastRow) } else { waiting.append(frame) }
        }
        pending = waiting
    }

    /// Each phase's frames, by name, once the run is over (`end`: its last row): the frames still
    /// waiting count in the visits they ended in that were left by then.
    package func finished(visits: [Recording.Phase], end: Double) -> [String: WeightedDurations] {
        var all = self
        for frame in pending { all.place(frame, visits: visits, openEnd: end) }
        return Dictionary(uniqueKeysWithValues: zip(all.names, all.counts))
    }

    private mutating func place(_ frame: Recording.Frame, visits: [Recording.Phase], openEnd: Double) {
        framesSeen += 1
        let seen = framesSeen
        Self.visits(containing: frame.t, in: visits, openEnd: openEnd) { index in
            let slot = slotOfVisit[index]
            guard lastCounted[slot] != seen else { return }
            lastCounted[slot] = seen
            counts[slot].add(milliseconds: frame.milliseconds, weight: frame.weight)
        }
    }

    /// Calls `body` with the index of each visit from whose entry to whose exit (`openEnd` for the
    /// one not left) `t` is, newest first. The visits are in time order, each left where the next
    /// begins, so the walk stops at the first one left before `t`: a frame arrives at most a second
    /// after it ended, and the walk is over the visits of that second.
    package static func visits(containing t: Double, in visits: [Recording.Phase], openEnd: Double, _ body: (Int) -> Void) {
        for index in visits.indices.reversed() {
            let visit = visits[index]
            if let exit = visit.tExit, exit < t { return }
            if visit.t <= t && t <= (visit.tExit ?? openEnd) { body(index) }
        }
    }
}
