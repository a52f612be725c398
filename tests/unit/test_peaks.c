/* The table of dense device peaks behind MFU (harness/metrics/peaks.c): matching CUDA device names as
 * the runtime reports them, Jetson Orin modules told apart, unknown devices, sane figures. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "eb_test.h"
#include "harness/metrics/peaks.h"
#include "harness/results/result.h"

#define GB 1000000000ull

/* The table entry's name for a device, or "(none)". */
static const char *found(const char *name, int sms, uint64_t bytes, double mhz)
{
    const struct eb_peak_entry *e = eb_peak_find(name, sms, bytes, mhz);
    return e != NULL ? e->name : "(none)";
}

EB_TEST(hopper_names_as_cuda_reports_them)
{
    /* cudaDeviceProp.name of the SXM5, PCIe and NVL boards and of the H200. */
    ASSERT_STREQ(found("NVIDIA H100 80GB HBM3", 132, 85 * GB, 1980), "NVIDIA H100 SXM5");
    ASSERT_STREQ(found("NVIDIA H100 PCIe", 114, 85 * GB, 1755), "NVIDIA H100 PCIe");
    ASSERT_STREQ(found("NVIDIA H100 NVL", 132, 100 * GB, 1785), "NVIDIA H100 NVL");
    ASSERT_STREQ(found("NVIDIA H200", 132, 150 * GB, 1980), "NVIDIA H200 SXM");
    ASSERT_STREQ(found("NVIDIA H200 NVL", 132, 150 * GB, 1785), "NVIDIA H200 NVL");
    ASSERT_STREQ(found("nvidia h100 pcie", 114, 85 * GB, 0), "NVIDIA H100 PCIe"); /* any case */
    /* The SXM5 and H200 figures: dense FP16 tensor with FP32 accumulation, FP32 FMA. */
    const struct eb_peak_entry *sxm = eb_peak_find("NVIDIA H100 80GB HBM3", 132, 85 * GB, 0);
    const struct eb_peak_entry *pcie = eb_peak_find("NVIDIA H100 PCIe", 114, 85 * GB, 0);
    const struct eb_peak_entry *h200 = eb_peak_find("NVIDIA H200", 132, 150 * GB, 0);
    ASSERT_TRUE(sxm != NULL && pcie != NULL && h200 != NULL);
    ASSERT_NEAR(sxm->tflops[EB_PEAK_FP16], 989.4, 1e-9);
    ASSERT_NEAR(sxm->tflops[EB_PEAK_FP32], 66.9, 1e-9);
    ASSERT_NEAR(pcie->tflops[EB_PEAK_FP16], 756.5, 1e-9);
    ASSERT_NEAR(h200->tflops[EB_PEAK_FP16], 989.4, 1e-9);
}

EB_TEST(tokens_do_not_match_inside_longer_names)
{
    ASSERT_STREQ(found("NVIDIA L40S", 142, 48 * GB, 2520), "NVIDIA L40S");
    ASSERT_STREQ(found("NVIDIA L4", 58, 24 * GB, 2040), "NVIDIA L4");
    ASSERT_STREQ(found("NVIDIA L40", 142, 48 * GB, 2490), "(none)");          /* not "L4" */
    ASSERT_STREQ(found("NVIDIA GH200 480GB", 132, 100 * GB, 1980), "(none)"); /* not "H200" */
    ASSERT_STREQ(found("NVIDIA A100-SXM4-80GB", 108, 85 * GB, 1410), "NVIDIA A100");
    ASSERT_STREQ(found("NVIDIA A10", 72, 24 * GB, 1695), "(none)"); /* not "A100" */
}

