// What Swift cannot import from libproc2: the PIDS_VAL macro reads a union member of a result
// stack. One accessor per union member type perfhud reads.
#ifndef PERFHUD_CPROC2_SHIM_H
#define PERFHUD_CPROC2_SHIM_H
#include <libproc2/pids.h>
#include <libproc2/misc.h>

static inline int perfhud_pids_s_int(struct pids_stack *stack, int index) {
    return stack->head[index].result.s_int;
}
static inline unsigned long long perfhud_pids_ull_int(struct pids_stack *stack, int index) {
    return stack->head[index].result.ull_int;
}
static inline const char *perfhud_pids_str(struct pids_stack *stack, int index) {
    return stack->head[index].result.str;
}
#endif
