/*
 * CUPTI's activity API through dlopen (cupti.h). The CUPTI declarations used here are our own:
 * the entry points' signatures (CUPTIAPI is empty off Windows) and the fields of the kernel
 * activity record that have kept their offsets from CUpti_ActivityKernel4 (CUPTI 10, CUDA 9)
 * to CUpti_ActivityKernel10 (CUPTI 130001, CUDA 13.0), checked with offsetof against those
 * headers: kind 0, start 16, end 24, deviceId 40, streamId 48, name 104. A CUPTI whose version
 * is outside the checked ranges is refused rather than misread.
 */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb/clock.h"
#include "harness/metrics/cupti.h"

/* ---- our declarations of CUPTI's ABI ---- */

enum {
    CUPTI_SUCCESS = 0,
    CUPTI_ACTIVITY_KIND_KERNEL = 3,
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL = 10,
    CUPTI_ACTIVITY_FLAG_FLUSH_FORCED = 1,
};
/* Offsets in a CUpti_ActivityKernel4..10 record (packed, 8-byte aligned). */
enum {
    REC_KIND = 0,
    REC_START = 16,
    REC_END = 24,
    REC_DEVICE = 40,
    REC_STREAM = 48,
    REC_NAME = 104,
    REC_MIN_SIZE = 112,
};
/* CUPTI API versions whose kernel record was checked: CUDA 9.0 .. 12.x, and 13.0. */
#define CUPTI_OLDEST     10u
#define CUPTI_NEWEST_12  30u
#define CUPTI_13_0_FIRST 130000u
#define CUPTI_13_0_LAST  130999u

typedef void (*buf_request_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*buf_complete_fn)(void *ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                size_t valid);
typedef int (*get_version_fn)(uint32_t *version);
typedef int (*result_string_fn)(int result, const char **str);
typedef int (*register_fn)(buf_request_fn req, buf_complete_fn done);
typedef int (*kind_fn)(int kind);
typedef int (*flush_fn)(uint32_t flag);
typedef int (*next_record_fn)(uint8_t *buffer, size_t valid, void **record);
typedef int (*timestamp_fn)(uint64_t *ts);

enum { FN_VERSION, FN_RESULT, FN_REGISTER, FN_ENABLE, FN_DISABLE, FN_FLUSH, FN_NEXT, FN_TS, FN_N };
static const char *const fn_names[FN_N] = {"cuptiGetVersion",
                                           "cuptiGetResultString",
                                           "cuptiActivityRegisterCallbacks",
                                           "cuptiActivityEnable",
                                           "cuptiActivityDisable",
                                           "cuptiActivityFlushAll",
                                           "cuptiActivityGetNextRecord",
                                           "cuptiGetTimestamp"};

#define BUFFER_BYTES ((size_t)4 << 20)

/* The running collector (cupti.h says why it is process-wide). */
static _Atomic(struct eb_cupti *) active;

/* ---- records ---- */

static uint32_t intern(struct eb_cupti *c, const char *name)
{
    for (size_t i = c->n_names; i-- > 0;)
        if (c->name_keys[i] == name)
            return (uint32_t)i;
    if (c->n_names == c->cap_names) {
        size_t cap = c->cap_names ? c->cap_names * 2 : 64;
        char **nn = realloc(c->names, cap * sizeof(*nn));
        if (nn != NULL)
            c->names = nn;
        const void **nk = nn ? realloc(c->name_keys, cap * sizeof(*nk)) : NULL;
        if (nk == NULL)
            return UINT32_MAX;
        c->name_keys = nk;
        c->cap_names = cap;
    }
    char *copy = strdup(name != NULL ? name : "(unnamed)");
    if (copy == NULL)
        return UINT32_MAX;
    c->names[c->n_names] = copy;
    c->name_keys[c->n_names] = name;
    return (uint32_t)c->n_names++;
}

