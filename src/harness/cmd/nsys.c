/* nsys's cuda_gpu_kern_sum CSV into the top-kernels table (nsys.h). */
#include <stdlib.h>
#include <string.h>

#include "eb/number.h"
#include "harness/cmd/nsys.h"

#define MAX_FIELDS 16

/* Splits one CSV line (no newline) into fields, unquoting them in place in `buf`; the count. */
static size_t split(const char *line, size_t n, char *buf, char **fields)
{
    size_t nf = 0, o = 0, i = 0;
    while (nf < MAX_FIELDS) {
        fields[nf++] = buf + o;
        if (i < n && line[i] == '"') {
            for (i++; i < n; i++) {
                if (line[i] == '"' && i + 1 < n && line[i + 1] == '"')
                    buf[o++] = line[i++];
                else if (line[i] == '"')
                    break;
                else
                    buf[o++] = line[i];
            }
            i++; /* the closing quote */
        }
        while (i < n && line[i] != ',')
            buf[o++] = line[i++];
        buf[o++] = '\0';
        if (i >= n)
            break;
        i++; /* the comma */
    }
    return nf;
}

static int column(char **fields, size_t nf, const char *name)
{
    for (size_t i = 0; i < nf; i++)
        if (strcmp(fields[i], name) == 0)
            return (int)i;
    return -1;
}

enum eb_status eb_nsys_kern_sum_parse(const char *text, size_t len, struct eb_kernel_stat *top,
                                      size_t max_top, size_t *n_top_out, struct eb_diag *diag)
{
    char *buf = malloc(len + MAX_FIELDS + 1);
    struct eb_kernel_stat *all = NULL;
    size_t n_all = 0, cap = 0;
    enum eb_status st = EB_ERR_NOMEM;
    if (buf == NULL)
        return eb_diag_fail(diag, st, "out of memory for nsys's kernel summary");
    int c_total = -1, c_calls = -1, c_name = -1, lineno = 0;
    for (size_t p = 0; p < len;) {
        const char *line = text + p;
        size_t n = 0;
        while (p + n < len && text[p + n] != '\n')
            n++;
        p += n + 1;
        lineno++;
        while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == ' '))
            n--;
        if (n == 0)
            continue;
        char *f[MAX_FIELDS];
        const size_t nf = split(line, n, buf, f);
        if (c_name < 0) { /* before the header */
            c_total = column(f, nf, "Total Time (ns)");
            c_calls = column(f, nf, "Instances");
            c_name = column(f, nf, "Name");
            if (c_total < 0 || c_calls < 0 || c_name < 0)
                c_name = -1;
            continue;
        }
        double total = 0;
        long long calls = 0;
        const int maxc = c_total > c_calls ? (c_total > c_name ? c_total : c_name)
                                           : (c_calls > c_name ? c_calls : c_name);
        if ((int)nf <= maxc || eb_number_parse_real(f[c_total], &total) != EB_NUMBER_OK ||
            eb_number_parse_int(f[c_calls], &calls) != EB_NUMBER_OK || total < 0 || calls < 0) {
            st = eb_diag_fail(diag, EB_ERR_FORMAT,
                              "nsys kernel summary line %d: expected the time, instances and "
                              "name of a kernel",
                              lineno);
            goto out;
        }
        if (n_all == cap) {
            cap = cap ? cap * 2 : 64;
            struct eb_kernel_stat *na = realloc(all, cap * sizeof(*na));
            if (na == NULL) {
                st = eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory for nsys's kernel summary");
                goto out;
            }
            all = na;
        }
        struct eb_kernel_stat *k = &all[n_all++];
        memset(k, 0, sizeof(*k));
        snprintf(k->name, sizeof(k->name), "%s", f[c_name]);
        k->calls = (uint64_t)calls;
        k->total_ms = total / 1e6;
    }
    if (c_name < 0) {
        st = eb_diag_fail(diag, EB_ERR_FORMAT,
                          "nsys kernel summary: no header with \"Total Time (ns)\", \"Instances\" "
                          "and \"Name\"");
        goto out;
    }
    eb_kernel_stats_rank(all, n_all, top, max_top, n_top_out);
    st = EB_OK;
out:
    free(all);
    free(buf);
    return st;
}
