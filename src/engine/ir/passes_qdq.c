/* --qdq int8: placeholder until the integer path lands (this session). */
#include "engine/ir/graph.h"

enum eb_status eb_graph__qdq_int8(struct eb_graph *g, struct eb_diag *diag)
{
    return eb_diag_fail(diag, EB_ERR_UNSUPPORTED,
                        "failed to load model %s: --qdq int8 is not available yet; use --qdq float",
                        g->what);
}
