/*
 * Dense peak throughput and DRAM bandwidth of the GPUs edgebench knows, for the MFU (model FLOPs
 * utilisation) of a --profile run (achieved FLOP/s over the device's peak for the precision the
 * model ran in) and for bandwidth utilisation (bytes read per second over the peak bandwidth).
 * One const table (peaks.c), no state. A device that is not in the table has no peak: callers
 * say "unknown device: no peak in the table" and never invent a figure; the CPU has no entry.
 *
 * Matching (eb_peak_find): an entry's `match` must occur in the CUDA device name
 * (cudaDeviceProp.name) as a whole token (case-insensitive, not inside a longer word or number:
 * "H200" does not match "GH200", "L4" does not match "L40S"), and the device must meet the
 * entry's SM count and memory range where the entry sets them. Entries are listed most specific
 * first and the first match wins ("H100 PCIe" and "H100 NVL" before "H100"), except that among
 * matching entries with the same token (one device in several clock modes) the one whose clock
 * is nearest the device's clock wins.
 *
 * Jetson Orin: every Orin module reports the CUDA name "Orin". The module is told apart by its
 * SM count (Orin Nano 4GB: 4; Orin Nano 8GB, Orin NX 8GB and 16GB: 8; AGX Orin 32GB: 14; AGX
 * Orin 64GB: 16 — 128 CUDA cores and 4 tensor cores per SM), its total memory (the CUDA
 * figure is the module's DRAM as the kernel sees it: Orin NX 16GB is over 12 GB, the 8 GB
 * modules under), and the GPU clock the CUDA runtime reports (cudaDevAttrClockRate, the maximum
 * clock of the current power mode): 625 MHz Orin Nano, 1020 MHz Orin Nano "Super" (JetPack 6.2
 * MAXN SUPER), 765 MHz Orin NX 8GB, 918 MHz Orin NX 16GB, 1173 MHz Orin NX "Super", 930 MHz
 * AGX Orin 32GB, 1300 MHz AGX Orin 64GB; the nearest clock picks the entry. A Jetson in a lower
 * power mode gets the entry of the nearest listed clock, whose peak assumes that entry's clock.
 */
#ifndef EB_PEAKS_H
#define EB_PEAKS_H

#include <stddef.h>
#include <stdint.h>

/** The arithmetic a peak is for. */
enum eb_peak_precision {
    EB_PEAK_FP32 = 0, /* FP32 FMA on the CUDA cores, no TF32 (the engine's fp32 convolutions) */
    EB_PEAK_FP16,     /* FP16 tensor cores, dense, FP32 accumulation (the engine's fp16) */
    EB_PEAK_INT8,     /* INT8 tensor cores, dense (TOPS) */
    EB_PEAK_PRECISION_COUNT
};

/** "fp32", "fp16", "int8"; "unknown" otherwise. */
const char *eb_peak_precision_name(enum eb_peak_precision p);
/**
 * The precision called `name` ("fp32", "fp16", "int8", as eb_engine_exec_info.precision and
 * eb_backend_device_info.precision say). Returns 1 and sets *p_out, or 0 when unknown.
 */
int eb_peak_precision_parse(const char *name, enum eb_peak_precision *p_out);

/** One device of the table (static storage). */
struct eb_peak_entry {
    const char *name;  /* what the reports call it, e.g. "NVIDIA H100 SXM5" */
    const char *match; /* token of the CUDA device name, e.g. "H100 PCIe" */
    int sms;           /* SM count the device must have; 0 = any */
    double mem_min_gb; /* total memory at least this (GB = 1e9 bytes); 0 = no bound */
    double mem_max_gb; /* total memory below this; 0 = no bound */
    double clock_mhz;  /* the GPU clock the figures assume */
    double tflops[EB_PEAK_PRECISION_COUNT]; /* dense peak, 10^12 FLOP/s (int8: TOPS); 0 = not
                                               known for that precision */
    const char *source;     /* datasheet or whitepaper, and how a derived figure is computed */
    double mem_gbs;         /* peak DRAM bandwidth, 10^9 bytes/s (the memory-bound roofline, e.g. a
                           decoder's bandwidth utilisation); 0 = not known for this entry */
    const char *mem_source; /* where mem_gbs comes from; NULL when 0 */
};

/** The whole table, in matching order; `*n_out` gets its length. Static storage. */
const struct eb_peak_entry *eb_peak_table(size_t *n_out);

/**
 * The entry for a CUDA device: `name` as cudaDeviceProp.name reports it, `sms` its
 * multiProcessorCount (0 = unknown: entries that need an SM count do not match), `total_bytes`
 * its totalGlobalMem (0 = unknown: entries with a memory range do not match), `clock_mhz` the
 * clock the runtime reports (0 = unknown: the first matching entry wins). Returns NULL when no
 * entry matches (an unknown device, or NULL/empty name). The entry is static storage.
 */
const struct eb_peak_entry *eb_peak_find(const char *name, int sms, uint64_t total_bytes,
                                         double clock_mhz);

#endif
