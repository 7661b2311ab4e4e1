#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport

extension EventAggregator {
    /// The aggregate state, and the EventSink the parser feeds.
    public struct Ingest: EventSink {
        package let configuration: EventConfiguration
        /// Janky and dropped, judged frame after frame (`FrameJudge`), as `RunFrames` judges them.
        package var judge: FrameJudge
        package var labels: LabelTable
        var labelStates: [LabelState] = []
        var otherIndex: Int?
        var allActions = BucketCounter()
        package var allFrames = BucketCounter()
        package var actionsTotal = 0.0
        /// The newest 65,536 frames, for the percentiles of the frame window.
        package var frameWindow = FrameWindow(capacity: 65536)
        package var framesTotal = 0.0
        package var janky = 0.0
        package var dropped = 0.0
        package var frameSource: FrameSource?
        /// The graphics APIs the frame hooks said the program loaded (`perfhud.graphics`).
        package var glLoaded = false
        package var vulkanLoaded = false
        package var phase: String?
        var phaseChanges: [PhaseChange] = []
        /// The log as (label index, count); names are looked up when it is drained.
        package var log: [(label: Int, count: Double)] = []
        package var logDropped = 0.0
        package var received: UInt64 = 0
        package var malformedCount: UInt64 = 0
        package var ignoredCount: UInt64 = 0
        package var rejected: [String: UInt64] = [:]
        package var now: UInt64 = 0
        package var bucket: Int64 = 0
        package var residentProbe: (() -> UInt64?)?
        /// `--record`: every frame and the actions per label since the last drain (bounded).
        package var recording = false
        var recordedFrames: [RecordedFrame] = []
        var recordedActions: [Int: Double] = [:]
        package var frameTiming = FrameTiming()
        var placing: [FrameTiming.Unplaced] = []

        package init(configuration: EventConfiguration) {
            self.configuration = configuration
            judge = FrameJudge(budget: configuration.frameBudget)
            labels = LabelTable(capacity: configuration.maxActionLabels)
        }

        /// Stamps what follows; one clock read per batch.
        public mutating func setTime(_ nanoseconds: UInt64) {
            now = nanoseconds
            bucket = Int64(nanoseconds / EventAggregator.bucketNanoseconds)
        }
        public mutating func countLines(_ lines: Int) { received &+= UInt64(lines) }
        public mutating func reject(reason: String) { rejected[reason, default: 0] &+= 1 }
        public mutating func ignored() { ignoredCount &+= 1 }
        public mutating func malformed() { malformedCount &+= 1 }

        public mutating func action(label: UnsafeRawBufferPointer, count: Double) {
            let clipped = UnsafeRawBufferPointer(rebasing: label[0..<min(label.count, EventConfiguration.maxLabelBytes)])
            let position: Int
            if let known = labels.find(clipped) {
                position = known
            } else if labelStates.count < configuration.maxActionLabels {
                position = labels.insert(clipped)
                labelStates.append(LabelState(name: String(decoding: clipped, as: UTF8.self)))
            } else {
                if otherIndex == nil {
                    otherIndex = labelStates.count
                    labelStates.append(LabelState(name: EventConfiguration.otherLabel))
                }
                position = otherIndex!
            }
            labelStates[position].counter.add(count, bucket: bucket)
            labelStates[position].total += count
            allActions.add(count, bucket: bucket)
            actionsTotal += count
            if recording { recordedActions[position, default: 0] += count }
            // The log folds a repeat into the entry before it; it is drained every tick and
            // bounded, so a flood costs a counter, not memory.
            if let last = log.last, last.label == position {
                log[log.count - 1].count += count
            } else if log.count < 256 {
                log.append((position, count))
            } else {
                logDropped += count
            }
        }

        /// A frame without a believable end waits for `endDatagram` to be placed.
        public mutating func frame(milliseconds: Double, count: Double, source: FrameSource, end: UInt64?) {
            if let end, let believed = FrameTiming.believedEnd(end, arrival: now) {
                frame(milliseconds: milliseconds, count: count, source: source, endingAt: believed)
            } else {
                frameTiming.addUnplaced(.init(milliseconds: milliseconds, count: count, source: source))
            }
        }

        /// The datagram is parsed (the parser says so): its frames without an end time are placed
        /// back from its arrival.
        public mutating func endDatagram() {
            guard !frameTiming.unplaced.isEmpty else { return }
            var remaining = FrameTiming.takeUnplaced(&frameTiming, &placing)
            for unplaced in placing {
                let end = FrameTiming.placeNext(&remaining, milliseconds: unplaced.milliseconds, arrival: now)
                frame(milliseconds: unplaced.milliseconds, count: unplaced.count, source: unplaced.source, endingAt: end)
            }
            placing.removeAll(keepingCapacity: true)
            _ = FrameTiming.takeUnplaced(&frameTiming, &placing)   // the storage back, empty
        }

        package mutating func frame(milliseconds: Double, count: Double, source: FrameSource, endingAt end: UInt64) {
            // One source at a time: a higher-ranked one replaces what a lower one counted (the
            // same frames seen twice, from their output and their presents, must not add up).
            if let current = frameSource, source.rank < current.rank || (source.rank == current.rank && source != current) { return }
            if let current = frameSource, source.rank > current.rank {
                frameWindow.removeAll(); allFrames = BucketCounter()
                framesTotal = 0; janky = 0; dropped = 0; frameTiming.forgetDelays()
                judge = FrameJudge(budget: judge.budget)
            }
            frameSource = source
            frameWindow.append(end: end, milliseconds: milliseconds)
            if recording && recordedFrames.count < 65536 { recordedFrames.append(RecordedFrame(time: end, milliseconds: milliseconds, source: source, weight: count)) }
            allFrames.add(count, bucket: Int64(end / EventAggregator.bucketNanoseconds))
            frameTiming.noteDelay(now > end ? now - end : 0, bucket: bucket)
            framesTotal += count
            let verdict = judge.judge(milliseconds)
            if verdict.janky { janky += count }
            if verdict.dropped > 0 { dropped += verdict.dropped * count }
        }

        public mutating func graphicsLoaded(api: UnsafeRawBufferPointer) {
            if api.elementsEqual("gl".utf8) { glLoaded = true }
            else if api.elementsEqual("vulkan".utf8) { vulkanLoaded = true }
            else { ignoredCount &+= 1 }
        }

        public mutating func phase(name: UnsafeRawBufferPointer, residentBytes: UInt64?) {
            let text = String(decoding: name[0..<min(name.count, EventConfiguration.maxLabelBytes)], as: UTF8.self)
            phase = text
            if phaseChanges.count < 1024 {
                // The sender's own figure, taken as it entered the phase, where it sent one: exact
                // whatever the load. Else read now, as close to the moment as the receiver runs.
                phaseChanges.append(PhaseChange(name: text, monotonicNanoseconds: now, residentBytes: residentBytes ?? residentProbe?()))
            }
        }
    }
}
