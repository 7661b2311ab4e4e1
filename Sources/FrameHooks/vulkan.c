/* libperfhud-vulkan.so: VK_LAYER_PERFHUD_frames, an implicit Vulkan layer timing vkQueuePresentKHR.
 *
 * Enabled only where the environment asks (its manifest, perfhud_vulkan_layer.json: enable_environment
 * PERFHUD_VULKAN=1, disable_environment PERFHUD_VULKAN_DISABLE=1), and found through the loader's
 * layer search path variable that `perfhud run` sets for the program alone. A frame is the time
 * between two consecutive presents of the same swapchain; a present of several swapchains is a
 * frame of each.
 *
 * The loader interface (negotiation, the chain-link structures the loader puts in the pNext chain
 * of vkCreateInstance/vkCreateDevice) is declared here rather than taken from <vulkan/vk_layer.h>:
 * Debian's libvulkan-dev would then be a build dependency for a handful of stable structures
 * (fixed by the loader ABI, interface version 2). The handles are opaque: dispatchable handles are
 * pointers whose first word is the loader's dispatch table (shared by an instance and its physical
 * devices, or a device and its queues), which is how a layer maps a queue to its device. */
#define _GNU_SOURCE
#include "common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef int32_t VkResult;
typedef int32_t VkStructureType;
typedef void *VkInstance, *VkPhysicalDevice, *VkDevice, *VkQueue;
typedef uint64_t VkSwapchainKHR; /* non-dispatchable: 64 bits everywhere */
typedef void (*PFN_vkVoidFunction)(void);
typedef PFN_vkVoidFunction (*PFN_vkGetInstanceProcAddr)(VkInstance, const char *);
typedef PFN_vkVoidFunction (*PFN_vkGetDeviceProcAddr)(VkDevice, const char *);
typedef PFN_vkVoidFunction (*PFN_GetPhysicalDeviceProcAddr)(VkInstance, const char *);
typedef VkResult (*PFN_vkCreateInstance)(const void *info, const void *allocator, VkInstance *out);
typedef void (*PFN_vkDestroyInstance)(VkInstance, const void *allocator);
typedef VkResult (*PFN_vkCreateDevice)(VkPhysicalDevice, const void *info, const void *allocator, VkDevice *out);
typedef void (*PFN_vkDestroyDevice)(VkDevice, const void *allocator);
typedef VkResult (*PFN_vkQueuePresentKHR)(VkQueue, const void *present_info);
typedef void (*PFN_vkDestroySwapchainKHR)(VkDevice, VkSwapchainKHR, const void *allocator);

#define VK_SUCCESS 0
#define VK_ERROR_INITIALIZATION_FAILED (-3)
#define VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO 47
#define VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO 48
#define VK_LAYER_LINK_INFO 0
#define LAYER_NEGOTIATE_INTERFACE_STRUCT 1

struct base_structure { VkStructureType sType; const void *pNext; };

struct VkLayerInstanceLink {
    struct VkLayerInstanceLink *pNext;
    PFN_vkGetInstanceProcAddr pfnNextGetInstanceProcAddr;
    PFN_GetPhysicalDeviceProcAddr pfnNextGetPhysicalDeviceProcAddr;
};
struct VkLayerInstanceCreateInfo {
    VkStructureType sType;
    const void *pNext;
    int32_t function; /* VkLayerFunction */
    union { struct VkLayerInstanceLink *pLayerInfo; void *other[2]; } u;
};
struct VkLayerDeviceLink {
    struct VkLayerDeviceLink *pNext;
    PFN_vkGetInstanceProcAddr pfnNextGetInstanceProcAddr;
    PFN_vkGetDeviceProcAddr pfnNextGetDeviceProcAddr;
};
struct VkLayerDeviceCreateInfo {
    VkStructureType sType;
    const void *pNext;
    int32_t function;
    union { struct VkLayerDeviceLink *pLayerInfo; void *other; } u;
};
struct VkNegotiateLayerInterface {
    int32_t sType; /* VkNegotiateLayerStructType */
    void *pNext;
    uint32_t loaderLayerInterfaceVersion;
    PFN_vkGetInstanceProcAddr pfnGetInstanceProcAddr;
    PFN_vkGetDeviceProcAddr pfnGetDeviceProcAddr;
    PFN_GetPhysicalDeviceProcAddr pfnGetPhysicalDeviceProcAddr;
};
struct VkPresentInfoKHR {
    VkStructureType sType;
    const void *pNext;
    uint32_t waitSemaphoreCount;
    const void *pWaitSemaphores;
    uint32_t swapchainCount;
    const VkSwapchainKHR *pSwapchains;
    const uint32_t *pImageIndices;
    VkResult *pResults;
};

