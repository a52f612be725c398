/*
 * The table of dense peaks behind MFU (peaks.h says how a device is matched). Figures are
 * 10^12 FLOP/s (int8: 10^12 OP/s), dense (no 2:4 sparsity), at the clock in the entry.
 * Datasheet figures are quoted; where NVIDIA publishes only the sparse figure it is halved;
 * where it publishes none (Jetson, some GeForce and workstation cards) the figure is derived
 * from the SM count and the clock with the per-SM rates below, which reproduce every figure the
 * whitepapers do publish for the same architecture.
 */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "harness/metrics/peaks.h"

/*
 * Jetson Orin (GA10B, sm_87): per SM 128 CUDA cores and 4 third-generation tensor cores of the
 * A100 kind (FP16 with FP32 accumulation at the full rate).
 *   fp32 = SMs x 128 cores x 2 FLOP (FMA) x clock
 *   fp16 = SMs x 4 tensor cores x 512 FLOP/clk (dense) x clock
 *   int8 = SMs x 4 tensor cores x 1024 OP/clk (dense) x clock
 * Check: AGX Orin 64GB, 16 SMs at 1300 MHz: fp32 5.3 TFLOPS and int8 85.2 dense = 170 sparse,
 * the figures of the AGX Orin technical brief; Orin Nano 8GB at 625 MHz: int8 20.5 dense = the
 * datasheet's 40 sparse TOPS, at 1020 MHz 33.4 = the Super's 67; Orin Nano 4GB: 10 dense.
 */
#define PEAK_ORIN(sms, mhz)                                                                        \
    {                                                                                              \
        (sms) * 128.0 * 2 * (mhz) / 1e6, (sms)*4.0 * 512 * (mhz) / 1e6,                            \
            (sms)*4.0 * 1024 * (mhz) / 1e6                                                         \
    }

/*
 * GeForce Ampere (GA10x) and Ada: per SM 128 FP32 lanes; the tensor cores run FP16 with FP32
 * accumulation at half their FP16-accumulate rate on GeForce cards.
 *   fp32 = SMs x 128 x 2 x clock
 *   fp16 = SMs x 512 FLOP/clk x clock (FP32 accumulate, dense)
 *   int8 = SMs x 2048 OP/clk x clock (dense)
 * Check: RTX 4090 (128 SMs, 2520 MHz) 82.6 / 165.2 / 660.6 and RTX 4080 (76, 2505 MHz)
 * 48.7 / 97.5 / 389.9 as in the Ada whitepaper; RTX 3090 (82, 1695 MHz) 35.6 / 71.2 / 284.7,
 * RTX 3080 (68, 1710 MHz) 29.8 / 59.5 / 238 and RTX 3070 (46, 1725 MHz) 20.3 / 40.6 / 162.6 as
 * in the GA102 whitepaper.
 */
#define PEAK_GEFORCE(sms, mhz)                                                                     \
    {                                                                                              \
        (sms) * 128.0 * 2 * (mhz) / 1e6, (sms)*512.0 * (mhz) / 1e6, (sms)*2048.0 * (mhz) / 1e6     \
    }

/*
 * Workstation Ampere and Ada cards: as GeForce but FP32 accumulation at the full rate.
 *   fp16 = SMs x 1024 FLOP/clk x clock (dense)
 * Check: RTX A6000 (84 SMs, 1800 MHz) 38.7 / 154.8 / 309.7 as its datasheet and the GA102
 * whitepaper; RTX A4000 (48, 1560 MHz) 19.2 FP32 and 153.4 sparse = 76.7 dense tensor TFLOPS as
 * its datasheet; RTX 6000 Ada (142, 2505 MHz) 91.1 FP32 and 1457 FP8 sparse = 4 x 364.2.
 */
#define PEAK_PRO(sms, mhz)                                                                         \
    {                                                                                              \
        (sms) * 128.0 * 2 * (mhz) / 1e6, (sms)*1024.0 * (mhz) / 1e6, (sms)*2048.0 * (mhz) / 1e6    \
    }

