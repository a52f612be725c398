/*
 * libFuzzer target on the model profile file (yolo/profile.h): the input (cut to 64 KiB,
 * NUL-terminated) as a --model_profile file over two graphs (a YOLOv5-Lite raw head and a
 * NanoDet head with six outputs), through eb_profile_resolve. A resolved profile must be one
 * the decoder can use: its head fits the outputs (eb_head_check_outputs), its std is positive
 * and its pad a byte; a refused one leaves nothing allocated.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "yolo/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void graph_v5lite(struct eb_head_graph *g)
{
    memset(g, 0, sizeof(*g));
    g->in_w = g->in_h = 320;
    g->n_outputs = 1;
    snprintf(g->out[0].name, sizeof(g->out[0].name), "output");
    g->out[0].rank = 3;
    g->out[0].shape[0] = 1;
    g->out[0].shape[1] = 6300;
    g->out[0].shape[2] = 85;
    g->out[0].ends = EB_HEAD_END_SIGMOID;
    g->graph_read = 1;
}

static void graph_nanodet(struct eb_head_graph *g)
{
    static const int64_t cells[3] = {2704, 676, 169};
    memset(g, 0, sizeof(*g));
    g->in_w = g->in_h = 416;
    g->n_outputs = 6;
    for (int i = 0; i < 6; i++) {
        snprintf(g->out[i].name, sizeof(g->out[i].name), "o%d", i);
        g->out[i].rank = 3;
        g->out[i].shape[0] = 1;
        g->out[i].shape[1] = cells[i % 3];
        g->out[i].shape[2] = i < 3 ? 80 : 32;
        g->out[i].ends = i < 3 ? EB_HEAD_END_SIGMOID : EB_HEAD_END_LAYER;
    }
    g->graph_read = 1;
}

static void check(const struct eb_head_graph *g, const struct eb_model_profile *p)
{
    struct eb_head_output ho[EB_HEAD_GRAPH_MAX_OUT];
    struct eb_diag d = {0};
    for (int i = 0; i < g->n_outputs; i++)
        ho[i] = (struct eb_head_output){NULL, g->out[i].shape, g->out[i].rank};
    if (eb_head_check_outputs(&p->head, ho, (size_t)g->n_outputs, &d) != EB_OK) {
        fprintf(stderr, "fuzz_profile: a resolved head does not fit: %s\n", d.msg);
        abort();
    }
    for (int c = 0; c < 3; c++) {
        if (!(p->norm.std[c] > 0.0f)) {
            fprintf(stderr, "fuzz_profile: std %g accepted\n", (double)p->norm.std[c]);
            abort();
        }
    }
    if (p->norm.pad < 0 || p->norm.pad > 255) {
        fprintf(stderr, "fuzz_profile: pad %d accepted\n", p->norm.pad);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char text[65537];
    if (size > sizeof(text) - 1)
        size = sizeof(text) - 1;
    memcpy(text, data, size);
    text[size] = '\0';
    struct eb_head_graph g;
    for (int k = 0; k < 2; k++) {
        if (k == 0)
            graph_v5lite(&g);
        else
            graph_nanodet(&g);
        struct eb_profile_request req = {.file_text = text, .file_name = "fuzz.profile"};
        struct eb_model_profile p;
        struct eb_diag d = {0};
        if (eb_profile_resolve(&g, &req, &p, &d) == EB_OK) {
            check(&g, &p);
            eb_profile_fini(&p);
        }
    }
    return 0;
}
