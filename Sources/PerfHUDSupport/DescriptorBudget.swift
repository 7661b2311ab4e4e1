#if canImport(Glibc)
import Glibc
#endif

/// How many descriptors perfhud keeps open: the files it re-reads every tick (a dozen a watched
/// process) stay below a reserve under the limit, so that what must not fail for lack of one —
/// the metrics endpoint's next connection, the recording, the journal, a `/proc` file read once —
/// still gets one when a group is larger than the limit allows. Linux hands out the lowest free
/// number, so a descriptor at or above the line means the table is that full: one comparison,
/// no count kept.
public enum DescriptorBudget {
    /// The first descriptor number not kept open: the soft limit (as raised at start,
    /// `SystemCall.raiseDescriptorLimit`) less an eighth of it, at least 32.
    public static let line: Int32 = {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return .max }
        let soft = Int64(clamping: limit.rlim_cur)
        return Int32(clamping: max(soft / 2, soft - max(32, soft / 8)))
    }()

    /// Whether `descriptor`, just opened, may be kept open.
    @inlinable
    public static func admits(_ descriptor: Int32) -> Bool { descriptor < line }

    /// Files perfhud wanted to keep open and could not for lack of descriptors: over the line,
    /// or refused by the kernel (EMFILE, ENFILE). The daemon's `perfhud_descriptor_refusals_total`;
    /// what was not kept is read on demand, or its figure is left out with a reason.
    public static let refusals = LockedCounter()

    /// `opened`, a descriptor to keep open, where it may be; else closed, and EMFILE.
    public static func keeping(_ opened: Result<Int32, SystemError>) -> Result<Int32, SystemError> {
        switch opened {
        case .failure(let error) where error.code == EMFILE || error.code == ENFILE:
            refusals.increment()
            return opened
        case .failure:
            return opened
        case .success(let descriptor):
            guard admits(descriptor) else { close(descriptor); refusals.increment(); return .failure(SystemError(EMFILE)) }
            return .success(descriptor)
        }
    }
}