static void *dispatch_key(const void *handle) { return *(void *const *)handle; }

/* Instances and devices: small fixed tables (no allocation; a program has a few of each). Written
 * under table_lock at create/destroy; read without it on the present path (the key is published
 * last, with release order, and cleared first). */
#define MAX_INSTANCES 16
#define MAX_DEVICES 32
#define MAX_SWAPCHAINS 64
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

static struct instance_entry {
    _Atomic(void *) key;
    VkInstance handle;
    PFN_vkGetInstanceProcAddr next_gipa;
    PFN_vkDestroyInstance next_destroy;
} instances[MAX_INSTANCES];

static struct device_entry {
    _Atomic(void *) key;
    PFN_vkGetDeviceProcAddr next_gdpa;
    PFN_vkDestroyDevice next_destroy;
    PFN_vkQueuePresentKHR next_present;
    PFN_vkDestroySwapchainKHR next_destroy_swapchain;
} devices[MAX_DEVICES];

/* Swapchain clocks: the present path claims a free slot with a compare-and-swap, so presents on
 * different threads never wait for each other. */
static struct swapchain_entry {
    _Atomic uint64_t handle;
    struct perfhud_clock clock;
} swapchains[MAX_SWAPCHAINS];

static struct instance_entry *find_instance(const void *handle) {
    void *key = dispatch_key(handle);
    for (int i = 0; i < MAX_INSTANCES; i++)
        if (atomic_load_explicit(&instances[i].key, memory_order_acquire) == key) return &instances[i];
    return NULL;
}

static struct device_entry *find_device(const void *handle) {
    void *key = dispatch_key(handle);
    for (int i = 0; i < MAX_DEVICES; i++)
        if (atomic_load_explicit(&devices[i].key, memory_order_acquire) == key) return &devices[i];
    return NULL;
}

static struct perfhud_clock *swapchain_clock(VkSwapchainKHR handle) {
    unsigned start = (unsigned)((handle >> 4) ^ (handle >> 20)) % MAX_SWAPCHAINS;
    for (unsigned n = 0; n < MAX_SWAPCHAINS; n++) {
        struct swapchain_entry *entry = &swapchains[(start + n) % MAX_SWAPCHAINS];
        uint64_t current = atomic_load_explicit(&entry->handle, memory_order_acquire);
        if (current == handle) return &entry->clock;
        if (current == 0) {
            uint64_t expected = 0;
            if (atomic_compare_exchange_strong(&entry->handle, &expected, handle)) {
                entry->clock = (struct perfhud_clock){0};
                return &entry->clock;
            }
            if (expected == handle) return &entry->clock;
        }
    }
    return NULL; /* more than 64 live swapchains: the rest are not timed */
}

static void forget_swapchain(VkSwapchainKHR handle) {
    for (int i = 0; i < MAX_SWAPCHAINS; i++) {
        uint64_t expected = handle;
        if (handle && atomic_compare_exchange_strong(&swapchains[i].handle, &expected, 0)) return;
    }
}

/* The loader honours the manifest's disable_environment only for implicit layers; enabled as an
 * explicit layer (VK_INSTANCE_LAYERS, as on Debian 12's loader), the layer checks it itself and then
 * only forwards. */
static int disabled;
__attribute__((constructor)) static void read_disable(void) {
    const char *value = getenv("PERFHUD_VULKAN_DISABLE");
    disabled = value && !strcmp(value, "1");
}