static const struct eb_peak_entry peak_table[] = {
    /* ---- data centre (most specific first) ---- */
    {"NVIDIA H100 PCIe",
     "H100 PCIe",
     0,
     0,
     0,
     1755,
     {51.2, 756.5, 1513.0},
     "NVIDIA H100 datasheet, PCIe: FP32 51 TFLOPS (14592 cores x 2 x 1755 MHz = 51.2); FP16 "
     "tensor 1513 and INT8 3026 with sparsity, halved",
     2000,
     "NVIDIA H100 PCIe product brief: HBM2e over 2,000 GB/s (datasheet: 2 TB/s)"},
    {"NVIDIA H100 NVL",
     "H100 NVL",
     0,
     0,
     0,
     1785,
     {60.0, 835.5, 1670.5},
     "NVIDIA H100 datasheet, NVL: FP32 60 TFLOPS; FP16 tensor 1671 and INT8 3341 with sparsity, "
     "halved",
     3900,
     "NVIDIA H100 datasheet, NVL: 3.9 TB/s HBM3"},
    {"NVIDIA H100 SXM5",
     "H100",
     132,
     0,
     0,
     1830,
     {66.9, 989.4, 1978.9},
     "NVIDIA H100 datasheet, SXM (67 TFLOPS FP32; 1979 FP16 and 3958 INT8 tensor with sparsity) "
     "and Hopper whitepaper (dense: 66.9 FP32 at 1980 MHz, 989.4 FP16 and 1978.9 INT8 at 1830 "
     "MHz); 132 SMs",
     3350,
     "NVIDIA H100 datasheet, SXM: 3.35 TB/s HBM3"},
    {"NVIDIA H200 NVL",
     "H200 NVL",
     0,
     0,
     0,
     1785,
     {60.0, 835.5, 1670.5},
     "NVIDIA H200 datasheet, NVL: FP32 60 TFLOPS; FP16 tensor 1671 and INT8 3341 with sparsity, "
     "halved",
     4800,
     "NVIDIA H200 datasheet, NVL: 4.8 TB/s HBM3e"},
    {"NVIDIA H200 SXM",
     "H200",
     0,
     0,
     0,
     1830,
     {66.9, 989.4, 1978.9},
     "NVIDIA H200 datasheet, SXM: FP32 67 TFLOPS; FP16 tensor 1979 and INT8 3958 with sparsity, "
     "halved (the H100 SXM5's GH100: 66.9 / 989.4 / 1978.9 in the Hopper whitepaper)",
     4800,
     "NVIDIA H200 datasheet, SXM: 4.8 TB/s HBM3e"},
    {"NVIDIA A100",
     "A100",
     0,
     0,
     0,
     1410,
     {19.5, 312.0, 624.0},
     "NVIDIA A100 datasheet (SXM4 and PCIe, 40 and 80 GB): FP32 19.5 TFLOPS, FP16 tensor 312 and "
     "INT8 624 dense; 108 SMs at 1410 MHz",
     0, /* bandwidth differs by variant (40 GB 1555 GB/s, 80 GB PCIe 1935, SXM4 2039) and one
           entry matches them all: not known */
     NULL},
    {"NVIDIA L40S",
     "L40S",
     0,
     0,
     0,
     2520,
     {91.6, 362.05, 733.0},
     "NVIDIA L40S datasheet: FP32 91.6 TFLOPS; FP16 tensor 362.05 dense (733 sparse); INT8 733 "
     "dense (1466 sparse)",
     864,
     "NVIDIA L40S datasheet: 864 GB/s GDDR6"},
    {"NVIDIA L4",
     "L4",
     0,
     0,
     0,
     2040,
     {30.3, 121.0, 242.5},
     "NVIDIA L4 datasheet: FP32 30.3 TFLOPS; FP16 tensor 242 and INT8 485 with sparsity, halved",
     300,
     "NVIDIA L4 datasheet: 300 GB/s GDDR6"},

    /* ---- workstation ---- */
    {"NVIDIA RTX 6000 Ada Generation", "RTX 6000 Ada", 142, 0, 0, 2505, PEAK_PRO(142, 2505),
     "NVIDIA RTX 6000 Ada datasheet (91.1 TFLOPS FP32, 1457 FP8 tensor with sparsity); derived: "
     "142 SMs x 1024 FLOP/clk x 2505 MHz",
     960, "NVIDIA RTX 6000 Ada datasheet: 960 GB/s GDDR6"},
    {"NVIDIA RTX A6000", "RTX A6000", 84, 0, 0, 1800, PEAK_PRO(84, 1800),
     "NVIDIA RTX A6000 datasheet and GA102 whitepaper: 38.7 TFLOPS FP32, FP16 tensor (FP32 "
     "accumulate) 154.8 and INT8 309.7 dense; 84 SMs at 1800 MHz",
     768, "NVIDIA RTX A6000 datasheet: 768 GB/s GDDR6"},
    {"NVIDIA RTX A4000", "RTX A4000", 48, 0, 0, 1560, PEAK_PRO(48, 1560),
     "NVIDIA RTX A4000 datasheet: 19.2 TFLOPS FP32, 153.4 tensor TFLOPS with sparsity (76.7 "
     "dense); derived: 48 SMs at 1560 MHz",
     448, "NVIDIA RTX A4000 datasheet: 448 GB/s GDDR6"},

    /* ---- GeForce (desktop cards; other SM counts, e.g. Ti/SUPER/laptop, are unknown) ---- */
    {"NVIDIA GeForce RTX 4090", "RTX 4090", 128, 0, 0, 2520, PEAK_GEFORCE(128, 2520),
     "Ada whitepaper: 82.6 TFLOPS FP32, FP16 tensor with FP32 accumulate 165.2 dense, INT8 660.6 "
     "dense; 128 SMs at 2520 MHz",
     1008, "NVIDIA GeForce RTX 4090 spec page: 21 Gbps GDDR6X, 384-bit (1008 GB/s)"},
    {"NVIDIA GeForce RTX 4080", "RTX 4080", 76, 0, 0, 2505, PEAK_GEFORCE(76, 2505),
     "Ada whitepaper: 48.7 TFLOPS FP32, FP16 tensor with FP32 accumulate 97.5 dense, INT8 389.9 "
     "dense; 76 SMs at 2505 MHz",
     716.8, "NVIDIA GeForce RTX 4080 spec page: 22.4 Gbps GDDR6X, 256-bit (716.8 GB/s)"},
    {"NVIDIA GeForce RTX 4070", "RTX 4070", 46, 0, 0, 2475, PEAK_GEFORCE(46, 2475),
     "derived with the Ada whitepaper's per-SM rates: 46 SMs at 2475 MHz (boost clock of the "
     "NVIDIA spec page)",
     504.2, "NVIDIA GeForce RTX 4070 spec page: 21 Gbps GDDR6X, 192-bit (504.2 GB/s)"},
    {"NVIDIA GeForce RTX 4060", "RTX 4060", 24, 0, 0, 2460, PEAK_GEFORCE(24, 2460),
     "derived with the Ada whitepaper's per-SM rates: 24 SMs at 2460 MHz (boost clock of the "
     "NVIDIA spec page)",
     272, "NVIDIA GeForce RTX 4060 spec page: 17 Gbps GDDR6, 128-bit (272 GB/s)"},
    {"NVIDIA GeForce RTX 3090", "RTX 3090", 82, 0, 0, 1695, PEAK_GEFORCE(82, 1695),
     "GA102 whitepaper: 35.6 TFLOPS FP32, FP16 tensor with FP32 accumulate 71 dense, INT8 284 "
     "dense; 82 SMs at 1695 MHz",
     936.2, "GA102 whitepaper: RTX 3090 19.5 Gbps GDDR6X, 384-bit (936.2 GB/s)"},
    {"NVIDIA GeForce RTX 3080", "RTX 3080", 68, 0, 0, 1710, PEAK_GEFORCE(68, 1710),
     "GA102 whitepaper: 29.8 TFLOPS FP32, FP16 tensor with FP32 accumulate 59.5 dense, INT8 238 "
     "dense; 68 SMs at 1710 MHz (the 10 GB card)",
     760.3, "GA102 whitepaper: RTX 3080 (10 GB) 19 Gbps GDDR6X, 320-bit (760.3 GB/s)"},
    {"NVIDIA GeForce RTX 3070", "RTX 3070", 46, 0, 0, 1725, PEAK_GEFORCE(46, 1725),
     "GA102 whitepaper appendix: 20.3 TFLOPS FP32, FP16 tensor with FP32 accumulate 40.6 dense, "
     "INT8 162.6 dense; 46 SMs at 1725 MHz",
     448, "GA102 whitepaper appendix: RTX 3070 14 Gbps GDDR6, 256-bit (448 GB/s)"},
    {"NVIDIA GeForce RTX 3060", "RTX 3060", 28, 0, 0, 1777, PEAK_GEFORCE(28, 1777),
     "derived with the GA102 whitepaper's per-SM rates: 28 SMs at 1777 MHz (boost clock of the "
     "NVIDIA spec page)",
     360, "NVIDIA GeForce RTX 3060 (12 GB) spec page: 15 Gbps GDDR6, 192-bit (360 GB/s)"},

    /* ---- Jetson Orin: CUDA name "Orin"; SMs, memory, then the nearest clock (peaks.h) ---- */
    {"Jetson AGX Orin 64GB", "Orin", 16, 0, 0, 1300, PEAK_ORIN(16, 1300),
     "Jetson AGX Orin datasheet/technical brief: 2048 CUDA cores, 64 tensor cores, GPU max 1.3 "
     "GHz; derived (peaks.c)",
     204.8, "Jetson AGX Orin datasheet: 256-bit LPDDR5, 204.8 GB/s"},
    {"Jetson AGX Orin 32GB", "Orin", 14, 0, 0, 930, PEAK_ORIN(14, 930),
     "Jetson AGX Orin datasheet: 1792 CUDA cores, 56 tensor cores, GPU max 930 MHz; derived "
     "(peaks.c)",
     204.8, "Jetson AGX Orin datasheet: 256-bit LPDDR5, 204.8 GB/s"},
    {"Jetson Orin NX 16GB", "Orin", 8, 12, 0, 918, PEAK_ORIN(8, 918),
     "Jetson Orin NX datasheet: 1024 CUDA cores, 32 tensor cores, GPU max 918 MHz; derived "
     "(peaks.c)",
     102.4, "Jetson Orin NX datasheet: 128-bit LPDDR5, 102.4 GB/s"},
    {"Jetson Orin NX 16GB (MAXN SUPER)", "Orin", 8, 12, 0, 1173, PEAK_ORIN(8, 1173),
     "JetPack 6.2 Super mode: GPU max 1173 MHz on Orin NX; derived (peaks.c)", 102.4,
     "Jetson Orin NX datasheet: 128-bit LPDDR5, 102.4 GB/s (unchanged in Super mode)"},
    {"Jetson Orin NX 8GB", "Orin", 8, 0, 12, 765, PEAK_ORIN(8, 765),
     "Jetson Orin NX datasheet: 1024 CUDA cores, 32 tensor cores, GPU max 765 MHz; derived "
     "(peaks.c)",
     102.4, "Jetson Orin NX datasheet: 128-bit LPDDR5, 102.4 GB/s"},
    {"Jetson Orin NX 8GB (MAXN SUPER)", "Orin", 8, 0, 12, 1173, PEAK_ORIN(8, 1173),
     "JetPack 6.2 Super mode: GPU max 1173 MHz on Orin NX; derived (peaks.c)", 102.4,
     "Jetson Orin NX datasheet: 128-bit LPDDR5, 102.4 GB/s (unchanged in Super mode)"},
    {"Jetson Orin Nano 8GB", "Orin", 8, 0, 12, 625, PEAK_ORIN(8, 625),
     "Jetson Orin Nano datasheet: 1024 CUDA cores, 32 tensor cores, GPU max 625 MHz, 40 sparse / "
     "20 dense INT8 TOPS; derived (peaks.c)",
     68, "Jetson Orin Nano datasheet: 128-bit LPDDR5, 68 GB/s"},
    {"Jetson Orin Nano 8GB (Super)", "Orin", 8, 0, 12, 1020, PEAK_ORIN(8, 1020),
     "Jetson Orin Nano Super datasheet: GPU max 1020 MHz, 67 sparse INT8 TOPS; derived "
     "(peaks.c)",
     102, "Jetson Orin Nano Super datasheet: 102 GB/s (memory clock raised)"},
    {"Jetson Orin Nano 4GB", "Orin", 4, 0, 0, 625, PEAK_ORIN(4, 625),
     "Jetson Orin Nano datasheet: 512 CUDA cores, 16 tensor cores, GPU max 625 MHz, 20 sparse / "
     "10 dense INT8 TOPS; derived (peaks.c)",
     34, "Jetson Orin Nano datasheet: 64-bit LPDDR5, 34 GB/s"},
    {"Jetson Orin Nano 4GB (Super)", "Orin", 4, 0, 0, 1020, PEAK_ORIN(4, 1020),
     "Jetson Orin Nano Super: GPU max 1020 MHz, 34 sparse INT8 TOPS; derived (peaks.c)", 51,
     "Jetson Orin Nano Super datasheet: 4GB module, 51 GB/s"},
};

