/*
 * fake_nvml.c - a stand-in for NVIDIA's libnvidia-ml.so.1, for tests on
 * machines without an NVIDIA GPU.
 *
 * It has the same ABI as the real library for the functions it exports:
 * the structs, enum values and return codes below are copied from NVIDIA's
 * nvml.h (as mirrored by the ctypes structures of the nvidia-ml-py package,
 * module pynvml); Tests/GPU/test_fake_nvml_abi.py checks this library
 * through pynvml's own structures.
 *
 * Build:
 *   cc -shared -fPIC -O1 -Wall -o DIR/libnvidia-ml.so.1 Tests/GPU/fake_nvml.c -lpthread
 * Optional:
 *   -DFAKE_NVML_WITHOUT_PROCESS_UTILIZATION  leave nvmlDeviceGetProcessUtilization out
 *   -DFAKE_NVML_WITHOUT_POWER                leave nvmlDeviceGetPowerUsage out
 *
 * Behaviour is driven by the scenario file named by $FAKE_NVML_SCENARIO,
 * re-read at every call (write it atomically: write a temp file, rename).
 * `key=value` lines; `#` starts a comment (at the start of a line or after
 * whitespace). Missing keys take the defaults shown:
 *
 *   init=ok                 # or an error name/number: what nvmlInit* returns
 *   driver_version=550.54.15
 *   devices=1
 *   device.N.name=NVIDIA H100 80GB HBM3
 *   device.N.uuid=GPU-6a1f0c8e-0000-0000-0000-00000000000N  (N in hex, 12 digits)
 *   device.N.memory_total=85520809984
 *   device.N.memory_used=10422845440          # free = total - used
 *   device.N.utilization_gpu=99
 *   device.N.utilization_memory=6
 *   device.N.temperature=62
 *   device.N.power_mw=638498
 *   device.N.clock_sm_mhz=1980
 *   device.N.clock_graphics_mhz=<clock_sm_mhz>
 *   device.N.clock_mem_mhz=2619
 *   device.N.clock_video_mhz=1755
 *   device.N.clocks_event_reasons=0           # decimal (or 0x hex) bitmask
 *   device.N.mig=0                            # current MIG mode
 *   device.N.mig_pending=<mig>
 *   device.N.compute=                         # pid:usedGpuMemory,...   (default: none)
 *   device.N.graphics=                        # pid:usedGpuMemory,...   (default: none)
 *   device.N.samples=                         # pid:sm:mem:enc:dec[:age_us],... (default: none)
 *   error.FUNCTION=not_supported              # FUNCTION returns this, for every device
 *   device.N.error.FUNCTION=gpu_is_lost       # ... for device N only (wins over error.FUNCTION)
 *   stall.FUNCTION=1500                       # FUNCTION sleeps this many ms first
 *   grow.FUNCTION=1                           # process-list functions only, see below
 *   log=/path/to/calls.log                    # one line appended per call
 *
 * Error names: success/ok 0, uninitialized 1, invalid_argument 2,
 * not_supported 3, no_permission 4, already_initialized 5, not_found 6,
 * insufficient_size 7, insufficient_power 8, driver_not_loaded 9, timeout 10,
 * irq_issue 11, library_not_found 12, function_not_found 13,
 * corrupted_inforom 14, gpu_is_lost 15, reset_required 16,
 * operating_system 17, lib_rm_version_mismatch 18, in_use 19, memory 20,
 * no_data 21, unknown 999; a decimal number is taken as is.
 *
 * Semantics:
 *  - No scenario (variable unset or file missing): nvmlInit* returns
 *    NVML_ERROR_DRIVER_NOT_LOADED. Every device/system call before a
 *    successful init (or after the matching nvmlShutdown) returns
 *    NVML_ERROR_UNINITIALIZED. Init is reference counted as in NVML.
 *  - Order of checks in every call: stall, uninitialized, error.FUNCTION,
 *    argument/handle checks, then the answer.
 *  - A handle whose index is no longer below `devices` returns
 *    NVML_ERROR_GPU_IS_LOST. Handles point into a static array.
 *  - Process lists (_v3, nvmlProcessInfo_t of 24 bytes):
 *    *infoCount == 0 or infos == NULL is a size query: INSUFFICIENT_SIZE with
 *    the count, or SUCCESS with 0 when there are no processes. A buffer too
 *    small: INSUFFICIENT_SIZE with the needed count. gpuInstanceId and
 *    computeInstanceId are 0xFFFFFFFF (no MIG).
 *  - grow.FUNCTION=K: the first fill call after a size query adds K extra
 *    processes (pids 900001, 900002, ..., 1 MiB each) to that device's list
 *    for that function; they persist for the life of the process (also after
 *    the key is removed). It fires once per value: to make it fire again,
 *    set a different K, or remove the key (or set 0) for at least one call.
 *  - nvmlDeviceGetProcessUtilization: every configured sample's timeStamp is
 *    now (CLOCK_REALTIME, microseconds) minus its age (default 0). Only
 *    samples with timeStamp > lastSeenTimeStamp count. None: NOT_FOUND;
 *    utilization == NULL: INSUFFICIENT_SIZE with the count; *count too small:
 *    INSUFFICIENT_SIZE with the count; otherwise filled.
 *  - log line: "FUNCTION tid=T arg=value ... rc=N out=value ...".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ---- ABI: copied from nvml.h ------------------------------------------- */

