/*
 * A fake NVML (libnvidia-ml) for the sampler's tests: CI has no GPU. Built as a loadable
 * module (tests/CMakeLists.txt: fake_nvml.so); tests point EB_NVML_LIB or
 * eb_sampler_config.nvml_lib at it. It exports the NVML functions edgebench resolves, with
 * NVML's documented signatures, and is stateless: every call reads its behaviour from the
 * environment, so nothing is shared between threads.
 *
 *   FAKE_NVML_FAIL_INIT=1   nvmlInit_v2 returns NVML_ERROR_DRIVER_NOT_LOADED
 *   FAKE_NVML_GPUS=N        number of devices, 0..2 (default 1)
 *   FAKE_NVML_POWER_MW=P    power of device 0 in mW (default 50000); device i draws P + 1000 i
 *   FAKE_NVML_THROTTLE=M    clocks-event reasons bitmask (strtoull base 0, default 0)
 *   FAKE_NVML_FAIL_TEMP=1   nvmlDeviceGetTemperature returns NVML_ERROR_NOT_SUPPORTED
 *
 * Fixed readings of device i: name "Fake GPU i", utilisation 75 % (memory 30 %), 16 GiB total
 * with 4 GiB used, 65 degC, SM clock 1800 MHz, memory clock 9501 MHz.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NVML_SUCCESS                 0
#define NVML_ERROR_INVALID_ARGUMENT  2
#define NVML_ERROR_NOT_SUPPORTED     3
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_DRIVER_NOT_LOADED 9
#define NVML_TEMPERATURE_GPU         0
#define NVML_CLOCK_SM                1
#define NVML_CLOCK_MEM               2

/* A device handle is (index + 1) carried in the pointer; the struct is never defined. */
struct nvmlDevice_st;

struct fake_utilization {
    unsigned int gpu, memory;
};
struct fake_memory {
    unsigned long long total, free, used;
};

/* NVML's exported names (no eb_ prefix: they must match libnvidia-ml's). */
int nvmlInit_v2(void);
int nvmlShutdown(void);
const char *nvmlErrorString(int result);
int nvmlDeviceGetCount_v2(unsigned int *count);
int nvmlDeviceGetHandleByIndex_v2(unsigned int index, struct nvmlDevice_st **device);
int nvmlDeviceGetName(struct nvmlDevice_st *device, char *name, unsigned int length);
int nvmlDeviceGetUtilizationRates(struct nvmlDevice_st *device, struct fake_utilization *util);
int nvmlDeviceGetMemoryInfo(struct nvmlDevice_st *device, struct fake_memory *mem);
int nvmlDeviceGetPowerUsage(struct nvmlDevice_st *device, unsigned int *power);
int nvmlDeviceGetTemperature(struct nvmlDevice_st *device, int sensor, unsigned int *temp);
int nvmlDeviceGetClockInfo(struct nvmlDevice_st *device, int type, unsigned int *clock);
int nvmlDeviceGetCurrentClocksEventReasons(struct nvmlDevice_st *device,
                                           unsigned long long *reasons);
int nvmlDeviceGetCurrentClocksThrottleReasons(struct nvmlDevice_st *device,
                                              unsigned long long *reasons);

static unsigned long long env_u64(const char *name, unsigned long long dflt)
{
    const char *v = getenv(name);
    if (v == NULL || v[0] == '\0')
        return dflt;
    char *end = NULL;
    unsigned long long x = strtoull(v, &end, 0);
    return end != NULL && *end == '\0' ? x : dflt;
}

static unsigned int n_devices(void)
{
    unsigned long long n = env_u64("FAKE_NVML_GPUS", 1);
    return n > 2 ? 2 : (unsigned int)n;
}

/* Index of a handle, or -1 when it is not one of ours. */
static int index_of(const struct nvmlDevice_st *device)
{
    uintptr_t v = (uintptr_t)device;
    return v >= 1 && v <= n_devices() ? (int)(v - 1) : -1;
}

int nvmlInit_v2(void)
{
    return env_u64("FAKE_NVML_FAIL_INIT", 0) ? NVML_ERROR_DRIVER_NOT_LOADED : NVML_SUCCESS;
}

int nvmlShutdown(void)
{
    return NVML_SUCCESS;
}

const char *nvmlErrorString(int result)
{
    switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    default: return "Unknown Error";
    }
}

int nvmlDeviceGetCount_v2(unsigned int *count)
{
    if (count == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *count = n_devices();
    return NVML_SUCCESS;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, struct nvmlDevice_st **device)
{
    if (device == NULL || index >= n_devices())
        return NVML_ERROR_INVALID_ARGUMENT;
    *device = (struct nvmlDevice_st *)(uintptr_t)(index + 1);
    return NVML_SUCCESS;
}

int nvmlDeviceGetName(struct nvmlDevice_st *device, char *name, unsigned int length)
{
    int i = index_of(device);
    if (i < 0 || name == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    static const char *const names[] = {"Fake GPU 0", "Fake GPU 1"};
    size_t n = strlen(names[i]);
    if (length <= n)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(name, names[i], n + 1);
    return NVML_SUCCESS;
}

int nvmlDeviceGetUtilizationRates(struct nvmlDevice_st *device, struct fake_utilization *util)
{
    if (index_of(device) < 0 || util == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    util->gpu = 75;
    util->memory = 30;
    return NVML_SUCCESS;
}

int nvmlDeviceGetMemoryInfo(struct nvmlDevice_st *device, struct fake_memory *mem)
{
    if (index_of(device) < 0 || mem == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    mem->total = 16ull << 30;
    mem->used = 4ull << 30;
    mem->free = mem->total - mem->used;
    return NVML_SUCCESS;
}

int nvmlDeviceGetPowerUsage(struct nvmlDevice_st *device, unsigned int *power)
{
    int i = index_of(device);
    if (i < 0 || power == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *power = (unsigned int)(env_u64("FAKE_NVML_POWER_MW", 50000) + 1000ull * (unsigned)i);
    return NVML_SUCCESS;
}

int nvmlDeviceGetTemperature(struct nvmlDevice_st *device, int sensor, unsigned int *temp)
{
    if (index_of(device) < 0 || temp == NULL || sensor != NVML_TEMPERATURE_GPU)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (env_u64("FAKE_NVML_FAIL_TEMP", 0))
        return NVML_ERROR_NOT_SUPPORTED;
    *temp = 65;
    return NVML_SUCCESS;
}

int nvmlDeviceGetClockInfo(struct nvmlDevice_st *device, int type, unsigned int *clock)
{
    if (index_of(device) < 0 || clock == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (type == NVML_CLOCK_SM)
        *clock = 1800;
    else if (type == NVML_CLOCK_MEM)
        *clock = 9501;
    else
        return NVML_ERROR_NOT_SUPPORTED;
    return NVML_SUCCESS;
}

int nvmlDeviceGetCurrentClocksEventReasons(struct nvmlDevice_st *device,
                                           unsigned long long *reasons)
{
    if (index_of(device) < 0 || reasons == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *reasons = env_u64("FAKE_NVML_THROTTLE", 0);
    return NVML_SUCCESS;
}

int nvmlDeviceGetCurrentClocksThrottleReasons(struct nvmlDevice_st *device,
                                              unsigned long long *reasons)
{
    return nvmlDeviceGetCurrentClocksEventReasons(device, reasons);
}
