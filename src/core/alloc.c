#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eb/alloc.h"

static void *system_alloc(void *ctx, size_t size, size_t align)
{
    (void)ctx;
    if (size == 0)
        size = 1;
    if (align < sizeof(void *))
        align = sizeof(void *);
    void *p = NULL;
    if (posix_memalign(&p, align, size) != 0)
        return NULL;
    return p;
}

static void system_free(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

struct eb_allocator eb_allocator_system(void)
{
    struct eb_allocator a = {.ctx = NULL, .alloc = system_alloc, .free = system_free};
    return a;
}

void *eb_alloc(const struct eb_allocator *a, size_t size)
{
    return a->alloc(a->ctx, size, 16);
}

void *eb_calloc(const struct eb_allocator *a, size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size)
        return NULL;
    void *p = a->alloc(a->ctx, n * size, 16);
    if (p != NULL)
        memset(p, 0, n * size);
    return p;
}

void eb_free(const struct eb_allocator *a, void *p)
{
    if (p != NULL)
        a->free(a->ctx, p);
}

char *eb_strdup(const struct eb_allocator *a, const char *s)
{
    if (s == NULL)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = eb_alloc(a, n);
    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

/* The counting allocator stores the block size in a header in front of each block, so that
 * free can account for it; the header is padded to the requested alignment. */
struct count_header {
    size_t size;
    size_t offset;
};

static void *counting_alloc(void *ctx, size_t size, size_t align)
{
    struct eb_counting_alloc *ca = ctx;
    ca->n_allocs++;
    if (ca->fail_at != 0 && ca->n_allocs == ca->fail_at)
        return NULL;
    if (ca->cap_bytes != 0 && (size > ca->cap_bytes || ca->live_bytes > ca->cap_bytes - size))
        return NULL;
    if (align < sizeof(struct count_header))
        align = sizeof(struct count_header);
    if (size > SIZE_MAX - align)
        return NULL;
    unsigned char *base = ca->parent.alloc(ca->parent.ctx, size + align, align);
    if (base == NULL)
        return NULL;
    unsigned char *user = base + align;
    struct count_header h = {.size = size, .offset = align};
    memcpy(user - sizeof(h), &h, sizeof(h));
    ca->live_bytes += size;
    if (ca->live_bytes > ca->peak_bytes)
        ca->peak_bytes = ca->live_bytes;
    return user;
}

static void counting_free(void *ctx, void *p)
{
    struct eb_counting_alloc *ca = ctx;
    if (p == NULL)
        return;
    unsigned char *user = p;
    struct count_header h;
    memcpy(&h, user - sizeof(h), sizeof(h));
    ca->live_bytes -= h.size;
    ca->parent.free(ca->parent.ctx, user - h.offset);
}

void eb_counting_alloc_init(struct eb_counting_alloc *ca, struct eb_allocator parent,
                            size_t cap_bytes)
{
    memset(ca, 0, sizeof(*ca));
    ca->parent = parent;
    ca->cap_bytes = cap_bytes;
}

struct eb_allocator eb_counting_alloc_iface(struct eb_counting_alloc *ca)
{
    struct eb_allocator a = {.ctx = ca, .alloc = counting_alloc, .free = counting_free};
    return a;
}
