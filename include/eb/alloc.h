/*
 * Allocators passed explicitly (never a process-global one).
 *
 * `struct eb_allocator` is the interface; eb_allocator_system() wraps malloc/free;
 * `struct eb_counting_alloc` wraps another allocator, counts live and peak bytes, can cap them,
 * and can make its Nth allocation fail (for allocation-failure tests).
 *
 *     struct eb_counting_alloc ca;
 *     eb_counting_alloc_init(&ca, eb_allocator_system(), 0);
 *     struct eb_allocator a = eb_counting_alloc_iface(&ca);
 *     void *p = eb_alloc(&a, 64);  ...  eb_free(&a, p);
 */
#ifndef EB_ALLOC_H
#define EB_ALLOC_H

#include <stddef.h>
#include <stdint.h>

struct eb_allocator {
    void *ctx;
    /** Returns `size` bytes aligned to `align` (a power of two, >= sizeof(void*)) or NULL. */
    void *(*alloc)(void *ctx, size_t size, size_t align);
    /** Frees memory from `alloc`; accepts NULL. */
    void (*free)(void *ctx, void *p);
};

/** The malloc-based allocator (64-byte alignment available). Stateless; the value is a copy. */
struct eb_allocator eb_allocator_system(void);

/** Allocates `size` bytes (16-byte aligned) from `a`; NULL on failure. */
void *eb_alloc(const struct eb_allocator *a, size_t size);
/** Allocates zeroed `n * size` bytes; NULL on failure or overflow. */
void *eb_calloc(const struct eb_allocator *a, size_t n, size_t size);
/** Frees `p` (may be NULL). */
void eb_free(const struct eb_allocator *a, void *p);
/** Copies a NUL-terminated string into memory from `a`; NULL on failure or when `s` is NULL. */
char *eb_strdup(const struct eb_allocator *a, const char *s);

struct eb_counting_alloc {
    struct eb_allocator parent;
    size_t live_bytes;
    size_t peak_bytes;
    size_t cap_bytes;  /* 0 = no cap */
    uint64_t n_allocs; /* allocations attempted so far */
    uint64_t fail_at;  /* 1-based index of the allocation that fails; 0 = never */
};

/** Initialises a counting allocator over `parent` (copied). `cap_bytes` 0 means no cap. */
void eb_counting_alloc_init(struct eb_counting_alloc *ca, struct eb_allocator parent,
                            size_t cap_bytes);
/** The allocator interface of `ca`; `ca` must outlive every use of it. Not thread-safe. */
struct eb_allocator eb_counting_alloc_iface(struct eb_counting_alloc *ca);

#endif
