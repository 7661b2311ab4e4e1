// NVIDIA's management library, loaded at run time: perfhud has no build-time dependency on the
// driver, and a machine without it (or with an older one lacking a call) loses only the figures
// that call gives. Written by hand because no Swift package binds NVML, and the few calls perfhud
// makes need their structs exactly as nvml.h lays them out (below, with the header's names).
//
// Every call here is made on perfhud's GPU thread only (GPUMonitor): NVML takes the driver's
// lock, and a call can stall for milliseconds or, on a sick driver, seconds.
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include "CSystemShims.h"

// nvml.h's types, as the header defines them (NVML API version 12/13).
typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
enum { NVML_SUCCESS = 0, NVML_ERROR_NOT_SUPPORTED = 3, NVML_ERROR_NOT_FOUND = 6, NVML_ERROR_INSUFFICIENT_SIZE = 7,
       NVML_ERROR_FUNCTION_NOT_FOUND = 13 };
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
// What the _v3 process lists fill (nvmlProcessInfo_t since NVML 11.5: 24 bytes).
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlProcessInfo_t;
typedef struct {
    unsigned int pid;
    unsigned long long timeStamp;  // CPU timestamp in microseconds
    unsigned int smUtil, memUtil, encUtil, decUtil;
} nvmlProcessUtilizationSample_t;
#define NVML_TEMPERATURE_GPU 0
#define NVML_CLOCK_SM 1

static struct {
    void *library;
    nvmlReturn_t (*init)(void);
    nvmlReturn_t (*count)(unsigned int *);
    nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t *);
    nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned int);
    nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned int);
    nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t *);
    nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t *);
    nvmlReturn_t (*compute)(nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *);
    nvmlReturn_t (*graphics)(nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *);
    nvmlReturn_t (*samples)(nvmlDevice_t, nvmlProcessUtilizationSample_t *, unsigned int *, unsigned long long);
    nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned int *);
    nvmlReturn_t (*power)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned int *);
    nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long *);
    nvmlReturn_t (*mig)(nvmlDevice_t, unsigned int *, unsigned int *);
    nvmlDevice_t devices[PERFHUD_NVML_MAX_DEVICES];
    unsigned int device_count;
    /// The room each device's compute and graphics lists needed last (0: ask the size first).
    unsigned int rooms[PERFHUD_NVML_MAX_DEVICES][2];
} nvml;

int perfhud_nvml_open(void) {
    if (nvml.library) return 0;
    void *library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) return PERFHUD_NVML_NO_LIBRARY;
    nvml.init = (nvmlReturn_t (*)(void))dlsym(library, "nvmlInit_v2");
    nvml.count = (nvmlReturn_t (*)(unsigned int *))dlsym(library, "nvmlDeviceGetCount_v2");
    nvml.handle = (nvmlReturn_t (*)(unsigned int, nvmlDevice_t *))dlsym(library, "nvmlDeviceGetHandleByIndex_v2");
    if (!nvml.init || !nvml.count || !nvml.handle) { dlclose(library); return PERFHUD_NVML_NO_LIBRARY; }
    nvmlReturn_t rc = nvml.init();
    if (rc != NVML_SUCCESS) { dlclose(library); return rc; }
    nvml.library = library;
    nvml.name = dlsym(library, "nvmlDeviceGetName");
    nvml.uuid = dlsym(library, "nvmlDeviceGetUUID");
    nvml.memory = dlsym(library, "nvmlDeviceGetMemoryInfo");
    nvml.utilization = dlsym(library, "nvmlDeviceGetUtilizationRates");
    nvml.compute = dlsym(library, "nvmlDeviceGetComputeRunningProcesses_v3");
    nvml.graphics = dlsym(library, "nvmlDeviceGetGraphicsRunningProcesses_v3");
    nvml.samples = dlsym(library, "nvmlDeviceGetProcessUtilization");
    nvml.temperature = dlsym(library, "nvmlDeviceGetTemperature");
    nvml.power = dlsym(library, "nvmlDeviceGetPowerUsage");
    nvml.clock = dlsym(library, "nvmlDeviceGetClockInfo");
    // Renamed in NVML 12.2; drivers before it have the old name only.
    nvml.reasons = dlsym(library, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!nvml.reasons) nvml.reasons = dlsym(library, "nvmlDeviceGetCurrentClocksThrottleReasons");
    nvml.mig = dlsym(library, "nvmlDeviceGetMigMode");
    unsigned int count = 0;
    rc = nvml.count(&count);
    if (rc != NVML_SUCCESS) return rc;
    nvml.device_count = 0;
    for (unsigned int i = 0; i < count && nvml.device_count < PERFHUD_NVML_MAX_DEVICES; i++) {
        nvmlDevice_t device;
        if (nvml.handle(i, &device) == NVML_SUCCESS) nvml.devices[nvml.device_count++] = device;
    }
    return 0;
}

unsigned int perfhud_nvml_device_count(void) { return nvml.library ? nvml.device_count : 0; }

// A call the library lacks reads as NVML_ERROR_FUNCTION_NOT_FOUND: its figure is unknown, nothing else.
#define CALL(function, ...) (nvml.function ? nvml.function(__VA_ARGS__) : NVML_ERROR_FUNCTION_NOT_FOUND)

