/// The OOM killer's score of a process against a control group's memory limit: what decides which
/// process a group's OOM kill takes, where `/proc/PID/oom_score` is against the machine's memory
/// (RAM and swap), and so reads 666 for every process of a group limited to 32 MiB on a big host.
///
/// The kernel's own (mm/oom_kill.c `oom_badness`, fs/proc/base.c `proc_oom_score`, Linux 5.9+):
/// badness = resident pages + swap entries + page tables / page size + oom_score_adj × total /
/// 1000, and the score (1000 + badness × 1000 / total) × 2/3, where total is the memory the OOM
/// kill is over: for a group's kill, the group's limit. -1000 (`OOM_SCORE_ADJ_MIN`) is never
/// killed: 0.
enum OOMScore {
    static func againstLimit(residentPages: UInt64, swapBytes: UInt64, pageTableBytes: UInt64, adjust: Int,
                             limitBytes: UInt64, pageSize: UInt64) -> UInt64? {
        guard pageSize > 0, limitBytes >= pageSize else { return nil }
        if adjust <= -1000 { return 0 }
        let total = Double(limitBytes / pageSize)
        let badness = Double(residentPages) + Double(swapBytes / pageSize) + Double(pageTableBytes / pageSize) + Double(adjust) * total / 1000
        let score = (1000 + (badness * 1000 / total).rounded(.towardZero)) * 2 / 3
        return UInt64(min(2000, max(0, score.rounded(.towardZero))))
    }
}
