/*
 * libFuzzer target on the ONNX loader: eb_engine_load (parse, import, passes, plan) with one
 * thread, imgsz 64 and a 256 MiB cap; a model that loads and plans small is also run once on
 * zeroed inputs. Built with clang when configured with -DEB_FUZZ=ON (cmake/EbFuzz.cmake); the
 * corpus in tests/fuzz/corpus/onnx is replayed by replay_main.c in every build (ctest
 * fuzz.replay_onnx).
 *
 *     cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DEB_FUZZ=ON -DEB_SANITIZE=address,undefined
 *     cmake --build build-fuzz --target fuzz_onnx
 *     build-fuzz/tests/fuzz_onnx -max_total_time=120 corpus-work tests/fuzz/corpus/onnx
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eb/engine.h"

/* Runs the model when its plan is this small (keeps every input fast). */
#define FUZZ_RUN_MAX_BYTES ((uint64_t)4 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void run_once(struct eb_engine *e)
{
    struct eb_engine_io io;
    struct eb_engine_mem mem;
    struct eb_tensor in[EB_ENGINE_MAX_IO], out[EB_ENGINE_MAX_IO];
    void *bufs[EB_ENGINE_MAX_IO] = {0};
    struct eb_diag d = {0};
    int ok = 1;

    eb_engine_mem_info(e, &mem);
    eb_engine_io_info(e, &io);
    if (mem.total_bytes > FUZZ_RUN_MAX_BYTES)
        return;
    memset(in, 0, sizeof(in));
    for (size_t i = 0; i < io.n_inputs && ok; i++) {
        uint64_t n = eb_dtype_size(io.inputs[i].dtype);
        for (int k = 0; k < io.inputs[i].rank; k++)
            n *= (uint64_t)io.inputs[i].shape[k];
        if (n > FUZZ_RUN_MAX_BYTES) {
            ok = 0;
            break;
        }
        bufs[i] = calloc(1, (size_t)n + 1);
        if (bufs[i] == NULL) {
            ok = 0;
            break;
        }
        in[i].dtype = io.inputs[i].dtype;
        in[i].rank = io.inputs[i].rank;
        for (int k = 0; k < io.inputs[i].rank; k++)
            in[i].shape[k] = io.inputs[i].shape[k];
        in[i].data = bufs[i];
    }
    if (ok && eb_engine_run(e, in, io.n_inputs, out, io.n_outputs, &d) != EB_OK)
        ok = 0; /* a run may fail (e.g. a kernel refusing an input); it must not crash */
    for (size_t i = 0; i < io.n_inputs; i++)
        free(bufs[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct eb_engine_options opt;
    struct eb_engine *e = NULL;
    struct eb_diag d = {0};

    eb_engine_options_default(&opt);
    opt.threads = 1;
    opt.imgsz = 64;
    opt.mem_cap_bytes = (uint64_t)256 << 20;
    if (eb_engine_load(data, size, "fuzz.onnx", &opt, &e, &d) == EB_OK)
        run_once(e);
    eb_engine_destroy(e);
    return 0;
}