EB_TEST(jetson_orin_told_apart_by_sms_memory_and_clock)
{
    /* Every Orin reports "Orin"; the numbers are what deviceQuery shows on each module. */
    ASSERT_STREQ(found("Orin", 8, 15189422080ull, 918), "Jetson Orin NX 16GB");
    ASSERT_STREQ(found("Orin", 8, 15189422080ull, 1173), "Jetson Orin NX 16GB (MAXN SUPER)");
    ASSERT_STREQ(found("Orin", 8, 7600000000ull, 765), "Jetson Orin NX 8GB");
    ASSERT_STREQ(found("Orin", 8, 7600000000ull, 624), "Jetson Orin Nano 8GB");
    ASSERT_STREQ(found("Orin", 8, 7600000000ull, 1020), "Jetson Orin Nano 8GB (Super)");
    ASSERT_STREQ(found("Orin", 4, 3600000000ull, 624), "Jetson Orin Nano 4GB");
    ASSERT_STREQ(found("Orin", 4, 3600000000ull, 1020), "Jetson Orin Nano 4GB (Super)");
    ASSERT_STREQ(found("Orin", 14, 31 * GB, 930), "Jetson AGX Orin 32GB");
    ASSERT_STREQ(found("Orin", 16, 64 * GB, 1300), "Jetson AGX Orin 64GB");
    /* Without an SM count or memory the module cannot be told: no peak. */
    ASSERT_STREQ(found("Orin", 0, 7600000000ull, 625), "(none)");
    ASSERT_STREQ(found("Orin", 8, 0, 625), "(none)");
    /* AGX Orin 64GB: 2048 cores x 2 x 1.3 GHz; 64 tensor cores x 512 x 1.3 GHz. */
    const struct eb_peak_entry *agx = eb_peak_find("Orin", 16, 64 * GB, 1300);
    ASSERT_TRUE(agx != NULL);
    ASSERT_NEAR(agx->tflops[EB_PEAK_FP32], 2048 * 2 * 1.3e9 / 1e12, 1e-9);
    ASSERT_NEAR(agx->tflops[EB_PEAK_FP16], 64 * 512 * 1.3e9 / 1e12, 1e-9);
    ASSERT_NEAR(agx->tflops[EB_PEAK_INT8] * 2, 170.4, 0.1); /* the brief's 170 sparse TOPS */
    /* Orin Nano 8GB: the datasheet's 40 (625 MHz) and Super's 67 (1020 MHz) sparse INT8 TOPS. */
    ASSERT_NEAR(eb_peak_find("Orin", 8, 7600000000ull, 625)->tflops[EB_PEAK_INT8] * 2, 40.96, 1e-9);
    ASSERT_NEAR(eb_peak_find("Orin", 8, 7600000000ull, 1020)->tflops[EB_PEAK_INT8] * 2, 66.85,
                0.01);
}

EB_TEST(unknown_devices_are_not_found)
{
    ASSERT_STREQ(found("Tesla T4", 40, 16 * GB, 1590), "(none)");
    ASSERT_STREQ(found("NVIDIA GeForce RTX 4090 D", 114, 24 * GB, 2520), "(none)"); /* 114 SMs */
    ASSERT_STREQ(found("NVIDIA GeForce RTX 4060 Ti", 34, 8 * GB, 2535), "(none)");
    ASSERT_STREQ(found("NVIDIA GeForce RTX 4090 Laptop GPU", 76, 16 * GB, 2040), "(none)");
    ASSERT_STREQ(found("", 132, 85 * GB, 1980), "(none)");
    ASSERT_TRUE(eb_peak_find(NULL, 132, 85 * GB, 1980) == NULL);
    ASSERT_STREQ(found("NVIDIA GeForce RTX 4090", 128, 24 * GB, 2520), "NVIDIA GeForce RTX 4090");
}

