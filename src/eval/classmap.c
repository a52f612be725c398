/*
 * Model class -> dataset category: by name, or from a class-map file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/classmap.h"
#include "eval/dataset_internal.h"

#define MAX_TOKEN 256

void eb_classmap_fini(struct eb_classmap *map)
{
    if (map == NULL)
        return;
    free(map->category);
    memset(map, 0, sizeof(*map));
}

static enum eb_status map_alloc(size_t n, struct eb_classmap *m, struct eb_diag *diag)
{
    memset(m, 0, sizeof(*m));
    m->category = malloc((n ? n : 1) * sizeof(*m->category));
    if (m->category == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to map the model's classes: out of memory");
    for (size_t i = 0; i < n; i++)
        m->category[i] = EB_CLASSMAP_NONE;
    m->n_classes = n;
    return EB_OK;
}

enum eb_status eb_classmap_by_name(const char *const *names, size_t n, const struct eb_dataset *ds,
                                   struct eb_classmap *map_out, struct eb_diag *diag)
{
    struct eb_classmap m;
    enum eb_status st = map_alloc(n, &m, diag);
    if (st != EB_OK)
        return st;
    for (size_t c = 0; c < n; c++) {
        for (size_t k = 0; names != NULL && names[c] != NULL && k < ds->n_cats; k++)
            if (eb_dataset__name_eq(names[c], ds->cats[k].name)) {
                m.category[c] = ds->cats[k].id;
                m.n_mapped++;
                break;
            }
    }
    *map_out = m;
    return EB_OK;
}

/* Trims blanks and one pair of matching quotes of [s, s+len) into out. 0 when too long. */
static int token(const char *s, size_t len, char *out)
{
    while (len > 0 && (*s == ' ' || *s == '\t')) {
        s++;
        len--;
    }
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
        len--;
    if (len >= 2 && (s[0] == '"' || s[0] == '\'') && s[len - 1] == s[0]) {
        s++;
        len -= 2;
    }
    if (len >= MAX_TOKEN)
        return 0;
    memcpy(out, s, len);
    out[len] = '\0';
    return 1;
}

/* A decimal integer (optional sign) filling the whole token. */
static int int_token(const char *t, long long *v)
{
    char *end = NULL;
    errno = 0;
    *v = strtoll(t, &end, 10);
    return end != t && *end == '\0' && errno == 0;
}

/* "a, b, c" of up to 12 entries. */
static void model_list(const char *const *names, size_t n, char *buf, size_t size)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && i < 12 && off < size; i++)
        off += (size_t)snprintf(buf + off, size - off, "%s%s", i ? ", " : "",
                                names && names[i] ? names[i] : "?");
    if (n > 12 && off < size)
        snprintf(buf + off, size - off, ", ...");
}

static void cat_list(const struct eb_dataset *ds, char *buf, size_t size)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < ds->n_cats && i < 12 && off < size; i++)
        off += (size_t)snprintf(buf + off, size - off, "%s%s=%lld", i ? ", " : "", ds->cats[i].name,
                                (long long)ds->cats[i].id);
    if (ds->n_cats > 12 && off < size)
        snprintf(buf + off, size - off, ", ...");
}

enum eb_status eb_classmap_parse(const char *text, const char *what, const char *const *names,
                                 size_t n, const struct eb_dataset *ds, struct eb_classmap *map_out,
                                 struct eb_diag *diag)
{
    struct eb_classmap m;
    enum eb_status st = map_alloc(n, &m, diag);
    if (st != EB_OK)
        return st;
    m.from_file = 1;
    const char *line = text;
    char lhs[MAX_TOKEN], rhs[MAX_TOKEN], list[400];
    for (size_t ln = 1; line != NULL && *line; ln++) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        const char *hash = memchr(line, '#', len);
        if (hash != NULL)
            len = (size_t)(hash - line);
        const char *eq = memchr(line, '=', len);
        size_t blank = 0;
        while (blank < len && strchr(" \t\r", line[blank]) != NULL)
            blank++;
        if (blank == len) {
            line = eol ? eol + 1 : NULL;
            continue;
        }
        if (eq == NULL || !token(line, (size_t)(eq - line), lhs) ||
            !token(eq + 1, len - (size_t)(eq + 1 - line), rhs) || lhs[0] == '\0' ||
            rhs[0] == '\0') {
            st = eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                              "class map %s line %zu: expected `model_class = dataset_class` "
                              "(names or numbers); fix the line",
                              what, ln);
            goto fail;
        }
        long cls = -1;
        for (size_t c = 0; c < n && cls < 0; c++)
            if (names != NULL && names[c] != NULL && eb_dataset__name_eq(names[c], lhs))
                cls = (long)c;
        long long v;
        if (cls < 0 && int_token(lhs, &v) && v >= 0 && (unsigned long long)v < n)
            cls = (long)v;
        if (cls < 0) {
            model_list(names, n, list, sizeof(list));
            st = eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                              "class map %s line %zu: '%s' is not a class of the model; use one "
                              "of its %zu class names (%s) or an index 0..%zu",
                              what, ln, lhs, n, list, n ? n - 1 : 0);
            goto fail;
        }
        const struct eb_dataset_category *cat = NULL;
        for (size_t k = 0; k < ds->n_cats && cat == NULL; k++)
            if (eb_dataset__name_eq(ds->cats[k].name, rhs))
                cat = &ds->cats[k];
        if (cat == NULL && int_token(rhs, &v))
            cat = eb_dataset_category_find(ds, (int64_t)v);
        if (cat == NULL) {
            cat_list(ds, list, sizeof(list));
            st = eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                              "class map %s line %zu: '%s' is not a class of the dataset; use a "
                              "category name or id (%s)",
                              what, ln, rhs, list);
            goto fail;
        }
        if (m.category[cls] != EB_CLASSMAP_NONE) {
            st = eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                              "class map %s line %zu: model class '%s' is mapped twice; keep one "
                              "line for it",
                              what, ln, lhs);
            goto fail;
        }
        m.category[cls] = cat->id;
        m.n_mapped++;
        line = eol ? eol + 1 : NULL;
    }
    *map_out = m;
    return EB_OK;
fail:
    eb_classmap_fini(&m);
    return st;
}

enum eb_status eb_classmap_read_file(const char *path, const char *const *names, size_t n,
                                     const struct eb_dataset *ds, struct eb_classmap *map_out,
                                     struct eb_diag *diag)
{
    char *text = NULL;
    size_t len = 0;
    enum eb_status st = eb_dataset__read_file(path, &text, &len, diag);
    if (st != EB_OK)
        return st;
    st = eb_classmap_parse(text, path, names, n, ds, map_out, diag);
    free(text);
    return st;
}
