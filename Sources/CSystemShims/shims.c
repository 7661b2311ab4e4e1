// Wrappers for glibc calls declared only under _GNU_SOURCE; see CSystemShims.h. No logic beyond
// the calls themselves.
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <unistd.h>
#include "CSystemShims.h"

int perfhud_open_pseudo_terminal(char *slave_path, size_t length) {
    int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0) return -1;
    if (grantpt(master) != 0 || unlockpt(master) != 0 || ptsname_r(master, slave_path, length) != 0) {
        close(master);
        return -1;
    }
    return master;
}

short perfhud_posix_spawn_setsid(void) { return POSIX_SPAWN_SETSID; }