static void add_kernel(struct eb_cupti *c, const uint8_t *rec)
{
    uint64_t start, end;
    uint32_t device, stream;
    const char *name;
    memcpy(&start, rec + REC_START, sizeof(start));
    memcpy(&end, rec + REC_END, sizeof(end));
    memcpy(&device, rec + REC_DEVICE, sizeof(device));
    memcpy(&stream, rec + REC_STREAM, sizeof(stream));
    memcpy(&name, rec + REC_NAME, sizeof(name));
    if (c->n_kernels == c->cap_kernels) {
        size_t cap = c->cap_kernels ? c->cap_kernels * 2 : 4096;
        if (cap > EB_CUPTI_MAX_KERNELS)
            cap = EB_CUPTI_MAX_KERNELS;
        struct eb_cupti_kernel *nk =
            cap > c->cap_kernels ? realloc(c->kernels, cap * sizeof(*nk)) : NULL;
        if (nk == NULL) {
            c->dropped++;
            return;
        }
        c->kernels = nk;
        c->cap_kernels = cap;
    }
    const uint32_t idx = intern(c, name);
    if (idx == UINT32_MAX) {
        c->dropped++;
        return;
    }
    struct eb_cupti_kernel *k = &c->kernels[c->n_kernels++];
    k->start_ns = (uint64_t)((int64_t)start - c->offset_ns);
    k->end_ns = (uint64_t)((int64_t)end - c->offset_ns);
    k->device = device;
    k->stream = stream;
    k->name = idx;
}

static void buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, BUFFER_BYTES);
    *size = *buffer != NULL ? BUFFER_BYTES : 0;
    *max_records = 0;
}

static void buffer_completed(void *ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    (void)ctx;
    (void)stream;
    (void)size;
    struct eb_cupti *c = atomic_load(&active);
    if (c != NULL && buffer != NULL) {
        const next_record_fn next = (next_record_fn)(uintptr_t)c->fn[FN_NEXT];
        eb_mutex_lock(&c->mu);
        void *rec = NULL;
        while (next(buffer, valid, &rec) == CUPTI_SUCCESS) {
            uint32_t kind;
            memcpy(&kind, rec, sizeof(kind));
            if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || kind == CUPTI_ACTIVITY_KIND_KERNEL)
                add_kernel(c, rec);
        }
        eb_mutex_unlock(&c->mu);
    }
    free(buffer);
}

/* ---- loading ---- */

/* The folder of a loaded libcudart (dl_iterate_phdr), for CUPTI beside it. */
struct cudart_dir {
    char dir[400];
};

static int find_cudart(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct cudart_dir *cd = data;
    const char *slash = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    if (slash == NULL || strncmp(slash + 1, "libcudart.so", 12) != 0)
        return 0;
    snprintf(cd->dir, sizeof(cd->dir), "%.*s", (int)(slash - info->dlpi_name), info->dlpi_name);
    return 1;
}

static void *try_dir(const char *dir, const char *sub, char *out, size_t size)
{
    static const char *const names[] = {"libcupti.so", "libcupti.so.13", "libcupti.so.12",
                                        "libcupti.so.11"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(out, size, "%s%s%s%s", dir, dir[0] ? "/" : "", sub[0] ? sub : "", names[i]);
        void *h = dlopen(out, RTLD_NOW | RTLD_LOCAL);
        if (h != NULL)
            return h;
    }
    return NULL;
}

