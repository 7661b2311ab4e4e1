// The executable's start-up pages handed back once start-up is over; see CSystemShims.h.
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "CSystemShims.h"

struct release_pass {
    int pagemap;
    uintptr_t page_size;
    long released;
};

// Drops [start, end) from the process, or nothing when that fails.
static void drop(struct release_pass *pass, uintptr_t start, uintptr_t end) {
    if (end > start && madvise((void *)start, end - start, MADV_DONTNEED) == 0)
        pass->released += (long)(end - start);
}

// /proc/self/pagemap has one 64-bit entry a page: bit 63 present, bit 61 a page of the file. In a
// private mapping a present page of the file is one nobody wrote since it was read, the same bytes
// as on disk, so dropping it loses nothing. A present page without bit 61 is the process's own —
// data the loader relocated (RELRO, .data), .bss, a debugger's breakpoint — and is kept. Each run
// of file pages is dropped in one madvise.
static void drop_file_pages(struct release_pass *pass, uintptr_t start, uintptr_t end) {
    uint64_t entries[512];
    uintptr_t run = 0;   // start of the current run of file pages, 0 for none
    for (uintptr_t page = start; page < end;) {
        size_t count = (end - page) / pass->page_size;
        if (count > 512) count = 512;
        ssize_t bytes = (ssize_t)(count * sizeof entries[0]);
        if (pread(pass->pagemap, entries, (size_t)bytes, (off_t)(page / pass->page_size * sizeof entries[0])) != bytes) return;
        for (size_t i = 0; i < count; i++, page += pass->page_size) {
            int file_page = (entries[i] >> 63 & 1) && (entries[i] >> 61 & 1);
            if (file_page && !run) run = page;
            if (!file_page && run) { drop(pass, run, page); run = 0; }
        }
    }
    if (run) drop(pass, run, end);
}

// dl_iterate_phdr reports the executable first: its loadable segments, whole pages only (a page a
// segment shares with its neighbour stays).
static int release_executable(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct release_pass *pass = data;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        // Read-only segments only (code, constants): a writable one's page still a copy of the file
        // could be written by another thread between the look and the madvise, and the write lost.
        if (segment->p_type != PT_LOAD || (segment->p_flags & PF_W)) continue;
        uintptr_t start = info->dlpi_addr + segment->p_vaddr, end = start + segment->p_filesz;
        start = (start + pass->page_size - 1) & ~(pass->page_size - 1);
        end &= ~(pass->page_size - 1);
        if (end > start) drop_file_pages(pass, start, end);
    }
    return 1;   // the executable only: the shared libraries' pages are shared with other processes
}

long perfhud_release_startup_pages(void) {
    if (getenv("PERFHUD_KEEP_STARTUP_PAGES")) return 0;
    struct release_pass pass = { .pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC),
                                 .page_size = (uintptr_t)sysconf(_SC_PAGESIZE), .released = 0 };
    if (pass.pagemap < 0) return 0;
    dl_iterate_phdr(release_executable, &pass);
    close(pass.pagemap);
    return pass.released;
}
