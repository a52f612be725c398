/*
 * NVTX ranges for the Nsight tools (Nsight Systems timelines, Nsight Compute's --nvtx filters).
 *
 *     struct eb_nvtx nv;
 *     eb_nvtx_init(&nv, EB_NVTX_DOMAIN_OP);
 *     eb_nvtx_push(&nv, "Conv:.model.0.conv.Conv");
 *     ...                                  (kernels launched here belong to the range)
 *     eb_nvtx_pop(&nv);
 *
 * Built with the CUDA toolkit's header-only nvtx3 when CMake finds it (src/core/nvtx.c, which
 * needs libdl), whether or not the CUDA device is built; elsewhere every function here does
 * nothing. With no tool attached a push or pop is one call through a function pointer that
 * returns at once, so the ranges are always on. NVTX itself keeps one process-wide table of
 * function pointers (filled by the tool it loads through NVTX_INJECTION64_PATH); that table is
 * the library's, not edgebench's state.
 *
 * Two domains, so that a range's push/pop stack holds only its own kind: per-op ranges
 * "<op>:<node>" (EB_NVTX_DOMAIN_OP, pushed by the native engine around every node of a
 * profiled run) and per-stage ranges "<slot>:<stage>" (EB_NVTX_DOMAIN_STAGE, pushed by the slot
 * pipeline around read, pre, infer and post). Nsight Compute selects a node's kernels with
 * `--nvtx --nvtx-include "edgebench@Conv:.model.0.conv.Conv/"` (domain@range, the trailing "/"
 * marks a push/pop range).
 */
#ifndef EB_NVTX_H
#define EB_NVTX_H

#include <stddef.h>

/** Domain of the per-op ranges (engine). */
#define EB_NVTX_DOMAIN_OP "edgebench"
/** Domain of the per-stage ranges (slot pipeline). */
#define EB_NVTX_DOMAIN_STAGE "edgebench.stage"
/** Bytes of a node name kept in a range name (the per-op profile of report.json keeps as many). */
#define EB_NVTX_NODE_CHARS 127
/** Buffer size that holds any name from eb_nvtx_range_name ("<op>:<node>" and the NUL). */
#define EB_NVTX_NAME_MAX 192

/**
 * A domain handle, held by whoever pushes ranges into it (an engine, a slot). Domains are never
 * destroyed: the tool may hand every holder of one name the same handle, and one holder going
 * away must not end the others' domain.
 */
struct eb_nvtx {
    void *domain; /* nvtxDomainHandle_t; NULL without NVTX or without a tool */
};

/** 1 when this build emits NVTX ranges (the toolkit's nvtx3 headers were found), else 0. */
int eb_nvtx_available(void);

/** Registers `domain` (a string that outlives the process's NVTX use, e.g. a literal). */
void eb_nvtx_init(struct eb_nvtx *nv, const char *domain);

/**
 * Opens a push/pop range named `name` on the calling thread (the tool copies the name).
 * Must be closed by eb_nvtx_pop on the same thread and handle.
 */
void eb_nvtx_push(const struct eb_nvtx *nv, const char *name);

/** Closes the calling thread's innermost range of this domain. */
void eb_nvtx_pop(const struct eb_nvtx *nv);

/**
 * The per-op range name of a node into `buf` (`size` >= EB_NVTX_NAME_MAX keeps every name
 * whole): "<op>:<node>", the node name cut at EB_NVTX_NODE_CHARS bytes and every character
 * that Nsight Compute's NVTX filter syntax reserves ('/', '@', '\', '*', '[', ']') replaced by
 * '.', so that "domain@range/" matches it literally ("/model.0/conv/Conv" becomes
 * ".model.0.conv.Conv"). `node` may be NULL or "" (unnamed). Returns the name's length.
 */
size_t eb_nvtx_range_name(const char *op, const char *node, char *buf, size_t size);

#endif