typedef enum nvmlReturn_enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_ALREADY_INITIALIZED = 5,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_INSUFFICIENT_POWER = 8,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_TIMEOUT = 10,
    NVML_ERROR_IRQ_ISSUE = 11,
    NVML_ERROR_LIBRARY_NOT_FOUND = 12,
    NVML_ERROR_FUNCTION_NOT_FOUND = 13,
    NVML_ERROR_CORRUPTED_INFOROM = 14,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_RESET_REQUIRED = 16,
    NVML_ERROR_OPERATING_SYSTEM = 17,
    NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
    NVML_ERROR_IN_USE = 19,
    NVML_ERROR_MEMORY = 20,
    NVML_ERROR_NO_DATA = 21,
    NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
    NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
    NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
    NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
    NVML_ERROR_DEPRECATED = 26,
    NVML_ERROR_NOT_READY = 27,
    NVML_ERROR_GPU_NOT_FOUND = 28,
    NVML_ERROR_INVALID_STATE = 29,
    NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

typedef struct nvmlDevice_st *nvmlDevice_t;

typedef struct nvmlMemory_st {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlUtilization_st {
    unsigned int gpu;
    unsigned int memory;
} nvmlUtilization_t;

/* The struct the _v2/_v3 process-list functions take (nvmlProcessInfo_v2_t,
 * typedef'd as nvmlProcessInfo_t in current headers). */
typedef struct nvmlProcessInfo_st {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlProcessInfo_t;

typedef struct nvmlProcessUtilizationSample_st {
    unsigned int pid;
    unsigned long long timeStamp;
    unsigned int smUtil;
    unsigned int memUtil;
    unsigned int encUtil;
    unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

typedef enum nvmlTemperatureSensors_enum {
    NVML_TEMPERATURE_GPU = 0,
    NVML_TEMPERATURE_COUNT
} nvmlTemperatureSensors_t;

typedef enum nvmlClockType_enum {
    NVML_CLOCK_GRAPHICS = 0,
    NVML_CLOCK_SM = 1,
    NVML_CLOCK_MEM = 2,
    NVML_CLOCK_VIDEO = 3,
    NVML_CLOCK_COUNT
} nvmlClockType_t;

_Static_assert(sizeof(nvmlMemory_t) == 24, "nvmlMemory_t");
_Static_assert(sizeof(nvmlUtilization_t) == 8, "nvmlUtilization_t");
_Static_assert(sizeof(nvmlProcessInfo_t) == 24, "nvmlProcessInfo_t (v2/v3)");
_Static_assert(offsetof(nvmlProcessInfo_t, usedGpuMemory) == 8, "usedGpuMemory");
_Static_assert(offsetof(nvmlProcessInfo_t, gpuInstanceId) == 16, "gpuInstanceId");
_Static_assert(offsetof(nvmlProcessInfo_t, computeInstanceId) == 20, "computeInstanceId");
_Static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32, "nvmlProcessUtilizationSample_t");
_Static_assert(offsetof(nvmlProcessUtilizationSample_t, timeStamp) == 8, "timeStamp");
_Static_assert(offsetof(nvmlProcessUtilizationSample_t, smUtil) == 16, "smUtil");
_Static_assert(offsetof(nvmlProcessUtilizationSample_t, decUtil) == 28, "decUtil");

#define EXPORT __attribute__((visibility("default")))

/* ---- scenario ---------------------------------------------------------- */

#define MAX_DEVICES 64
#define MAX_ENTRIES 4096
#define MAX_PROCS 1024
#define GROW_PID_BASE 900000u

struct entry {
    const char *key;
    const char *value;
};

struct scenario {
    int present;             /* the file was read */
    char *text;              /* the file's text, cut into keys and values */
    struct entry entries[MAX_ENTRIES];
    int count;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct scenario g_scn;   /* guarded by g_lock */
static int g_init_count;        /* guarded by g_lock */

/* One static object per device; a handle is a pointer to one of them. */
struct nvmlDevice_st {
    unsigned int index;
};
static struct nvmlDevice_st g_devices[MAX_DEVICES];

/* grow state, per process-list function and device; guarded by g_lock. */
enum { LIST_COMPUTE = 0, LIST_GRAPHICS = 1, LIST_KINDS = 2 };
struct grow_state {
    int armed;                     /* a size query came since the last fill */
    long long fired_value;         /* the grow value that last fired */
    unsigned int extra;            /* extra processes now in the list */
};
static struct grow_state g_grow[LIST_KINDS][MAX_DEVICES];

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\r')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

/* Re-read the scenario file into g_scn. Caller holds g_lock. */
static void scenario_load_locked(void)
{
    free(g_scn.text);
    g_scn.text = NULL;
    g_scn.count = 0;
    g_scn.present = 0;

    const char *path = getenv("FAKE_NVML_SCENARIO");
    if (path == NULL || *path == '\0')
        return;
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    if (buf == NULL) {
        fclose(f);
        return;
    }
    for (;;) {
        if (len + 1 >= cap) {
            char *bigger = realloc(buf, cap * 2);
            if (bigger == NULL)
                break;
            buf = bigger;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - 1 - len, f);
        if (got == 0)
            break;
        len += got;
    }
    fclose(f);
    buf[len] = '\0';
    g_scn.text = buf;
    g_scn.present = 1;

    char *line = buf;
    while (line != NULL && *line != '\0') {
        char *next = strchr(line, '\n');
        if (next != NULL)
            *next++ = '\0';
        /* comments: '#' at the start or after whitespace */
        for (char *p = line; *p != '\0'; p++) {
            if (*p == '#' && (p == line || p[-1] == ' ' || p[-1] == '\t')) {
                *p = '\0';
                break;
            }
        }
        char *eq = strchr(line, '=');
        if (eq != NULL && g_scn.count < MAX_ENTRIES) {
            *eq = '\0';
            char *key = trim(line);
            char *value = trim(eq + 1);
            if (*key != '\0') {
                g_scn.entries[g_scn.count].key = key;
                g_scn.entries[g_scn.count].value = value;
                g_scn.count++;
            }
        }
        line = next;
    }
}

/* The last value given for key, or NULL. Caller holds g_lock. */
static const char *get(const char *key)
{
    for (int i = g_scn.count - 1; i >= 0; i--)
        if (strcmp(g_scn.entries[i].key, key) == 0)
            return g_scn.entries[i].value;
    return NULL;
}

static const char *getf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *getf(const char *fmt, ...)
{
    char key[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(key, sizeof key, fmt, ap);
    va_end(ap);
    return get(key);
}

static unsigned long long to_ull(const char *s, unsigned long long dflt)
{
    if (s == NULL || *s == '\0')
        return dflt;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno != 0 || end == s)
        return dflt;
    return v;
}

static unsigned long long dev_ull(unsigned int dev, const char *name, unsigned long long dflt)
{
    return to_ull(getf("device.%u.%s", dev, name), dflt);
}

static const struct {
    const char *name;
    int code;
} k_errors[] = {
    {"ok", 0}, {"success", 0}, {"uninitialized", 1}, {"invalid_argument", 2},
    {"not_supported", 3}, {"no_permission", 4}, {"already_initialized", 5},
    {"not_found", 6}, {"insufficient_size", 7}, {"insufficient_power", 8},
    {"driver_not_loaded", 9}, {"timeout", 10}, {"irq_issue", 11},
    {"library_not_found", 12}, {"function_not_found", 13},
    {"corrupted_inforom", 14}, {"gpu_is_lost", 15}, {"reset_required", 16},
    {"operating_system", 17}, {"lib_rm_version_mismatch", 18}, {"in_use", 19},
    {"memory", 20}, {"no_data", 21}, {"vgpu_ecc_not_supported", 22},
    {"insufficient_resources", 23}, {"freq_not_supported", 24},
    {"argument_version_mismatch", 25}, {"deprecated", 26}, {"not_ready", 27},
    {"gpu_not_found", 28}, {"invalid_state", 29}, {"unknown", 999},
};

/* An error name or number; unknown names read as NVML_ERROR_UNKNOWN. */
static int parse_error(const char *s)
{
    if (s == NULL || *s == '\0')
        return NVML_SUCCESS;
    for (size_t i = 0; i < sizeof k_errors / sizeof k_errors[0]; i++)
        if (strcasecmp(s, k_errors[i].name) == 0)
            return k_errors[i].code;
    const char *p = s;
    if (strncasecmp(p, "nvml_error_", 11) == 0) {
        for (size_t i = 0; i < sizeof k_errors / sizeof k_errors[0]; i++)
            if (strcasecmp(p + 11, k_errors[i].name) == 0)
                return k_errors[i].code;
    }
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (end != s && *end == '\0')
        return (int)v;
    return NVML_ERROR_UNKNOWN;
}

/* ---- logging ----------------------------------------------------------- */

/* A log line: the function and its arguments, then " rc=N", then outputs. */
struct logbuf {
    char text[2048];
    size_t len;
    char outs[1024];
    size_t outs_len;
};

static void append(char *buf, size_t cap, size_t *len, const char *fmt, va_list ap)
{
    if (*len >= cap - 2)
        return;
    int n = vsnprintf(buf + *len, cap - 1 - *len, fmt, ap);
    if (n > 0) {
        *len += (size_t)n;
        if (*len > cap - 2)
            *len = cap - 2;
    }
}

/* Log an argument. */
static void logf_(struct logbuf *lb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(struct logbuf *lb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    append(lb->text, sizeof lb->text, &lb->len, fmt, ap);
    va_end(ap);
}

/* Log an output (written after rc=). */
static void logo_(struct logbuf *lb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logo_(struct logbuf *lb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    append(lb->outs, sizeof lb->outs, &lb->outs_len, fmt, ap);
    va_end(ap);
}

static void log_start(struct logbuf *lb, const char *fn)
{
    lb->len = 0;
    lb->text[0] = '\0';
    lb->outs_len = 0;
    lb->outs[0] = '\0';
    logf_(lb, "%s tid=%ld", fn, (long)syscall(SYS_gettid));
}

/* Append the line to the log named by the scenario. Caller holds g_lock. */
static void log_write_locked(struct logbuf *lb)
{
    const char *path = get("log");
    if (path == NULL || *path == '\0')
        return;
    lb->text[lb->len++] = '\n';
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    ssize_t w = write(fd, lb->text, lb->len);
    (void)w;
    close(fd);
}

/* ---- call scaffolding -------------------------------------------------- */

static void sleep_ms(unsigned long long ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Sleep as stall.FN says; the lock is not held while sleeping. */
static void stall(const char *fn)
{
    pthread_mutex_lock(&g_lock);
    scenario_load_locked();
    unsigned long long ms = to_ull(getf("stall.%s", fn), 0);
    pthread_mutex_unlock(&g_lock);
    if (ms > 0)
        sleep_ms(ms);
}

/* The index of a handle handed out by nvmlDeviceGetHandleByIndex_v2, or -1. */
static int handle_index(nvmlDevice_t device)
{
    uintptr_t p = (uintptr_t)device, base = (uintptr_t)&g_devices[0];
    if (p < base || p >= (uintptr_t)&g_devices[MAX_DEVICES] || (p - base) % sizeof g_devices[0] != 0)
        return -1;
    return (int)((p - base) / sizeof g_devices[0]);
}

/*
 * Start a call: stall, take the lock, re-read the scenario, check init and
 * error injection and (when dev_handle is given) the handle. Returns
 * NVML_SUCCESS with the lock held and *index set, or an error code, also
 * with the lock held. Every call ends with finish().
 */
static int begin(const char *fn, struct logbuf *lb, int needs_init,
                 int has_device, nvmlDevice_t device, unsigned int *index)
{
    stall(fn);
    pthread_mutex_lock(&g_lock);
    scenario_load_locked();
    log_start(lb, fn);
    int idx = has_device ? handle_index(device) : -1;
    if (has_device) {
        if (idx >= 0)
            logf_(lb, " device=%d", idx);
        else
            logf_(lb, " device=%p", (void *)device);
    }
    if (needs_init && g_init_count == 0)
        return NVML_ERROR_UNINITIALIZED;
    if (idx >= 0) {
        int rc = parse_error(getf("device.%d.error.%s", idx, fn));
        if (rc != NVML_SUCCESS)
            return rc;
    }
    int rc = parse_error(getf("error.%s", fn));
    if (rc != NVML_SUCCESS)
        return rc;
    if (has_device) {
        if (idx < 0)
            return NVML_ERROR_INVALID_ARGUMENT;
        if ((unsigned long long)idx >= to_ull(get("devices"), 1))
            return NVML_ERROR_GPU_IS_LOST;
        *index = (unsigned int)idx;
    }
    return NVML_SUCCESS;
}

/* Log " rc=N" plus the extra output text, write the line, drop the lock. */
static nvmlReturn_t finish(struct logbuf *lb, int rc)
{
    logf_(lb, " rc=%d%s", rc, lb->outs);
    log_write_locked(lb);
    pthread_mutex_unlock(&g_lock);
    return (nvmlReturn_t)rc;
}

/* ---- init / shutdown / strings ---------------------------------------- */

static nvmlReturn_t do_init(const char *fn)
{
    struct logbuf lb;
    int rc = begin(fn, &lb, 0, 0, NULL, NULL);
    if (rc == NVML_SUCCESS) {
        if (!g_scn.present)
            rc = NVML_ERROR_DRIVER_NOT_LOADED;
        else
            rc = parse_error(get("init"));
    }
    if (rc == NVML_SUCCESS)
        g_init_count++;
    logo_(&lb, " scenario=%s refcount=%d", g_scn.present ? "present" : "missing", g_init_count);
    return finish(&lb, rc);
}

EXPORT nvmlReturn_t nvmlInit_v2(void) { return do_init("nvmlInit_v2"); }
EXPORT nvmlReturn_t nvmlInit(void) { return do_init("nvmlInit"); }
EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
    (void)flags;
    return do_init("nvmlInitWithFlags");
}

EXPORT nvmlReturn_t nvmlShutdown(void)
{
    struct logbuf lb;
    int rc = begin("nvmlShutdown", &lb, 1, 0, NULL, NULL);
    if (rc == NVML_SUCCESS)
        g_init_count--;
    logo_(&lb, " refcount=%d", g_init_count);
    return finish(&lb, rc);
}

EXPORT const char *nvmlErrorString(nvmlReturn_t result)
{
    switch ((int)result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case NVML_ERROR_ALREADY_INITIALIZED: return "Already Initialized";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_INSUFFICIENT_POWER: return "Insufficient External Power";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT: return "Timeout";
    case NVML_ERROR_IRQ_ISSUE: return "Interrupt Request Issue";
    case NVML_ERROR_LIBRARY_NOT_FOUND: return "NVML Shared Library Not Found";
    case NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
    case NVML_ERROR_CORRUPTED_INFOROM: return "Corrupted infoROM";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    case NVML_ERROR_RESET_REQUIRED: return "GPU requires restart";
    case NVML_ERROR_OPERATING_SYSTEM: return "The operating system has blocked the request.";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "RM has detected an NVML/RM version mismatch.";
    case NVML_ERROR_IN_USE: return "In use by another client";
    case NVML_ERROR_MEMORY: return "Insufficient Memory";
    case NVML_ERROR_NO_DATA: return "No data";
    case NVML_ERROR_UNKNOWN: return "Unknown Error";
    default: return "Unknown Error";
    }
}

/* ---- system and device queries ---------------------------------------- */

static int copy_string(char *dst, unsigned int length, const char *src)
{
    if (dst == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    size_t n = strlen(src);
    if ((size_t)length < n + 1)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(dst, src, n + 1);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    struct logbuf lb;
    int rc = begin("nvmlSystemGetDriverVersion", &lb, 1, 0, NULL, NULL);
    logf_(&lb, " length=%u", length);
    if (rc == NVML_SUCCESS) {
        const char *v = get("driver_version");
        rc = copy_string(version, length, v != NULL ? v : "550.54.15");
    }
    return finish(&lb, rc);
}

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
    struct logbuf lb;
    int rc = begin("nvmlDeviceGetCount_v2", &lb, 1, 0, NULL, NULL);
    if (rc == NVML_SUCCESS) {
        if (deviceCount == NULL) {
            rc = NVML_ERROR_INVALID_ARGUMENT;
        } else {
            unsigned long long n = to_ull(get("devices"), 1);
            *deviceCount = (unsigned int)(n > MAX_DEVICES ? MAX_DEVICES : n);
            logo_(&lb, " count=%u", *deviceCount);
        }
    }
    return finish(&lb, rc);
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    struct logbuf lb;
    int rc = begin("nvmlDeviceGetHandleByIndex_v2", &lb, 1, 0, NULL, NULL);
    logf_(&lb, " index=%u", index);
    if (rc == NVML_SUCCESS) {
        unsigned long long n = to_ull(get("devices"), 1);
        if (device == NULL || index >= n || index >= MAX_DEVICES) {
            rc = NVML_ERROR_INVALID_ARGUMENT;
        } else {
            g_devices[index].index = index;
            *device = &g_devices[index];
        }
    }
    return finish(&lb, rc);
}

EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    struct logbuf lb;
    unsigned int d = 0;
    int rc = begin("nvmlDeviceGetName", &lb, 1, 1, device, &d);
    logf_(&lb, " length=%u", length);
    if (rc == NVML_SUCCESS) {
        const char *v = getf("device.%u.name", d);
        rc = copy_string(name, length, v != NULL ? v : "NVIDIA H100 80GB HBM3");
    }
    return finish(&lb, rc);
}

EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    struct logbuf lb;
    unsigned int d = 0;
    int rc = begin("nvmlDeviceGetUUID", &lb, 1, 1, device, &d);
    logf_(&lb, " length=%u", length);
    if (rc == NVML_SUCCESS) {
        char dflt[64];
        snprintf(dflt, sizeof dflt, "GPU-6a1f0c8e-0000-0000-0000-%012x", d);
        const char *v = getf("device.%u.uuid", d);
        rc = copy_string(uuid, length, v != NULL ? v : dflt);
    }
    return finish(&lb, rc);
}

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    struct logbuf lb;
    unsigned int d = 0;
    int rc = begin("nvmlDeviceGetMemoryInfo", &lb, 1, 1, device, &d);
    if (rc == NVML_SUCCESS) {
        if (memory == NULL) {
            rc = NVML_ERROR_INVALID_ARGUMENT;
        } else {
            unsigned long long total = dev_ull(d, "memory_total", 85520809984ULL);
            unsigned long long used = dev_ull(d, "memory_used", 10422845440ULL);
            memory->total = total;
            memory->used = used;
            memory->free = used <= total ? total - used : 0;
            logo_(&lb, " total=%llu used=%llu free=%llu", memory->total, memory->used, memory->free);
        }
    }
    return finish(&lb, rc);
}

EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization)
{
    struct logbuf lb;
    unsigned int d = 0;
    int rc = begin("nvmlDeviceGetUtilizationRates", &lb, 1, 1, device, &d);
    if (rc == NVML_SUCCESS) {
        if (utilization == NULL) {
            rc = NVML_ERROR_INVALID_ARGUMENT;
        } else {
            utilization->gpu = (unsigned int)dev_ull(d, "utilization_gpu", 99);
            utilization->memory = (unsigned int)dev_ull(d, "utilization_memory", 6);
            logo_(&lb, " gpu=%u memory=%u", utilization->gpu, utilization->memory);
        }
    }
    return finish(&lb, rc);
}

/* ---- process lists ----------------------------------------------------- */

struct proc {
    unsigned int pid;
    unsigned long long mem;
};

/* Parse "pid:mem,pid:mem" into out; returns the count. */
static unsigned int parse_procs(const char *s, struct proc *out, unsigned int max)
{
    unsigned int n = 0;
    while (s != NULL && *s != '\0' && n < max) {
        char *end = NULL;
        while (*s == ' ' || *s == ',')
            s++;
        if (*s == '\0')
            break;
        unsigned long pid = strtoul(s, &end, 10);
        if (end == s)
            break;
        s = end;
        unsigned long long mem = 0;
        if (*s == ':') {
            s++;
            mem = strtoull(s, &end, 10);
            s = end;
        }
        out[n].pid = (unsigned int)pid;
        out[n].mem = mem;
        n++;
        while (*s != '\0' && *s != ',')
            s++;
    }
    return n;
}

static nvmlReturn_t running_processes(const char *fn, int kind, const char *key,
                                      nvmlDevice_t device, unsigned int *infoCount,
                                      nvmlProcessInfo_t *infos)
{
    struct logbuf lb;
    unsigned int d = 0;
    int rc = begin(fn, &lb, 1, 1, device, &d);
    if (infoCount == NULL) {
        logf_(&lb, " count_in=null");
        if (rc == NVML_SUCCESS)
            rc = NVML_ERROR_INVALID_ARGUMENT;
        return finish(&lb, rc);
    }
    unsigned int count_in = *infoCount;
    logf_(&lb, " count_in=%u infos=%s", count_in, infos == NULL ? "null" : "buffer");
    if (rc != NVML_SUCCESS)
        return finish(&lb, rc);

    static struct proc procs[MAX_PROCS]; /* guarded by g_lock */
    unsigned int n = parse_procs(getf("device.%u.%s", d, key), procs, MAX_PROCS);

    struct grow_state *g = &g_grow[kind][d];
    long long grow = (long long)to_ull(getf("grow.%s", fn), 0);
    int size_query = (count_in == 0 || infos == NULL);
    if (grow <= 0) {
        g->armed = 0;
        g->fired_value = 0; /* a later grow fires again, even with the same value */
    } else if (size_query) {
        if (grow != g->fired_value)
            g->armed = 1;
    } else if (g->armed) {
        g->armed = 0;
        if (grow > 0 && grow != g->fired_value) {
            g->fired_value = grow;
            g->extra += (unsigned int)grow;
            logo_(&lb, " grew=%lld", grow);
        }
    }
    for (unsigned int i = 0; i < g->extra && n < MAX_PROCS; i++) {
        procs[n].pid = GROW_PID_BASE + 1 + i;
        procs[n].mem = 1024ULL * 1024ULL;
        n++;
    }

    if (n == 0) {
        *infoCount = 0;
        rc = NVML_SUCCESS;
    } else if (size_query || count_in < n) {
        *infoCount = n;
        rc = NVML_ERROR_INSUFFICIENT_SIZE;
    } else {
        for (unsigned int i = 0; i < n; i++) {
            infos[i].pid = procs[i].pid;
            infos[i].usedGpuMemory = procs[i].mem;
            infos[i].gpuInstanceId = 0xFFFFFFFFu;
            infos[i].computeInstanceId = 0xFFFFFFFFu;
        }
        *infoCount = n;
        rc = NVML_SUCCESS;
    }
    logo_(&lb, " count_out=%u", *infoCount);
    if (rc == NVML_SUCCESS) {
        for (unsigned int i = 0; i < n && i < 16; i++)
            logo_(&lb, " %u:%llu", procs[i].pid, procs[i].mem);
    }
    return finish(&lb, rc);
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                             nvmlProcessInfo_t *infos)
{
    return running_processes("nvmlDeviceGetComputeRunningProcesses_v3", LIST_COMPUTE, "compute",
                             device, infoCount, infos);
}

EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                              nvmlProcessInfo_t *infos)
{
    return running_processes("nvmlDeviceGetGraphicsRunningProcesses_v3", LIST_GRAPHICS, "graphics",
                             device, infoCount, infos);
}

