// systemd's IP accounting of a unit (IPAccounting=yes: IPIngressBytes, IPEgressBytes, every protocol
// the unit's processes sent or received), read over D-Bus through libsystemd's sd-bus. libsystemd is
// already loaded (libproc2 links it), but its headers are not installed on the build machine
// (libsystemd-dev would add minutes to CI for four prototypes), so the calls are looked up with
// dlsym, declared here as sd-bus.h declares them. Called from perfhud's network thread only: an
// sd_bus connection is not for several threads.
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "CSystemShims.h"

typedef struct sd_bus sd_bus;
// sd-bus.h's sd_bus_error: a name, a message, a flag.
typedef struct { const char *name; const char *message; int _need_free; } sd_bus_error;

static struct {
    int loaded;       // 0 not tried, 1 loaded, -1 not loadable
    sd_bus *bus;
    int (*open_system)(sd_bus **);
    sd_bus *(*flush_close_unref)(sd_bus *);
    int (*path_encode)(const char *, const char *, char **);
    int (*get_property_trivial)(sd_bus *, const char *, const char *, const char *, const char *, sd_bus_error *, char, void *);
    void (*error_free)(sd_bus_error *);
} sd;

static int load(void) {
    if (sd.loaded) return sd.loaded;
    void *library = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
    if (library) {
        sd.open_system = dlsym(library, "sd_bus_open_system");
        sd.flush_close_unref = dlsym(library, "sd_bus_flush_close_unref");
        sd.path_encode = dlsym(library, "sd_bus_path_encode");
        sd.get_property_trivial = dlsym(library, "sd_bus_get_property_trivial");
        sd.error_free = dlsym(library, "sd_bus_error_free");
    }
    sd.loaded = library && sd.open_system && sd.flush_close_unref && sd.path_encode && sd.get_property_trivial && sd.error_free ? 1 : -1;
    return sd.loaded;
}

// The D-Bus interface that holds a unit's IP accounting properties, by the unit's type.
static const char *interface_of(const char *unit) {
    const char *dot = strrchr(unit, '.');
    if (!dot) return "org.freedesktop.systemd1.Service";
    if (!strcmp(dot, ".socket")) return "org.freedesktop.systemd1.Socket";
    if (!strcmp(dot, ".scope")) return "org.freedesktop.systemd1.Scope";
    if (!strcmp(dot, ".slice")) return "org.freedesktop.systemd1.Slice";
    if (!strcmp(dot, ".mount")) return "org.freedesktop.systemd1.Mount";
    if (!strcmp(dot, ".swap")) return "org.freedesktop.systemd1.Swap";
    return "org.freedesktop.systemd1.Service";
}

int perfhud_unit_ip_bytes(const char *unit, uint64_t *ingress, uint64_t *egress) {
    if (load() < 0) return -ENOSYS;
    if (!sd.bus) {
        int opened = sd.open_system(&sd.bus);
        if (opened < 0) { sd.bus = NULL; return opened; }
    }
    char *path = NULL;
    int encoded = sd.path_encode("/org/freedesktop/systemd1/unit", unit, &path);
    if (encoded < 0) return encoded;
    const char *interface = interface_of(unit);
    uint64_t values[2] = {0, 0};
    const char *names[2] = {"IPIngressBytes", "IPEgressBytes"};
    int result = 0;
    for (int i = 0; i < 2 && result >= 0; i++) {
        sd_bus_error error = {0};
        result = sd.get_property_trivial(sd.bus, "org.freedesktop.systemd1", path, interface, names[i], &error, 't', &values[i]);
        sd.error_free(&error);
    }
    free(path);
    if (result < 0) {
        // A connection that broke (systemd restarted): made again at the next call.
        if (result == -ECONNRESET || result == -ENOTCONN || result == -EPIPE) { sd.flush_close_unref(sd.bus); sd.bus = NULL; }
        return result;
    }
    *ingress = values[0];
    *egress = values[1];
    // UINT64_MAX: the unit does not account IP traffic (IPAccounting=no).
    return values[0] == UINT64_MAX || values[1] == UINT64_MAX ? 1 : 0;
}
