/*
 * Caller-owned error detail: one line saying what failed, which one, why, and what to do.
 *
 *     struct eb_diag diag = {0};
 *     if (eb_x_create(..., &x, &diag) != EB_OK) puts(diag.msg);
 *
 * Callees write with `return eb_diag_fail(diag, EB_ERR_IO, "failed to open %s: %s; check the path", p, strerror(errno));`.
 * The first failure wins; later eb_diag_fail calls keep the first message but still return
 * their status. `diag` may be NULL everywhere.
 *
 * The engine and the backends are libraries below the command line: their messages say what
 * failed and why, and name no CLI flag. Where the remedy is a different setting, they record
 * *which kind* of remedy applies as `enum eb_advice` bits (eb_diag_fail_advise); the harness
 * turns the bits into flag text where it shows the failure (eb_advice_append,
 * src/harness/pipeline/advice.c). Remedies that are no setting ("check the path",
 * "re-export the model") stay in the message.
 */
#ifndef EB_DIAG_H
#define EB_DIAG_H

#include <stddef.h>

#include "eb/status.h"

#define EB_DIAG_MSG_MAX 512

/* Bits in eb_diag.advice: the kinds of remedy a failure has, one bit each; the harness's table
 * (src/harness/pipeline/advice.c) has one row per bit with its flag text. */
enum eb_advice {
    EB_ADVICE_MEM_LIMIT = 1u << 0,      /* raise the memory limit or use a smaller model/size */
    EB_ADVICE_OTHER_BACKEND = 1u << 1,  /* another backend (ONNX Runtime) can run it */
    EB_ADVICE_TENSORRT = 1u << 2,       /* ONNX Runtime's TensorRT provider can run it */
    EB_ADVICE_PROFILE_NATIVE = 1u << 3, /* the native backend records a per-operator profile */
    EB_ADVICE_FP32 = 1u << 4,           /* run in fp32 precision */
    EB_ADVICE_CUDA = 1u << 5,           /* run on the CUDA device */
    EB_ADVICE_CPU = 1u << 6,            /* run on the CPU */
    EB_ADVICE_PREPROCESS_CPU = 1u << 7, /* letterbox on the host */
    EB_ADVICE_DECODE_CPU = 1u << 8,     /* decode the head on the host */
    EB_ADVICE_ORT_LIB = 1u << 9,        /* point at another ONNX Runtime library */
    EB_ADVICE_FEWER_THREADS = 1u << 10, /* fewer threads */
    EB_ADVICE_DEFAULT_IMGSZ = 1u << 11, /* leave the input size to the model */
    EB_ADVICE_NO_PROFILE = 1u << 12,    /* run without the per-operator profile */
    EB_ADVICE_TRT_CACHE = 1u << 13,     /* another TensorRT engine cache folder, or none */
    EB_ADVICE_ALL = (1u << 14) - 1u
};

struct eb_diag {
    enum eb_status status; /* EB_OK until the first failure */
    unsigned advice;       /* enum eb_advice bits of the recorded failure; 0 = none */
    char msg[EB_DIAG_MSG_MAX];
};

/** Records a failure (if none is recorded yet) and returns `st`. `diag` may be NULL. */
enum eb_status eb_diag_fail(struct eb_diag *diag, enum eb_status st, const char *fmt, ...)
    EB_PRINTF(3, 4);
/**
 * eb_diag_fail that also records `advice` (enum eb_advice bits) with the message. Advice belongs
 * to the message it was recorded with: when a failure is already recorded, neither changes
 * (first failure wins for both). Bits combine by OR: the harness shows every remedy they name.
 */
enum eb_status eb_diag_fail_advise(struct eb_diag *diag, enum eb_status st, unsigned advice,
                                   const char *fmt, ...) EB_PRINTF(4, 5);
/** Prefixes the recorded message with context, e.g. "slot thermal: ". No-op when empty. */
void eb_diag_prefix(struct eb_diag *diag, const char *fmt, ...) EB_PRINTF(2, 3);
/** Resets to EB_OK with an empty message and no advice. */
void eb_diag_clear(struct eb_diag *diag);

#endif