const char *eb_peak_precision_name(enum eb_peak_precision p)
{
    static const char *const names[EB_PEAK_PRECISION_COUNT] = {"fp32", "fp16", "int8"};
    return (unsigned)p < EB_PEAK_PRECISION_COUNT ? names[p] : "unknown";
}

int eb_peak_precision_parse(const char *name, enum eb_peak_precision *p_out)
{
    for (int p = 0; name != NULL && p < EB_PEAK_PRECISION_COUNT; p++)
        if (strcmp(name, eb_peak_precision_name((enum eb_peak_precision)p)) == 0) {
            *p_out = (enum eb_peak_precision)p;
            return 1;
        }
    return 0;
}

const struct eb_peak_entry *eb_peak_table(size_t *n_out)
{
    *n_out = sizeof(peak_table) / sizeof(peak_table[0]);
    return peak_table;
}

static int is_word(char c)
{
    return isalnum((unsigned char)c);
}

/* 1 when `tok` occurs in `s` as a whole token (not inside a longer word), any case. */
static int has_token(const char *s, const char *tok)
{
    size_t n = strlen(tok);
    if (n == 0)
        return 0;
    for (const char *p = s; *p != '\0'; p++) {
        if (p > s && is_word(p[-1]))
            continue;
        size_t i = 0;
        while (i < n && p[i] != '\0' &&
               tolower((unsigned char)p[i]) == tolower((unsigned char)tok[i]))
            i++;
        if (i == n && !is_word(p[n]))
            return 1;
    }
    return 0;
}

