/*
 * The "names" metadata parser shared by the backends (moved from ort_backend.c). A hand-written
 * scanner rather than a JSON library: Ultralytics writes a Python dict literal, not JSON.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/common/names.h"

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

struct names_acc {
    char **by_id; /* index = class id; NULL = gap */
    size_t n;     /* max id + 1 */
    size_t cap;
};

static void names_acc_free(struct names_acc *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->by_id[i]);
    free(a->by_id);
    memset(a, 0, sizeof(*a));
}

/* Stores `name` (ownership taken) under `id`; the last of duplicate ids wins. 0 on success. */
static int names_acc_put(struct names_acc *a, long id, char *name)
{
    if (id < 0 || id > EB_BACKEND_NAMES_MAX_ID) {
        free(name);
        return -1;
    }
    size_t need = (size_t)id + 1;
    if (need > a->cap) {
        size_t cap = a->cap ? a->cap : 128;
        while (cap < need)
            cap *= 2;
        char **nb = realloc(a->by_id, cap * sizeof(*nb));
        if (nb == NULL) {
            free(name);
            return -1;
        }
        memset(nb + a->cap, 0, (cap - a->cap) * sizeof(*nb));
        a->by_id = nb;
        a->cap = cap;
    }
    free(a->by_id[id]);
    a->by_id[id] = name;
    if (need > a->n)
        a->n = need;
    return 0;
}

static const char *skip_ws(const char *s)
{
    while (*s != '\0' && isspace((unsigned char)*s))
        s++;
    return s;
}

static int hex_value(const char *s, int digits, unsigned long *out)
{
    unsigned long v = 0;
    for (int i = 0; i < digits; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        v = v * 16 + (unsigned long)d;
    }
    *out = v;
    return 0;
}

/* Appends code point `cp` as UTF-8; `b` has room (callers reserve 4 bytes). */
static size_t put_utf8(char *b, unsigned long cp)
{
    if (cp < 0x80) {
        b[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        b[0] = (char)(0xC0 | (cp >> 6));
        b[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        b[0] = (char)(0xE0 | (cp >> 12));
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    if (cp > 0x10FFFF)
        cp = 0xFFFD;
    b[0] = (char)(0xF0 | (cp >> 18));
    b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    b[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/*
 * Parses a Python or JSON string literal at *sp ('...' or "..." with backslash escapes, \xNN,
 * \uNNNN, \UNNNNNNNN). On success *out is a malloc'd string and *sp points past the closing quote.
 */
static int parse_quoted(const char **sp, char **out)
{
    const char *s = *sp;
    char q = *s;
    if (q != '\'' && q != '"')
        return -1;
    s++;
    const char *end = strchr(s, q);
    size_t cap = (end != NULL ? (size_t)(end - s) : strlen(s)) + 8, n = 0;
    char *b = malloc(cap);
    if (b == NULL)
        return -1;
    while (*s != '\0' && *s != q) {
        if (n + 5 > cap) {
            cap = cap * 2 + 8;
            char *nb = realloc(b, cap);
            if (nb == NULL)
                break;
            b = nb;
        }
        if (*s != '\\') { /* bytes outside escapes are copied: the metadata is UTF-8 already */
            b[n++] = *s++;
            continue;
        }
        s++;
        if (*s == '\0')
            break;
        int digits = *s == 'x' ? 2 : *s == 'u' ? 4 : *s == 'U' ? 8 : 0;
        if (digits > 0) {
            unsigned long cp = 0;
            if (hex_value(s + 1, digits, &cp) != 0)
                break;
            n += put_utf8(b + n, cp);
            s += digits + 1;
        } else {
            b[n++] = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s;
            s++;
        }
    }
    if (*s != q) {
        free(b);
        return -1;
    }
    b[n] = '\0';
    *sp = s + 1;
    *out = b;
    return 0;
}

/* A class id: 12 or '12' or "12". */
static int parse_key(const char **sp, long *id)
{
    const char *s = *sp;
    char *quoted = NULL;
    const char *digits = s;
    if (*s == '\'' || *s == '"') {
        if (parse_quoted(&s, &quoted) != 0)
            return -1;
        digits = quoted;
    }
    if (!isdigit((unsigned char)*digits)) {
        free(quoted);
        return -1;
    }
    char *endp = NULL;
    errno = 0;
    long v = strtol(digits, &endp, 10);
    int bad = errno != 0 || endp == digits || (quoted != NULL && *endp != '\0');
    if (quoted == NULL)
        s = endp;
    free(quoted);
    if (bad)
        return -1;
    *id = v;
    *sp = s;
    return 0;
}

/*
 * Parses the "names" metadata: a Python dict literal as Ultralytics writes it
 * ({0: 'person', 1: 'bicycle'}), the same with double quotes or JSON string keys, or a JSON list
 * (["person", "bicycle"]). 0 on success, with every gap filled with "class<N>".
 */
static int parse_names(const char *text, struct names_acc *a)
{
    const char *s = skip_ws(text);
    int is_dict = *s == '{';
    char close = is_dict ? '}' : ']';
    if (*s != '{' && *s != '[')
        return -1;
    s = skip_ws(s + 1);
    long next_id = 0;
    while (*s != close) {
        long id = next_id;
        if (is_dict) {
            if (parse_key(&s, &id) != 0)
                return -1;
            s = skip_ws(s);
            if (*s != ':')
                return -1;
            s = skip_ws(s + 1);
        }
        char *name = NULL;
        if (parse_quoted(&s, &name) != 0 || names_acc_put(a, id, name) != 0)
            return -1;
        next_id = id + 1;
        s = skip_ws(s);
        if (*s == ',')
            s = skip_ws(s + 1);
        else if (*s != close)
            return -1;
    }
    if (*skip_ws(s + 1) != '\0' || a->n == 0)
        return -1;
    for (size_t i = 0; i < a->n; i++) {
        if (a->by_id[i] == NULL) {
            char gap[32];
            snprintf(gap, sizeof(gap), "class%zu", i);
            if ((a->by_id[i] = dup_str(gap)) == NULL)
                return -1;
        }
    }
    return 0;
}

void eb_backend__names_free(char **names, size_t n)
{
    if (names == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

enum eb_status eb_backend__parse_names(const char *text, char ***names_out, size_t *n_out,
                                       struct eb_diag *diag)
{
    struct names_acc acc = {0};
    if (text == NULL || parse_names(text, &acc) != 0) {
        names_acc_free(&acc);
        return eb_diag_fail(diag, EB_ERR_FORMAT,
                            "failed to parse the class names \"%.60s\": not a dict or list of "
                            "quoted names",
                            text != NULL ? text : "");
    }
    *names_out = acc.by_id;
    *n_out = acc.n;
    return EB_OK;
}
