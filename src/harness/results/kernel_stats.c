/* The top-kernels table (result.h, struct eb_kernel_stat): ranking by total GPU time. */
#include <stdlib.h>
#include <string.h>

#include "harness/results/result.h"

static int by_total_desc(const void *a, const void *b)
{
    const struct eb_kernel_stat *x = a, *y = b;
    if (x->total_ms != y->total_ms)
        return x->total_ms < y->total_ms ? 1 : -1;
    return strcmp(x->name, y->name);
}

void eb_kernel_stats_rank(struct eb_kernel_stat *all, size_t n, struct eb_kernel_stat *top,
                          size_t max_top, size_t *n_top_out)
{
    double total = 0;
    for (size_t i = 0; i < n; i++)
        total += all[i].total_ms;
    for (size_t i = 0; i < n; i++)
        all[i].share_pct = total > 0 ? 100.0 * all[i].total_ms / total : 0.0;
    const size_t k = n < max_top ? n : max_top;
    if (k > 0) { /* (all may be NULL when n is 0) */
        qsort(all, n, sizeof(*all), by_total_desc);
        memcpy(top, all, k * sizeof(*top));
    }
    *n_top_out = k;
}
