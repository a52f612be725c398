/* The command-line advice for engine and backend failures (harness/pipeline/advice.h, the
 * enum eb_advice bits of include/eb/diag.h): one flag text per bit, how bits combine, and that a
 * slot's failure shows the flag the engine or backend could not name. */
#include <stdlib.h>
#include <string.h>

#include "eb/backend.h"
#include "eb_test.h"
#include "harness/pipeline/advice.h"
#include "harness/pipeline/slot.h"
#include "model/model.h"

EB_TEST(every_bit_has_its_own_flag_text)
{
    char text[32][EB_DIAG_MSG_MAX];
    size_t n = 0;
    for (unsigned bit = 1; bit != 0 && (bit & EB_ADVICE_ALL) != 0; bit <<= 1, n++) {
        ASSERT_TRUE(n < EB_ARRAY_LEN(text));
        ASSERT_TRUE(eb_advice_text(bit, text[n], sizeof(text[n])) > 0);
        printf("0x%04x: %s\n", bit, text[n]);
        ASSERT_CONTAINS(text[n], " --"); /* a remedy the command line gives */
        for (size_t k = 0; k < n; k++)
            ASSERT_TRUE(strcmp(text[k], text[n]) != 0);
    }
    ASSERT_EQ_INT(EB_ADVICE_ALL, (1u << n) - 1u); /* the bits are contiguous from bit 0 */
    char none[8] = "x";
    ASSERT_EQ_INT(eb_advice_text(~(unsigned)EB_ADVICE_ALL, none, sizeof(none)), 0);
    ASSERT_STREQ(none, "");
}

EB_TEST(remedies_combine_with_or_and_share_their_verb)
{
    char t[EB_DIAG_MSG_MAX];
    eb_advice_text(EB_ADVICE_FP32 | EB_ADVICE_CPU, t, sizeof(t));
    ASSERT_STREQ(t, "use --precision fp32 or --device cpu");
    eb_advice_text(EB_ADVICE_MEM_LIMIT, t, sizeof(t));
    ASSERT_STREQ(t, "raise --gpu_mem_limit_gb or use a smaller model or --imgsz");
    eb_advice_text(EB_ADVICE_CPU | EB_ADVICE_ORT_LIB, t, sizeof(t));
    ASSERT_STREQ(t, "use --device cpu or point --ort_lib at another ONNX Runtime library");
    /* a short buffer is cut, and the length says what was needed */
    char s[8];
    ASSERT_EQ_INT(eb_advice_text(EB_ADVICE_OTHER_BACKEND, s, sizeof(s)),
                  strlen("use --backend ort"));
    ASSERT_STREQ(s, "use --b");
}

EB_TEST(append_adds_the_advice_once)
{
    struct eb_diag d = {0};
    eb_advice_append(&d); /* no failure: nothing */
    ASSERT_STREQ(d.msg, "");
    eb_advice_append(NULL);
    eb_diag_fail_advise(&d, EB_ERR_UNSUPPORTED, EB_ADVICE_FP32 | EB_ADVICE_CUDA,
                        "failed to load model m.onnx: fp16 needs the cuda device");
    eb_advice_append(&d);
    eb_advice_append(&d);
    ASSERT_STREQ(d.msg, "failed to load model m.onnx: fp16 needs the cuda device; use --precision "
                        "fp32 or --device cuda");
    ASSERT_EQ_INT(d.advice, 0);
    ASSERT_EQ_INT(d.status, EB_ERR_UNSUPPORTED);
    /* without advice a message is left as it is */
    struct eb_diag plain = {0};
    eb_diag_fail(&plain, EB_ERR_IO, "failed to open x.onnx: no such file; check the path");
    eb_advice_append(&plain);
    ASSERT_STREQ(plain.msg, "failed to open x.onnx: no such file; check the path");
}

