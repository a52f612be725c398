/*
 * Run-time instruction-set detection: cpuid + xgetbv on x86-64 (the OS must save the vector
 * state, not only the CPU support it); aarch64 always has Advanced SIMD.
 */
#include <string.h>

#include "engine/cpu/cpu.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <cpuid.h>

static uint64_t xgetbv0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

void eb_cpu_features_detect(struct eb_cpu_features *f_out)
{
    unsigned a, b, c, d;
    memset(f_out, 0, sizeof(*f_out));
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return;
    int osxsave = (c >> 27) & 1, avx = (c >> 28) & 1, fma = (c >> 12) & 1;
    if (!osxsave || !avx)
        return;
    uint64_t xcr0 = xgetbv0();
    int ymm = (xcr0 & 0x6) == 0x6, zmm = (xcr0 & 0xE6) == 0xE6;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return;
    int avx2 = (b >> 5) & 1;
    int avx512f = (b >> 16) & 1, avx512dq = (b >> 17) & 1, avx512bw = (b >> 30) & 1,
        avx512vl = (b >> 31) & 1;
    f_out->avx2 = ymm && avx2 && fma;
    f_out->avx512 = f_out->avx2 && zmm && avx512f && avx512dq && avx512bw && avx512vl;
    /* AVX512_VNNI: leaf 7 subleaf 0, ECX bit 11, AVX512_VBMI: ECX bit 1; their zmm forms need
     * the rest of AVX-512. */
    f_out->avx512_vnni = f_out->avx512 && ((c >> 11) & 1);
    f_out->avx512_vbmi = f_out->avx512 && ((c >> 1) & 1);
}
#else
void eb_cpu_features_detect(struct eb_cpu_features *f_out)
{
    memset(f_out, 0, sizeof(*f_out));
#if defined(__aarch64__)
    f_out->neon = 1;
#endif
}
#endif

enum eb_cpu_isa eb_cpu_isa_best(const struct eb_cpu_features *f)
{
    if (f->avx512)
        return EB_CPU_ISA_AVX512;
    if (f->avx2)
        return EB_CPU_ISA_AVX2;
    if (f->neon)
        return EB_CPU_ISA_NEON;
    return EB_CPU_ISA_REF;
}

const char *eb_cpu_isa_name(enum eb_cpu_isa isa)
{
    switch (isa) {
    case EB_CPU_ISA_REF: return "ref";
    case EB_CPU_ISA_NEON: return "neon";
    case EB_CPU_ISA_AVX2: return "avx2";
    case EB_CPU_ISA_AVX512: return "avx512";
    }
    return "?";
}

enum eb_status eb_cpu_isa_parse(const char *name, const struct eb_cpu_features *f,
                                enum eb_cpu_isa *isa_out, struct eb_diag *diag)
{
    static const enum eb_cpu_isa all[] = {EB_CPU_ISA_REF, EB_CPU_ISA_NEON, EB_CPU_ISA_AVX2,
                                          EB_CPU_ISA_AVX512};
    if (name == NULL || name[0] == '\0' || strcmp(name, "auto") == 0) {
        *isa_out = eb_cpu_isa_best(f);
        return EB_OK;
    }
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        if (strcmp(name, eb_cpu_isa_name(all[i])) != 0)
            continue;
        int ok = all[i] == EB_CPU_ISA_REF || (all[i] == EB_CPU_ISA_NEON && f->neon) ||
                 (all[i] == EB_CPU_ISA_AVX2 && f->avx2) ||
                 (all[i] == EB_CPU_ISA_AVX512 && f->avx512);
        if (!ok)
            return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                                "failed to select CPU kernels '%s': this CPU or build lacks them; "
                                "use auto (here: %s)",
                                name, eb_cpu_isa_name(eb_cpu_isa_best(f)));
        *isa_out = all[i];
        return EB_OK;
    }
    return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                        "failed to select CPU kernels '%s': unknown; use auto, ref, avx2, avx512 "
                        "or neon",
                        name);
}
