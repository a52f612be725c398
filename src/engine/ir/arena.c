/* The graph arena: chunks from the graph's allocator, bump allocation, freed all at once. */
#include <string.h>

#include "engine/ir/graph.h"

#define CHUNK_MIN (64u * 1024u)

struct eb_ir_arena_chunk {
    struct eb_ir_arena_chunk *next;
    size_t used, size;
    /* payload follows, 16-byte aligned */
};

#define HDR ((sizeof(struct eb_ir_arena_chunk) + 15u) & ~(size_t)15u)

void eb_ir_arena_init(struct eb_ir_arena *a, const struct eb_allocator *alloc)
{
    a->alloc = alloc;
    a->head = NULL;
}

void *eb_ir_arena_alloc(struct eb_ir_arena *a, size_t size)
{
    size = (size + 15u) & ~(size_t)15u;
    struct eb_ir_arena_chunk *c = a->head;
    if (c == NULL || c->size - c->used < size) {
        size_t want = size > CHUNK_MIN ? size : CHUNK_MIN;
        if (want > SIZE_MAX - HDR)
            return NULL;
        c = a->alloc->alloc(a->alloc->ctx, HDR + want, 64);
        if (c == NULL)
            return NULL;
        c->next = a->head;
        c->used = 0;
        c->size = want;
        a->head = c;
    }
    void *p = (char *)c + HDR + c->used;
    c->used += size;
    memset(p, 0, size);
    return p;
}

char *eb_ir_arena_strdup(struct eb_ir_arena *a, const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = eb_ir_arena_alloc(a, n);
    if (p != NULL)
        memcpy(p, s, n);
    return p;
}

void eb_ir_arena_fini(struct eb_ir_arena *a)
{
    struct eb_ir_arena_chunk *c = a->head;
    while (c != NULL) {
        struct eb_ir_arena_chunk *next = c->next;
        a->alloc->free(a->alloc->ctx, c);
        c = next;
    }
    a->head = NULL;
}
