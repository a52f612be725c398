/* The flag text of each enum eb_advice bit (advice.h): one row per bit. */
#include "harness/pipeline/advice.h"

#include <stdio.h>
#include <string.h>

#include "eb/status.h"

/* Rows in the order the remedies are named; consecutive rows with the same verb share it
 * ("use --precision fp32 or --device cpu"). */
static const struct {
    unsigned bit;
    const char *verb;
    const char *what;
} rows[] = {
    {EB_ADVICE_MEM_LIMIT, "raise", "--gpu_mem_limit_gb or use a smaller model or --imgsz"},
    {EB_ADVICE_OTHER_BACKEND, "use", "--backend ort"},
    {EB_ADVICE_TENSORRT, "use", "--backend ort --device tensorrt"},
    {EB_ADVICE_PROFILE_NATIVE, "use", "--backend native --profile"},
    {EB_ADVICE_FP32, "use", "--precision fp32"},
    {EB_ADVICE_CUDA, "use", "--device cuda"},
    {EB_ADVICE_CPU, "use", "--device cpu"},
    {EB_ADVICE_PREPROCESS_CPU, "use", "--preprocess cpu"},
    {EB_ADVICE_DECODE_CPU, "use", "--decode cpu"},
    {EB_ADVICE_ORT_LIB, "point", "--ort_lib at another ONNX Runtime library"},
    {EB_ADVICE_FEWER_THREADS, "pass", "a smaller --threads"},
    {EB_ADVICE_DEFAULT_IMGSZ, "omit", "--imgsz"},
    {EB_ADVICE_NO_PROFILE, "run", "without --profile"},
    {EB_ADVICE_TRT_CACHE, "give", "another --trt_cache folder or --trt_cache off"},
};

size_t eb_advice_text(unsigned advice, char *out, size_t size)
{
    size_t n = 0;
    const char *verb = NULL;
    if (size > 0)
        out[0] = '\0';
    for (size_t i = 0; i < EB_ARRAY_LEN(rows); i++) {
        if ((advice & rows[i].bit) == 0)
            continue;
        const int same = verb != NULL && strcmp(verb, rows[i].verb) == 0;
        const int w = snprintf(n < size ? out + n : NULL, n < size ? size - n : 0, "%s%s%s%s",
                               verb != NULL ? " or " : "", same ? "" : rows[i].verb,
                               same ? "" : " ", rows[i].what);
        if (w > 0)
            n += (size_t)w;
        verb = rows[i].verb;
    }
    return n;
}

void eb_advice_append(struct eb_diag *diag)
{
    if (diag == NULL || diag->advice == 0)
        return;
    char text[EB_DIAG_MSG_MAX];
    size_t t = eb_advice_text(diag->advice, text, sizeof(text));
    diag->advice = 0;
    if (t == 0 || t + 2 >= sizeof(diag->msg))
        return;
    size_t n = strlen(diag->msg);
    if (n + 2 + t >= sizeof(diag->msg)) { /* the message gives way, the remedies stay whole */
        n = sizeof(diag->msg) - 1 - 2 - t;
        n = n >= 3 ? n - 3 : 0;
        memcpy(diag->msg + n, "...", 4);
        n = strlen(diag->msg);
    }
    snprintf(diag->msg + n, sizeof(diag->msg) - n, "; %s", text);
}