/* ---- per-process utilization ------------------------------------------ */

#ifndef FAKE_NVML_WITHOUT_PROCESS_UTILIZATION
struct sample {
    unsigned int pid, sm, mem, enc, dec;
    unsigned long long age_us;
};

/* Parse "pid:sm:mem:enc:dec[:age_us],..." into out; returns the count. */
static unsigned int parse_samples(const char *s, struct sample *out, unsigned int max)
{
    unsigned int n = 0;
    while (s != NULL && *s != '\0' && n < max) {
        while (*s == ' ' || *s == ',')
            s++;
        if (*s == '\0')
            break;
        unsigned long long f[6] = {0, 0, 0, 0, 0, 0};
        int nf = 0;
        while (nf < 6) {
            char *end = NULL;
            f[nf] = strtoull(s, &end, 10);
            if (end == s)
                break;
            nf++;
            s = end;
            if (*s != ':')
                break;
            s++;
        }
        if (nf == 0)
            break;
        out[n].pid = (unsigned int)f[0];
        out[n].sm = (unsigned int)f[1];
        out[n].mem = (unsigned int)f[2];
        out[n].enc = (unsigned int)f[3];
        out[n].dec = (unsigned int)f[4];
        out[n].age_us = f[5];
        n++;
        while (*s != '\0' && *s != ',')
            s++;
    }
    return n;
}