static int entry_matches(const struct eb_peak_entry *e, const char *name, int sms,
                         uint64_t total_bytes)
{
    double gb = (double)total_bytes / 1e9;
    if (!has_token(name, e->match))
        return 0;
    if (e->sms > 0 && sms != e->sms)
        return 0;
    if ((e->mem_min_gb > 0 || e->mem_max_gb > 0) && total_bytes == 0)
        return 0;
    if (e->mem_min_gb > 0 && gb < e->mem_min_gb)
        return 0;
    if (e->mem_max_gb > 0 && gb >= e->mem_max_gb)
        return 0;
    return 1;
}

const struct eb_peak_entry *eb_peak_find(const char *name, int sms, uint64_t total_bytes,
                                         double clock_mhz)
{
    const struct eb_peak_entry *best = NULL;
    if (name == NULL || name[0] == '\0')
        return NULL;
    for (size_t i = 0; i < sizeof(peak_table) / sizeof(peak_table[0]); i++) {
        const struct eb_peak_entry *e = &peak_table[i];
        if (!entry_matches(e, name, sms, total_bytes))
            continue;
        if (best == NULL)
            best = e;
        else if (clock_mhz > 0 && strcmp(e->match, best->match) == 0 &&
                 fabs(e->clock_mhz - clock_mhz) < fabs(best->clock_mhz - clock_mhz))
            best = e; /* the same device in another clock mode (Jetson power modes) */
    }
    return best;
}