/* The first CUPTI that loads from the usual places (cupti.h), its path into out. */
static void *load_default(char *out, size_t size)
{
    void *h = try_dir("", "", out, size); /* the loader's search: LD_LIBRARY_PATH, ld.so.cache */
    if (h != NULL)
        return h;
    static const char *const subs[] = {"../extras/CUPTI/lib64/", "", "extras/CUPTI/lib64/",
                                       "lib64/", "lib/"};
    struct cudart_dir cd = {""};
    dl_iterate_phdr(find_cudart, &cd);
    if (cd.dir[0] != '\0')
        for (size_t i = 0; i < 2 && h == NULL; i++)
            h = try_dir(cd.dir, subs[i], out, size);
    const char *roots[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
    for (size_t r = 0; r < 3 && h == NULL; r++)
        if (roots[r] != NULL && roots[r][0] != '\0')
            for (size_t i = 2; i < 5 && h == NULL; i++)
                h = try_dir(roots[r], subs[i], out, size);
    return h;
}

static enum eb_status cupti_fail(struct eb_cupti *c, const char *call, int rc, struct eb_diag *diag)
{
    const char *why = NULL;
    if (((result_string_fn)(uintptr_t)c->fn[FN_RESULT])(rc, &why) != CUPTI_SUCCESS || !why)
        why = "unknown error";
    return eb_diag_fail(diag, EB_ERR_UNSUPPORTED, "CUPTI %s (%s) failed: %s (error %d)", call,
                        c->library, why, rc);
}

enum eb_status eb_cupti_start(const char *const *paths, struct eb_cupti **c_out,
                              struct eb_diag *diag)
{
    struct eb_cupti *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory for the CUPTI collector");
    eb_mutex_init(&c->mu);
    enum eb_status st = EB_ERR_UNSUPPORTED;
    if (paths == NULL)
        c->handle = load_default(c->library, sizeof(c->library));
    else
        for (size_t i = 0; paths[i] != NULL && c->handle == NULL; i++) {
            snprintf(c->library, sizeof(c->library), "%s", paths[i]);
            c->handle = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
        }
    if (c->handle == NULL) {
        st = eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                          "CUPTI (libcupti.so) not found: install the CUDA toolkit's CUPTI "
                          "(extras/CUPTI/lib64) or put its folder on LD_LIBRARY_PATH");
        goto fail;
    }
    for (int i = 0; i < FN_N; i++) {
        c->fn[i] = dlsym(c->handle, fn_names[i]);
        if (c->fn[i] == NULL) {
            st = eb_diag_fail(diag, EB_ERR_UNSUPPORTED, "%s lacks %s: not a CUPTI library",
                              c->library, fn_names[i]);
            goto fail;
        }
    }
    int rc = ((get_version_fn)(uintptr_t)c->fn[FN_VERSION])(&c->version);
    if (rc != CUPTI_SUCCESS) {
        st = cupti_fail(c, "cuptiGetVersion", rc, diag);
        goto fail;
    }
    if (c->version < CUPTI_OLDEST ||
        (c->version > CUPTI_NEWEST_12 && c->version < CUPTI_13_0_FIRST) ||
        c->version > CUPTI_13_0_LAST) {
        st = eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                          "%s has CUPTI API version %u, whose kernel record layout edgebench has "
                          "not checked (known: %u..%u, %u..%u); not read",
                          c->library, c->version, CUPTI_OLDEST, CUPTI_NEWEST_12, CUPTI_13_0_FIRST,
                          CUPTI_13_0_LAST);
        goto fail;
    }
    struct eb_cupti *none = NULL;
    if (!atomic_compare_exchange_strong(&active, &none, c)) {
        st = eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                          "a CUPTI collector already runs in this process");
        goto fail;
    }
    c->running = 1;
    /* The clocks' offset: a CUPTI timestamp between two monotonic readings. */
    uint64_t ts = 0;
    const uint64_t m0 = eb_clock_ns();
    rc = ((timestamp_fn)(uintptr_t)c->fn[FN_TS])(&ts);
    const uint64_t m1 = eb_clock_ns();
    if (rc != CUPTI_SUCCESS) {
        st = cupti_fail(c, "cuptiGetTimestamp", rc, diag);
        goto fail;
    }
    c->offset_ns = (int64_t)ts - (int64_t)(m0 + (m1 - m0) / 2);
    rc = ((register_fn)(uintptr_t)c->fn[FN_REGISTER])(buffer_requested, buffer_completed);
    if (rc != CUPTI_SUCCESS) {
        st = cupti_fail(c, "cuptiActivityRegisterCallbacks", rc, diag);
        goto fail;
    }
    rc = ((kind_fn)(uintptr_t)c->fn[FN_ENABLE])(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (rc != CUPTI_SUCCESS) {
        st = cupti_fail(c, "cuptiActivityEnable(CONCURRENT_KERNEL)", rc, diag);
        goto fail;
    }
    *c_out = c;
    return EB_OK;
fail:
    eb_cupti_destroy(c);
    return st;
}

enum eb_status eb_cupti_stop(struct eb_cupti *c, struct eb_diag *diag)
{
    if (c == NULL || !c->running)
        return EB_OK;
    ((kind_fn)(uintptr_t)c->fn[FN_DISABLE])(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    const int rc = ((flush_fn)(uintptr_t)c->fn[FN_FLUSH])(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    c->running = 0;
    struct eb_cupti *self = c;
    atomic_compare_exchange_strong(&active, &self, NULL);
    if (rc != CUPTI_SUCCESS)
        return cupti_fail(c, "cuptiActivityFlushAll", rc, diag);
    return EB_OK;
}

void eb_cupti_destroy(struct eb_cupti *c)
{
    if (c == NULL)
        return;
    if (c->running) {
        struct eb_diag d = {0};
        const enum eb_status st = eb_cupti_stop(c, &d); /* destroyed all the same */
        (void)st;
    }
    struct eb_cupti *self = c;
    atomic_compare_exchange_strong(&active, &self, NULL);
    /* CUPTI stays loaded: its threads and callbacks may outlive a dlclose. */
    for (size_t i = 0; i < c->n_names; i++)
        free(c->names[i]);
    free(c->names);
    free(c->name_keys);
    free(c->kernels);
    eb_mutex_fini(&c->mu);
    free(c);
}