static VkResult layer_QueuePresentKHR(VkQueue queue, const void *info) {
    struct device_entry *device = find_device(queue);
    if (!device) return VK_ERROR_INITIALIZATION_FAILED;
    if (perfhud_active() && !disabled) {
        const struct VkPresentInfoKHR *present = info;
        for (uint32_t i = 0; i < present->swapchainCount; i++) {
            struct perfhud_clock *clock = swapchain_clock(present->pSwapchains[i]);
            if (clock) perfhud_present(clock);
        }
    }
    return device->next_present(queue, info);
}

static void layer_DestroySwapchainKHR(VkDevice handle, VkSwapchainKHR swapchain, const void *allocator) {
    struct device_entry *device = find_device(handle);
    forget_swapchain(swapchain);
    if (device && device->next_destroy_swapchain) device->next_destroy_swapchain(handle, swapchain, allocator);
}

static VkResult layer_CreateInstance(const void *info, const void *allocator, VkInstance *out) {
    struct VkLayerInstanceCreateInfo *link = (struct VkLayerInstanceCreateInfo *)((const struct base_structure *)info)->pNext;
    while (link && !(link->sType == VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO && link->function == VK_LAYER_LINK_INFO))
        link = (struct VkLayerInstanceCreateInfo *)link->pNext;
    if (!link || !link->u.pLayerInfo) return VK_ERROR_INITIALIZATION_FAILED;
    PFN_vkGetInstanceProcAddr next_gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext; /* the next layer finds its own link */
    PFN_vkCreateInstance next_create = (PFN_vkCreateInstance)next_gipa(NULL, "vkCreateInstance");
    if (!next_create) return VK_ERROR_INITIALIZATION_FAILED;
    VkResult result = next_create(info, allocator, out);
    if (result != VK_SUCCESS) return result;
    if (!disabled) perfhud_announce("vulkan"); /* a program that never presents is known for a Vulkan one */
    pthread_mutex_lock(&table_lock);
    for (int i = 0; i < MAX_INSTANCES; i++) {
        if (atomic_load(&instances[i].key)) continue;
        instances[i].handle = *out;
        instances[i].next_gipa = next_gipa;
        instances[i].next_destroy = (PFN_vkDestroyInstance)next_gipa(*out, "vkDestroyInstance");
        atomic_store_explicit(&instances[i].key, dispatch_key(*out), memory_order_release);
        break;
    }
    pthread_mutex_unlock(&table_lock);
    return VK_SUCCESS;
}

static void layer_DestroyInstance(VkInstance handle, const void *allocator) {
    if (!handle) return;
    pthread_mutex_lock(&table_lock);
    struct instance_entry *instance = find_instance(handle);
    PFN_vkDestroyInstance next = instance ? instance->next_destroy : NULL;
    if (instance) atomic_store(&instance->key, NULL);
    pthread_mutex_unlock(&table_lock);
    perfhud_flush();
    if (next) next(handle, allocator);
}

static VkResult layer_CreateDevice(VkPhysicalDevice physical, const void *info, const void *allocator, VkDevice *out) {
    struct VkLayerDeviceCreateInfo *link = (struct VkLayerDeviceCreateInfo *)((const struct base_structure *)info)->pNext;
    while (link && !(link->sType == VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO && link->function == VK_LAYER_LINK_INFO))
        link = (struct VkLayerDeviceCreateInfo *)link->pNext;
    if (!link || !link->u.pLayerInfo) return VK_ERROR_INITIALIZATION_FAILED;
    PFN_vkGetInstanceProcAddr next_gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    PFN_vkGetDeviceProcAddr next_gdpa = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    struct instance_entry *instance = find_instance(physical); /* a physical device shares its instance's key */
    PFN_vkCreateDevice next_create = (PFN_vkCreateDevice)next_gipa(instance ? instance->handle : NULL, "vkCreateDevice");
    if (!next_create) return VK_ERROR_INITIALIZATION_FAILED;
    VkResult result = next_create(physical, info, allocator, out);
    if (result != VK_SUCCESS) return result;
    pthread_mutex_lock(&table_lock);
    for (int i = 0; i < MAX_DEVICES; i++) {
        if (atomic_load(&devices[i].key)) continue;
        devices[i].next_gdpa = next_gdpa;
        devices[i].next_destroy = (PFN_vkDestroyDevice)next_gdpa(*out, "vkDestroyDevice");
        devices[i].next_present = (PFN_vkQueuePresentKHR)next_gdpa(*out, "vkQueuePresentKHR");
        devices[i].next_destroy_swapchain = (PFN_vkDestroySwapchainKHR)next_gdpa(*out, "vkDestroySwapchainKHR");
        atomic_store_explicit(&devices[i].key, dispatch_key(*out), memory_order_release);
        break;
    }
    pthread_mutex_unlock(&table_lock);
    return VK_SUCCESS;
}