void perfhud_nvml_read_device(unsigned int index, perfhud_nvml_device_reading *out) {
    memset(out, 0, sizeof *out);
    if (index >= perfhud_nvml_device_count()) { out->status = NVML_ERROR_NOT_FOUND; return; }
    nvmlDevice_t device = nvml.devices[index];
    out->status = CALL(name, device, out->name, sizeof out->name);
    if (out->status != NVML_SUCCESS) out->name[0] = 0;
    if (CALL(uuid, device, out->uuid, sizeof out->uuid) != NVML_SUCCESS) out->uuid[0] = 0;
    nvmlMemory_t memory;
    out->memory_status = CALL(memory, device, &memory);
    if (out->memory_status == NVML_SUCCESS) { out->memory_total = memory.total; out->memory_used = memory.used; }
    nvmlUtilization_t utilization;
    out->utilization_status = CALL(utilization, device, &utilization);
    if (out->utilization_status == NVML_SUCCESS) { out->gpu_percent = utilization.gpu; out->memory_percent = utilization.memory; }
    out->temperature_status = CALL(temperature, device, NVML_TEMPERATURE_GPU, &out->temperature);
    out->power_status = CALL(power, device, &out->power_milliwatts);
    out->clock_status = CALL(clock, device, NVML_CLOCK_SM, &out->clock_mhz);
    out->reasons_status = CALL(reasons, device, &out->reasons);
    unsigned int pending = 0;
    out->mig_status = CALL(mig, device, &out->mig, &pending);
}

/// One process list by NVML's size-then-fill pattern: ask the size, fill, and ask again while the
/// list grew in between (a process started): INSUFFICIENT_SIZE says so, with the new size. The
/// room last needed is kept (`room`), so a pass makes one call, not two: a driver that holds each
/// call for a while (its lock) is asked half as often.
static nvmlReturn_t process_list(nvmlReturn_t (*list)(nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *), nvmlDevice_t device,
                                 unsigned int *room, perfhud_nvml_process *out, unsigned int capacity, unsigned int *written) {
    *written = 0;
    if (!list) return NVML_ERROR_FUNCTION_NOT_FOUND;
    unsigned int count = 0;
    nvmlReturn_t rc = NVML_ERROR_INSUFFICIENT_SIZE;
    if (*room == 0) {
        rc = list(device, &count, NULL);
        if (rc != NVML_ERROR_INSUFFICIENT_SIZE) return rc;  // none (SUCCESS), or an error
        *room = count + 4;  // room for a few that start meanwhile
    }
    for (int attempt = 0; attempt < 4 && rc == NVML_ERROR_INSUFFICIENT_SIZE; attempt++) {
        nvmlProcessInfo_t *infos = calloc(*room, sizeof *infos);
        if (!infos) return NVML_ERROR_INSUFFICIENT_SIZE;
        count = *room;
        rc = list(device, &count, infos);
        if (rc == NVML_SUCCESS) {
            for (unsigned int i = 0; i < count && *written < capacity; i++) {
                out[*written].pid = infos[i].pid;
                out[*written].memory = infos[i].usedGpuMemory;
                (*written)++;
            }
            // Shrinks back when far fewer run, so the buffer stays small.
            if (count + 16 < *room) *room = count + 4;
        } else if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
            *room = count + 4;
        }
        free(infos);
    }
    return rc;
}

int perfhud_nvml_processes(unsigned int index, perfhud_nvml_process *out, unsigned int capacity, unsigned int *written, int statuses[2]) {
    *written = 0;
    statuses[0] = statuses[1] = NVML_ERROR_NOT_FOUND;
    if (index >= perfhud_nvml_device_count()) return NVML_ERROR_NOT_FOUND;
    unsigned int compute = 0, graphics = 0;
    nvmlReturn_t rc = process_list(nvml.compute, nvml.devices[index], &nvml.rooms[index][0], out, capacity, &compute);
    nvmlReturn_t graphicsRC = process_list(nvml.graphics, nvml.devices[index], &nvml.rooms[index][1], out + compute, capacity - compute,
                                           &graphics);
    *written = compute + graphics;
    statuses[0] = rc;
    statuses[1] = graphicsRC;
    // Either list is an answer (the caller says which was refused); the first failure is the one said.
    if (rc == NVML_SUCCESS || graphicsRC == NVML_SUCCESS) return NVML_SUCCESS;
    return rc;
}

int perfhud_nvml_samples(unsigned int index, unsigned long long since, perfhud_nvml_sample *out, unsigned int capacity,
                         unsigned int *written) {
    *written = 0;
    if (index >= perfhud_nvml_device_count()) return NVML_ERROR_NOT_FOUND;
    if (!nvml.samples) return NVML_ERROR_FUNCTION_NOT_FOUND;
    nvmlDevice_t device = nvml.devices[index];
    unsigned int count = 0;
    nvmlReturn_t rc = nvml.samples(device, NULL, &count, since);
    for (int attempt = 0; attempt < 4 && rc == NVML_ERROR_INSUFFICIENT_SIZE; attempt++) {
        unsigned int room = count + 4;
        nvmlProcessUtilizationSample_t *samples = calloc(room, sizeof *samples);
        if (!samples) return NVML_ERROR_INSUFFICIENT_SIZE;
        count = room;
        rc = nvml.samples(device, samples, &count, since);
        if (rc == NVML_SUCCESS) {
            for (unsigned int i = 0; i < count && *written < capacity; i++) {
                out[*written].pid = samples[i].pid;
                out[*written].timestamp = samples[i].timeStamp;
                out[*written].sm = samples[i].smUtil;
                out[*written].memory = samples[i].memUtil;
                out[*written].encoder = samples[i].encUtil;
                out[*written].decoder = samples[i].decUtil;
                (*written)++;
            }
        }
        free(samples);
    }
    return rc;
}