EB_TEST(table_figures_are_sane_and_every_entry_reachable)
{
    size_t n = 0;
    const struct eb_peak_entry *t = eb_peak_table(&n);
    struct eb_profile_result r; /* for the sizes the entries are copied into */
    ASSERT_TRUE(n >= 29);       /* 8 data centre, 3 workstation, 8 GeForce, 10 Jetson */
    for (size_t i = 0; i < n; i++) {
        const struct eb_peak_entry *e = &t[i];
        ASSERT_TRUE(e->name != NULL && e->match != NULL && e->source != NULL);
        ASSERT_TRUE(strlen(e->name) < sizeof(r.peak_device));
        ASSERT_TRUE(strlen(e->source) < sizeof(r.peak_note));
        ASSERT_TRUE(e->source[0] != '\0' && e->clock_mhz > 0);
        if (!(e->tflops[EB_PEAK_FP32] > 0 && e->tflops[EB_PEAK_FP16] > e->tflops[EB_PEAK_FP32] &&
              e->tflops[EB_PEAK_INT8] >= e->tflops[EB_PEAK_FP16]))
            EB_FAIL("%s: fp32 %g, fp16 %g, int8 %g TFLOPS", e->name, e->tflops[EB_PEAK_FP32],
                    e->tflops[EB_PEAK_FP16], e->tflops[EB_PEAK_INT8]);
        /* a bandwidth with its source, except where one entry covers variants that differ */
        if ((e->mem_gbs > 0) != (e->mem_source != NULL) ||
            (!(e->mem_gbs > 0) && strcmp(e->name, "NVIDIA A100") != 0))
            EB_FAIL("%s: bandwidth %g GB/s, source %s", e->name, e->mem_gbs,
                    e->mem_source != NULL ? e->mem_source : "(none)");
        /* A device made from the entry finds the entry itself (none is shadowed). */
        char name[96];
        snprintf(name, sizeof(name), "NVIDIA %s", e->match);
        uint64_t bytes = e->mem_min_gb > 0   ? (uint64_t)((e->mem_min_gb + 1) * 1e9)
                         : e->mem_max_gb > 0 ? (uint64_t)((e->mem_max_gb - 1) * 1e9)
                                             : 80 * GB;
        const struct eb_peak_entry *back = eb_peak_find(name, e->sms, bytes, e->clock_mhz);
        if (back != e)
            EB_FAIL("entry %s is found as %s", e->name, back != NULL ? back->name : "(none)");
    }
}

EB_TEST(precision_names_round_trip)
{
    enum eb_peak_precision p;
    for (int i = 0; i < EB_PEAK_PRECISION_COUNT; i++) {
        ASSERT_TRUE(eb_peak_precision_parse(eb_peak_precision_name((enum eb_peak_precision)i), &p));
        ASSERT_EQ_INT(p, i);
    }
    ASSERT_STREQ(eb_peak_precision_name(EB_PEAK_FP16), "fp16");
    ASSERT_TRUE(!eb_peak_precision_parse("bf16", &p));
    ASSERT_TRUE(!eb_peak_precision_parse(NULL, &p));
}

/* DRAM bandwidth, the decoder's roofline: the datasheets' figures (10^9 bytes/s). */
EB_TEST(bandwidth_of_known_devices)
{
    ASSERT_NEAR(eb_peak_find("NVIDIA H100 80GB HBM3", 132, 80 * GB, 1980)->mem_gbs, 3350, 1e-9);
    ASSERT_NEAR(eb_peak_find("NVIDIA H100 PCIe", 114, 80 * GB, 1755)->mem_gbs, 2000, 1e-9);
    ASSERT_NEAR(eb_peak_find("NVIDIA H200", 132, 143 * GB, 1980)->mem_gbs, 4800, 1e-9);
    ASSERT_NEAR(eb_peak_find("Orin", 16, 64 * GB, 1300)->mem_gbs, 204.8, 1e-9);
    ASSERT_NEAR(eb_peak_find("Orin", 8, 7600000000ull, 625)->mem_gbs, 68, 1e-9);
    ASSERT_NEAR(eb_peak_find("Orin", 8, 7600000000ull, 1020)->mem_gbs, 102, 1e-9);
    ASSERT_NEAR(eb_peak_find("Orin", 4, 3600000000ull, 625)->mem_gbs, 34, 1e-9);
    ASSERT_NEAR(eb_peak_find("NVIDIA GeForce RTX 4090", 128, 24 * GB, 2520)->mem_gbs, 1008, 1e-9);
    /* one entry for every A100 variant: no single figure, so none */
    ASSERT_TRUE(!(eb_peak_find("NVIDIA A100-SXM4-80GB", 108, 80 * GB, 1410)->mem_gbs > 0));
}