static void layer_DestroyDevice(VkDevice handle, const void *allocator) {
    if (!handle) return;
    pthread_mutex_lock(&table_lock);
    struct device_entry *device = find_device(handle);
    PFN_vkDestroyDevice next = device ? device->next_destroy : NULL;
    if (device) atomic_store(&device->key, NULL);
    pthread_mutex_unlock(&table_lock);
    perfhud_flush();
    if (next) next(handle, allocator);
}

static PFN_vkVoidFunction layer_GetDeviceProcAddr(VkDevice handle, const char *name);

/* The device-level functions this layer intercepts (also answered by GetInstanceProcAddr, which
 * may be asked for device functions). */
static PFN_vkVoidFunction device_function(const char *name) {
    if (!strcmp(name, "vkGetDeviceProcAddr")) return (PFN_vkVoidFunction)layer_GetDeviceProcAddr;
    if (!strcmp(name, "vkDestroyDevice")) return (PFN_vkVoidFunction)layer_DestroyDevice;
    if (!strcmp(name, "vkQueuePresentKHR")) return (PFN_vkVoidFunction)layer_QueuePresentKHR;
    if (!strcmp(name, "vkDestroySwapchainKHR")) return (PFN_vkVoidFunction)layer_DestroySwapchainKHR;
    return NULL;
}

static PFN_vkVoidFunction layer_GetDeviceProcAddr(VkDevice handle, const char *name) {
    struct device_entry *device = handle ? find_device(handle) : NULL;
    PFN_vkVoidFunction next = device ? device->next_gdpa(handle, name) : NULL;
    PFN_vkVoidFunction ours = device_function(name);
    /* Ours only where the next layer/driver has the function (an extension not enabled: NULL). */
    return ours && (next || !strcmp(name, "vkGetDeviceProcAddr")) ? ours : next;
}

static PFN_vkVoidFunction layer_GetInstanceProcAddr(VkInstance handle, const char *name) {
    if (!strcmp(name, "vkGetInstanceProcAddr")) return (PFN_vkVoidFunction)layer_GetInstanceProcAddr;
    if (!strcmp(name, "vkCreateInstance")) return (PFN_vkVoidFunction)layer_CreateInstance;
    if (!strcmp(name, "vkDestroyInstance")) return (PFN_vkVoidFunction)layer_DestroyInstance;
    if (!strcmp(name, "vkCreateDevice")) return (PFN_vkVoidFunction)layer_CreateDevice;
    if (!handle) return NULL;
    struct instance_entry *instance = find_instance(handle);
    PFN_vkVoidFunction next = instance ? instance->next_gipa(handle, name) : NULL;
    PFN_vkVoidFunction ours = device_function(name);
    return ours && next ? ours : next;
}

/* The loader's entry point (loader-layer interface 2, loader 1.1.x and later, Debian 12's 1.3.239
 * included); named in the manifest's "functions". */
EXPORT VkResult perfhud_vkNegotiateLoaderLayerInterfaceVersion(struct VkNegotiateLayerInterface *interface) {
    if (!interface || interface->sType != LAYER_NEGOTIATE_INTERFACE_STRUCT || interface->loaderLayerInterfaceVersion < 2)
        return VK_ERROR_INITIALIZATION_FAILED;
    interface->loaderLayerInterfaceVersion = 2;
    interface->pfnGetInstanceProcAddr = layer_GetInstanceProcAddr;
    interface->pfnGetDeviceProcAddr = layer_GetDeviceProcAddr;
    interface->pfnGetPhysicalDeviceProcAddr = NULL;
    return VK_SUCCESS;
}
