/* The native engine's memory plan for `edgebench model info` (see model_plan.h). */
#include "harness/cmd/model_plan.h"

#include <string.h>

#include "eb/engine.h"
#include "eb/path.h"
#include "harness/pipeline/advice.h"

enum eb_status eb_harness_model_plan(const uint8_t *bytes, size_t len, const char *what, int imgsz,
                                     struct eb_model_plan *plan_out, struct eb_diag *diag)
{
    struct eb_engine_options opt;
    struct eb_engine *e = NULL;
    struct eb_engine_mem mem;
    struct eb_engine_io io;
    enum eb_status st;

    eb_engine_options_default(&opt);
    opt.threads = 1; /* the plan does not depend on threads; one keeps the load cheap */
    opt.imgsz = imgsz;
    /* External-data tensors are read from the model's folder, as the native backend does. */
    char base_dir[1024];
    eb_path_dir(what, base_dir, sizeof(base_dir));
    opt.base_dir = base_dir;
    st = eb_engine_load(bytes, len, what, &opt, &e, diag);
    if (st != EB_OK) {
        eb_advice_append(diag); /* the reason model info prints, with the run's remedy */
        return st;
    }
    eb_engine_mem_info(e, &mem);
    eb_engine_io_info(e, &io);
    memset(plan_out, 0, sizeof(*plan_out));
    if (io.n_inputs > 0 && io.inputs[0].rank == 4) {
        plan_out->height = (int)io.inputs[0].shape[2];
        plan_out->width = (int)io.inputs[0].shape[3];
    }
    plan_out->arena_bytes = mem.arena_bytes;
    plan_out->scratch_bytes = mem.scratch_bytes;
    plan_out->weight_bytes = mem.weight_bytes;
    plan_out->packed_bytes = mem.packed_bytes;
    plan_out->total_bytes = mem.total_bytes;
    plan_out->naive_bytes = mem.naive_bytes;
    eb_engine_destroy(e);
    return EB_OK;
}