static unsigned long long now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000ULL;
}

EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                                     nvmlProcessUtilizationSample_t *utilization,
                                                     unsigned int *processSamplesCount,
                                                     unsigned long long lastSeenTimeStamp)
{
    struct logbuf lb;
    unsigned int d = 0;
    int rc = begin("nvmlDeviceGetProcessUtilization", &lb, 1, 1, device, &d);
    if (processSamplesCount == NULL) {
        logf_(&lb, " count_in=null last_seen=%llu", lastSeenTimeStamp);
        if (rc == NVML_SUCCESS)
            rc = NVML_ERROR_INVALID_ARGUMENT;
        return finish(&lb, rc);
    }
    unsigned int count_in = *processSamplesCount;
    logf_(&lb, " count_in=%u samples=%s last_seen=%llu", count_in,
          utilization == NULL ? "null" : "buffer", lastSeenTimeStamp);
    if (rc != NVML_SUCCESS)
        return finish(&lb, rc);

    static struct sample all[MAX_PROCS]; /* guarded by g_lock */
    unsigned int n_all = parse_samples(getf("device.%u.samples", d), all, MAX_PROCS);
    unsigned long long now = now_us();
    unsigned int n = 0;
    for (unsigned int i = 0; i < n_all; i++) {
        unsigned long long ts = now > all[i].age_us ? now - all[i].age_us : 0;
        if (ts > lastSeenTimeStamp)
            n++;
    }
    if (n == 0) {
        rc = NVML_ERROR_NOT_FOUND;
    } else if (utilization == NULL || count_in < n) {
        *processSamplesCount = n;
        rc = NVML_ERROR_INSUFFICIENT_SIZE;
        logo_(&lb, " count_out=%u", n);
    } else {
        unsigned int k = 0;
        for (unsigned int i = 0; i < n_all; i++) {
            unsigned long long ts = now > all[i].age_us ? now - all[i].age_us : 0;
            if (ts <= lastSeenTimeStamp)
                continue;
            utilization[k].pid = all[i].pid;
            utilization[k].timeStamp = ts;
            utilization[k].smUtil = all[i].sm;
            utilization[k].memUtil = all[i].mem;
            utilization[k].encUtil = all[i].enc;
            utilization[k].decUtil = all[i].dec;
            k++;
        }
        *processSamplesCount = k;
        rc = NVML_SUCCESS;
        logo_(&lb, " count_out=%u now=%llu", k, now);
        for (unsigned int i = 0; i < k && i < 16; i++)
            logo_(&lb, " %u:%u:%u:%u:%u", utilization[i].pid, utilization[i].smUtil,
                  utilization[i].memUtil, utilization[i].encUtil, utilization[i].decUtil);
    }
    return finish(&lb, rc);
}
#endif

