// Only what Swift cannot import from libproc2: the PIDS_VAL macro reads a union member of a
// result stack. One accessor per union member type; no logic here.
#ifndef PERFHUD_CPROC2_SHIM_H
#define PERFHUD_CPROC2_SHIM_H
#include <libproc2/pids.h>
#include <libproc2/misc.h>
#include <libproc2/meminfo.h>

static inline int perfhud_pids_s_int(struct pids_stack *stack, int index) {
    return stack->head[index].result.s_int;
}
static inline unsigned int perfhud_pids_u_int(struct pids_stack *stack, int index) {
    return stack->head[index].result.u_int;
}
static inline unsigned long perfhud_pids_ul_int(struct pids_stack *stack, int index) {
    return stack->head[index].result.ul_int;
}
static inline unsigned long long perfhud_pids_ull_int(struct pids_stack *stack, int index) {
    return stack->head[index].result.ull_int;
}
static inline const char *perfhud_pids_str(struct pids_stack *stack, int index) {
    return stack->head[index].result.str;
}
static inline signed char perfhud_pids_s_ch(struct pids_stack *stack, int index) {
    return stack->head[index].result.s_ch;
}
#endif
