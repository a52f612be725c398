/*
 * Shared by the float kernel tests: a deterministic random source, buffers with GUARD canary
 * floats on both sides (payload 64-byte aligned, as the scratch contract requires), checked
 * after every kernel call, and the NCHW <-> NCHWc reordering.
 */
#ifndef EB_TESTS_KERNELS_GUARDED_H
#define EB_TESTS_KERNELS_GUARDED_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "eb_test.h"

#define GUARD 64
static const float CANARY = -12345.678f;

static inline float frand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (float)((*s >> 40) & 0xffffff) / (float)0x800000 - 1.0f; /* [-1, 1) */
}

/* A buffer of n floats with GUARD canaries either side; returns the payload. */
static inline float *guarded(size_t n)
{
    float *p = malloc((n + 2 * GUARD) * sizeof(float) + 64);
    ASSERT_TRUE(p != NULL);
    /* keep the payload 64-byte aligned (scratch contract) */
    uintptr_t u = ((uintptr_t)p + GUARD * sizeof(float) + 63) & ~(uintptr_t)63;
    float *payload = (float *)u;
    for (size_t i = 0; i < GUARD; i++)
        payload[-1 - (ptrdiff_t)i] = payload[n + i] = CANARY;
    ((void **)payload)[-GUARD / 2] = p; /* original pointer, inside the low guard */
    return payload;
}

static inline void check_guards(const float *payload, size_t n, const char *what)
{
    for (size_t i = 0; i < GUARD / 4; i++)
        if (payload[-1 - (ptrdiff_t)i] != CANARY || payload[n + i] != CANARY)
            EB_FAIL("%s: guard float %zu overwritten", what, i);
    for (size_t i = GUARD / 4; i < GUARD; i++)
        if (payload[n + i] != CANARY)
            EB_FAIL("%s: high guard float %zu overwritten", what, i);
}

/* NCHW [n][c][hw] <-> NCHWc [n][c/cb][hw][cb] (to_cl 1: into the blocked layout). */
static inline void reorder_nchwc(const float *src, int64_t n, int64_t c, int64_t hw, int64_t cb,
                                 int to_cl, float *dst)
{
    for (int64_t i = 0; i < n * c * hw; i++) {
        const int64_t img = i / (c * hw), ch = i / hw % c, q = i % hw;
        const int64_t j = ((img * (c / cb) + ch / cb) * hw + q) * cb + ch % cb;
        if (to_cl)
            dst[j] = src[i];
        else
            dst[i] = src[j];
    }
}

static inline void release(float *payload)
{
    if (payload != NULL)
        free(((void **)payload)[-GUARD / 2]);
}

#endif