/* ---- sensors and clocks ------------------------------------------------ */

EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType,
                                              unsigned int *temp)
{
    struct logbuf lb;
    unsigned int d = 0;
    int rc = begin("nvmlDeviceGetTemperature", &lb, 1, 1, device, &d);
    logf_(&lb, " sensor=%d", (int)sensorType);
    if (rc == NVML_SUCCESS) {
        if (temp == NULL || sensorType != NVML_TEMPERATURE_GPU) {
            rc = NVML_ERROR_INVALID_ARGUMENT;
        } else {
            *temp = (unsigned int)dev_ull(d, "temperature", 62);
            logo_(&lb, " temp=%u", *temp);
        }
    }
    return finish(&lb, rc);
}

#ifndef FAKE_NVML_WITHOUT_POWER
EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power)
{
    struct logbuf lb;
    unsigned int d = 0;
    int rc = begin("nvmlDeviceGetPowerUsage", &lb, 1, 1, device, &d);
    if (rc == NVML_SUCCESS) {
        if (power == NULL) {
            rc = NVML_ERROR_INVALID_ARGUMENT;
        } else {
            *power = (unsigned int)dev_ull(d, "power_mw", 638498);
            logo_(&lb, " power_mw=%u", *power);
        }
    }
    return finish(&lb, rc);
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock)
{
    struct logbuf lb;
    unsigned int d = 0;
    int rc = begin("nvmlDeviceGetClockInfo", &lb, 1, 1, device, &d);
    logf_(&lb, " type=%d", (int)type);
    if (rc == NVML_SUCCESS) {
        unsigned long long sm = dev_ull(d, "clock_sm_mhz", 1980);
        if (clock == NULL) {
            rc = NVML_ERROR_INVALID_ARGUMENT;
        } else {
            switch ((int)type) {
            case NVML_CLOCK_GRAPHICS: *clock = (unsigned int)dev_ull(d, "clock_graphics_mhz", sm); break;
            case NVML_CLOCK_SM: *clock = (unsigned int)sm; break;
            case NVML_CLOCK_MEM: *clock = (unsigned int)dev_ull(d, "clock_mem_mhz", 2619); break;
            case NVML_CLOCK_VIDEO: *clock = (unsigned int)dev_ull(d, "clock_video_mhz", 1755); break;
            default: rc = NVML_ERROR_INVALID_ARGUMENT; break;
            }
            if (rc == NVML_SUCCESS)
                logo_(&lb, " mhz=%u", *clock);
        }
    }
    return finish(&lb, rc);
}

