#!/bin/sh
# Fails unless the dlsym of the library given ($1) passes lookups on with a tail call (an indirect
# jump), so that glibc's dlsym(RTLD_NEXT, …) still sees the program as its caller (lookup.c).
# Only x86-64 and AArch64 are checked; elsewhere, and without objdump, it says so and passes.
library=$1
command -v objdump >/dev/null || { echo "objdump not found: the dlsym tail call of $library is not checked" >&2; exit 0; }
code=$(objdump -d --no-show-raw-insn --disassemble=dlsym "$library") || exit 1
case $(uname -m) in
  x86_64) pattern='jmp +\*%' ;;
  aarch64) pattern='br +x' ;;
  *) echo "$(uname -m): the dlsym tail call of $library is not checked" >&2; exit 0 ;;
esac
if ! printf '%s\n' "$code" | grep -Eq "$pattern"; then
  echo "$library: dlsym does not pass lookups on with a tail call (dlsym(RTLD_NEXT) would see the hook as its caller)" >&2
  exit 1
fi