/* A message that fills the line gives way: the remedy is the part the user acts on. */
EB_TEST(a_full_line_keeps_the_advice_whole)
{
    char long_why[EB_DIAG_MSG_MAX];
    memset(long_why, 'x', sizeof(long_why) - 1);
    long_why[sizeof(long_why) - 1] = '\0';
    struct eb_diag d = {0};
    eb_diag_fail_advise(&d, EB_ERR_DEVICE, EB_ADVICE_CPU, "failed on cuda: %s", long_why);
    eb_advice_append(&d);
    const char *tail = "xxx...; use --device cpu";
    ASSERT_EQ_INT(strlen(d.msg), EB_DIAG_MSG_MAX - 1);
    ASSERT_STREQ(d.msg + strlen(d.msg) - strlen(tail), tail);
    ASSERT_TRUE(strncmp(d.msg, "failed on cuda: xxx", 19) == 0);
}

/* Advice belongs to the message it came with: first failure wins for both; clear forgets it. */
EB_TEST(advice_follows_the_first_failure)
{
    struct eb_diag d = {0};
    eb_diag_fail(&d, EB_ERR_IO, "failed to read a.onnx");
    ASSERT_EQ_INT(eb_diag_fail_advise(&d, EB_ERR_UNSUPPORTED, EB_ADVICE_CPU, "later"),
                  EB_ERR_UNSUPPORTED);
    ASSERT_STREQ(d.msg, "failed to read a.onnx");
    ASSERT_EQ_INT(d.advice, 0);
    eb_diag_clear(&d);
    eb_diag_fail_advise(&d, EB_ERR_UNSUPPORTED, EB_ADVICE_CPU, "first");
    eb_diag_fail_advise(&d, EB_ERR_UNSUPPORTED, EB_ADVICE_FP32, "second");
    ASSERT_EQ_INT(d.advice, EB_ADVICE_CPU);
    eb_diag_clear(&d);
    ASSERT_EQ_INT(d.advice, 0);
    ASSERT_EQ_INT(eb_diag_fail_advise(NULL, EB_ERR_IO, EB_ADVICE_CPU, "x"), EB_ERR_IO);
}

/* Prepares one native slot with `dev` and the memory cap `cap_bytes` over a synthesized model;
 * the slot is expected to fail, its diag is copied to `out`. */
static void prepare_failing_slot(enum eb_device dev, uint64_t cap_bytes, struct eb_diag *out)
{
    struct eb_slot slot, *s = &slot;
    struct eb_synth_options o = {
        .arch = EB_SYNTH_YOLOV8, .scale = 'n', .imgsz = 64, .num_classes = 80, .seed = 1};
    uint8_t *bytes = NULL;
    size_t len = 0;
    struct eb_diag d = {0};
    if (eb_model_synth(&o, &bytes, &len, &d) != EB_OK)
        EB_FAIL("eb_model_synth: %s", d.msg);
    struct eb_slot_setup su;
    memset(&su, 0, sizeof(su));
    su.model_bytes = bytes;
    su.model_len = len;
    su.model_label = "m64.onnx";
    su.source_text = "synthetic=64x64";
    su.backend_choice = EB_BACKEND_CHOICE_NATIVE;
    su.backend_cfg.device = dev;
    su.backend_cfg.threads = 1;
    su.backend_cfg.mem_limit_bytes = cap_bytes;
    su.frames = 1;
    eb_slot_init(s, 0, &su);
    ASSERT_TRUE(eb_slot_prepare(s) != EB_OK);
    ASSERT_EQ_INT(s->status, EB_SLOT_FAILED);
    printf("slot %s failed: %s\n", s->name, s->diag.msg);
    ASSERT_EQ_INT(s->diag.advice, 0); /* turned into text */
    *out = s->diag;
    eb_slot_fini(s);
    free(bytes);
}

/* What run.log, the console and report.json show for a slot: the backend's reason, then the
 * flag that the backend could not name. */
EB_TEST(slot_failure_names_the_flag)
{
    struct eb_diag d;
    prepare_failing_slot(EB_DEVICE_TENSORRT, 0, &d);
    ASSERT_CONTAINS(d.msg, "the native engine runs on cpu or cuda, TensorRT through ONNX Runtime; "
                           "use --backend ort --device tensorrt");
    prepare_failing_slot(EB_DEVICE_CPU, 4096, &d);
    ASSERT_EQ_INT(d.status, EB_ERR_LIMIT);
    ASSERT_CONTAINS(d.msg, " MiB; raise --gpu_mem_limit_gb or use a smaller model or --imgsz");
}