static nvmlReturn_t clock_reasons(const char *fn, nvmlDevice_t device, unsigned long long *reasons)
{
    struct logbuf lb;
    unsigned int d = 0;
    int rc = begin(fn, &lb, 1, 1, device, &d);
    if (rc == NVML_SUCCESS) {
        if (reasons == NULL) {
            rc = NVML_ERROR_INVALID_ARGUMENT;
        } else {
            *reasons = dev_ull(d, "clocks_event_reasons", 0);
            logo_(&lb, " reasons=%llu", *reasons);
        }
    }
    return finish(&lb, rc);
}

EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long *clocksEventReasons)
{
    return clock_reasons("nvmlDeviceGetCurrentClocksEventReasons", device, clocksEventReasons);
}

EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                               unsigned long long *clocksThrottleReasons)
{
    return clock_reasons("nvmlDeviceGetCurrentClocksThrottleReasons", device, clocksThrottleReasons);
}

EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode, unsigned int *pendingMode)
{
    struct logbuf lb;
    unsigned int d = 0;
    int rc = begin("nvmlDeviceGetMigMode", &lb, 1, 1, device, &d);
    if (rc == NVML_SUCCESS) {
        if (currentMode == NULL || pendingMode == NULL) {
            rc = NVML_ERROR_INVALID_ARGUMENT;
        } else {
            unsigned long long cur = dev_ull(d, "mig", 0);
            *currentMode = (unsigned int)cur;
            *pendingMode = (unsigned int)dev_ull(d, "mig_pending", cur);
            logo_(&lb, " current=%u pending=%u", *currentMode, *pendingMode);
        }
    }
    return finish(&lb, rc);
}
