/*
 * `profile --nsys`: reading Nsight Systems' kernel summary (`nsys stats --report
 * cuda_gpu_kern_sum --format csv`) into the top-kernels table (struct eb_kernel_stat).
 */
#ifndef EB_NSYS_H
#define EB_NSYS_H

#include <stddef.h>

#include "eb/diag.h"
#include "harness/results/result.h"

/** The NVTX range around a slot's measured pass ("rgb:measure", domain edgebench.stage) that
 *  gates nsys's capture (--capture-range=nvtx). */
#define EB_NSYS_MEASURE_RANGE_SUFFIX ":measure"

/**
 * Parses the CSV text (`len` bytes; lines before its header, such as nsys's "Processing ..."
 * notes, are skipped) with columns "Total Time (ns)", "Instances" and "Name" in any order
 * (names may be quoted, "" an escaped quote) into the top `max_top` kernels by total time in
 * `top` (*n_top_out; shares of all rows' time). EB_ERR_FORMAT naming the line when the header
 * or a row is malformed; a header with no rows gives 0 kernels.
 */
EB_NODISCARD enum eb_status eb_nsys_kern_sum_parse(const char *text, size_t len,
                                                   struct eb_kernel_stat *top, size_t max_top,
                                                   size_t *n_top_out, struct eb_diag *diag);

#endif
