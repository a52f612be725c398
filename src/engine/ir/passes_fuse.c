/* Fusion pass: placeholder until the fusions land (this session). */
#include "engine/ir/graph.h"

enum eb_status eb_graph__fuse(struct eb_graph *g, struct eb_diag *diag)
{
    (void)g;
    (void)diag;
    return EB_OK;
}
