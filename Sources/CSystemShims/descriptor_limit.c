// The soft limit on open descriptors, raised to the hard one at start and given back to a
// launched program. Written in C because the program's side runs between fork and exec (see
// job.c), where only async-signal-safe calls may be made; setrlimit is one.
#include <sys/resource.h>
#include "CSystemShims.h"

/// The limits perfhud started with; `rlim_cur` 0 until `perfhud_raise_descriptor_limit` ran.
static struct rlimit started_with;

long perfhud_raise_descriptor_limit(void) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return -1;
    started_with = limit;
    if (limit.rlim_cur < limit.rlim_max) {
        struct rlimit raised = { limit.rlim_max, limit.rlim_max };
        if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
    }
    return limit.rlim_cur == RLIM_INFINITY ? -1 : (long)limit.rlim_cur;
}

void perfhud_restore_descriptor_limit(void) {
    if (started_with.rlim_cur != 0) setrlimit(RLIMIT_NOFILE, &started_with);
}
