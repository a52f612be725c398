/*
 * GPU kernel activity through CUPTI's activity API, loaded at run time with dlopen (no CUPTI
 * header or library at build time; the record layout we read is declared in cupti.c against
 * the CUPTI versions it was checked with).
 *
 *     struct eb_cupti *c = NULL;
 *     if (eb_cupti_start(NULL, &c, &diag) != EB_OK)   (one line: why; the run goes on)
 *         ...
 *     ... CUDA work ...
 *     (void)eb_cupti_stop(c, &diag);                  (flushes: every kernel so far)
 *     for (size_t i = 0; i < c->n_kernels; i++) ... c->kernels[i] ...
 *     eb_cupti_destroy(c);
 *
 * CUPTI's buffer callbacks carry no user pointer and CUPTI takes one activity client per
 * process, so the collector started here is the process's one (a second start is refused
 * while it runs): the only process-wide state outside src/app/main.c, by CUPTI's design.
 */
#ifndef EB_CUPTI_H
#define EB_CUPTI_H

#include <stddef.h>
#include <stdint.h>

#include "eb/diag.h"
#include "eb/thread.h"

/* Kernel records kept (about 32 bytes each); past it kernels are counted in `dropped`. */
#define EB_CUPTI_MAX_KERNELS 4000000u

/** One kernel execution, its times on CLOCK_MONOTONIC (eb_clock_ns) in nanoseconds. */
struct eb_cupti_kernel {
    uint64_t start_ns, end_ns;
    uint32_t device, stream; /* CUDA device ordinal, CUPTI's stream id */
    uint32_t name;           /* index into eb_cupti.names */
};

struct eb_cupti {
    struct eb_cupti_kernel *kernels; /* owned; valid after eb_cupti_stop */
    size_t n_kernels, cap_kernels;
    char **names;           /* owned copies of the kernels' names (mangled, as CUPTI gives them) */
    const void **name_keys; /* CUPTI's name pointers the copies were made from */
    size_t n_names, cap_names;
    uint64_t dropped;   /* kernels past EB_CUPTI_MAX_KERNELS or lost to a failed allocation */
    uint32_t version;   /* cuptiGetVersion */
    char library[512];  /* the path dlopen loaded */
    int64_t offset_ns;  /* CUPTI timestamp minus CLOCK_MONOTONIC */
    void *handle;       /* dlopen handle */
    void *fn[9];        /* the CUPTI entry points (cupti.c) */
    struct eb_mutex mu; /* CUPTI may complete buffers on its own thread */
    int running;
};

/**
 * Loads CUPTI and starts recording every kernel (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).
 * `paths` lists the libraries to try (NULL-terminated; NULL = the usual places: the sonames
 * through the loader's search, LD_LIBRARY_PATH included, then beside a loaded libcudart, then
 * $CUDA_HOME, $CUDA_PATH and /usr/local/cuda, each under extras/CUPTI/lib64, lib64 and lib).
 * Returns a new collector in *c_out (caller owns it: eb_cupti_destroy); EB_ERR_UNSUPPORTED with
 * one line when no CUPTI library loads, its version is one whose kernel record we have not
 * checked, or CUPTI refuses (no GPU, another client), and also when a collector already runs
 * in this process.
 */
EB_NODISCARD enum eb_status eb_cupti_start(const char *const *paths, struct eb_cupti **c_out,
                                           struct eb_diag *diag);

/** Flushes every pending record into c->kernels and stops recording; NULL is a no-op. */
EB_NODISCARD enum eb_status eb_cupti_stop(struct eb_cupti *c, struct eb_diag *diag);

/** Stops (when running), unloads and frees; accepts NULL. */
void eb_cupti_destroy(struct eb_cupti *c);

#endif
