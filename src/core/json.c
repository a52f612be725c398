#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eb/json.h"
#include "eb/utf8.h"

/* ---------------------------------------------------------------- writer */

static void put(struct eb_json_writer *w, const char *s, size_t n)
{
    if (w->error || n == 0)
        return;
    if (w->fp != NULL) {
        if (fwrite(s, 1, n, w->fp) != n)
            w->error = 1;
        return;
    }
    if (w->len + n + 1 > w->cap) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap < w->len + n + 1)
            cap *= 2;
        char *nb = realloc(w->buf, cap);
        if (nb == NULL) {
            w->error = 1;
            return;
        }
        w->buf = nb;
        w->cap = cap;
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    w->buf[w->len] = '\0';
}

static void puts_(struct eb_json_writer *w, const char *s)
{
    put(w, s, strlen(s));
}

static void newline_indent(struct eb_json_writer *w)
{
    if (!w->pretty)
        return;
    put(w, "\n", 1);
    for (int i = 0; i < w->depth; i++)
        put(w, "  ", 2);
}

/* Called before every value: writes the separating comma and indentation. */
static void before_value(struct eb_json_writer *w)
{
    if (w->after_key) {
        w->after_key = 0;
        return;
    }
    if (w->depth > 0) {
        if (w->need_comma[w->depth])
            put(w, ",", 1);
        w->need_comma[w->depth] = 1;
        newline_indent(w);
    }
}

void eb_json_writer_init_file(struct eb_json_writer *w, FILE *fp, int pretty)
{
    memset(w, 0, sizeof(*w));
    w->fp = fp;
    w->pretty = pretty;
}

void eb_json_writer_init_mem(struct eb_json_writer *w, int pretty)
{
    memset(w, 0, sizeof(*w));
    w->pretty = pretty;
}

char *eb_json_writer_take(struct eb_json_writer *w, size_t *len_out)
{
    if (w->error || w->fp != NULL) {
        eb_json_writer_fini(w);
        return NULL;
    }
    if (w->buf == NULL)
        put(w, "", 0), w->buf = calloc(1, 1);
    char *b = w->buf;
    if (len_out != NULL)
        *len_out = w->len;
    w->buf = NULL;
    w->len = w->cap = 0;
    return b;
}

void eb_json_writer_fini(struct eb_json_writer *w)
{
    free(w->buf);
    w->buf = NULL;
    w->len = w->cap = 0;
}

int eb_json_writer_error(const struct eb_json_writer *w)
{
    return w->error;
}

static void open_(struct eb_json_writer *w, const char *c)
{
    before_value(w);
    puts_(w, c);
    if (w->depth + 1 >= EB_JSON_MAX_DEPTH) {
        w->error = 1;
        return;
    }
    w->depth++;
    w->need_comma[w->depth] = 0;
}

static void close_(struct eb_json_writer *w, const char *c)
{
    if (w->depth <= 0) {
        w->error = 1;
        return;
    }
    int had = w->need_comma[w->depth];
    w->depth--;
    if (had)
        newline_indent(w);
    puts_(w, c);
}

void eb_json_obj_begin(struct eb_json_writer *w)
{
    open_(w, "{");
}
void eb_json_obj_end(struct eb_json_writer *w)
{
    close_(w, "}");
}
void eb_json_arr_begin(struct eb_json_writer *w)
{
    open_(w, "[");
}
void eb_json_arr_end(struct eb_json_writer *w)
{
    close_(w, "]");
}

static void write_string(struct eb_json_writer *w, const char *s)
{
    put(w, "\"", 1);
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned char c = *p;
        char esc[8];
        if (c == '"') {
            put(w, "\\\"", 2);
            p++;
            continue;
        }
        if (c == '\\') {
            put(w, "\\\\", 2);
            p++;
            continue;
        }
        if (c == '\n') {
            put(w, "\\n", 2);
            p++;
            continue;
        }
        if (c == '\r') {
            put(w, "\\r", 2);
            p++;
            continue;
        }
        if (c == '\t') {
            put(w, "\\t", 2);
            p++;
            continue;
        }
        if (c < 0x20) {
            snprintf(esc, sizeof(esc), "\\u%04x", c);
            put(w, esc, 6);
            p++;
            continue;
        }
        size_t n = eb_utf8_seq_len(p);
        if (n == 0) {
            put(w, "\xEF\xBF\xBD", 3);
            p++;
            continue;
        }
        put(w, (const char *)p, n);
        p += n;
    }
    put(w, "\"", 1);
}

void eb_json_key(struct eb_json_writer *w, const char *key)
{
    before_value(w);
    write_string(w, key);
    put(w, w->pretty ? ": " : ":", w->pretty ? 2 : 1);
    w->after_key = 1;
}

void eb_json_str(struct eb_json_writer *w, const char *s)
{
    if (s == NULL) {
        eb_json_null(w);
        return;
    }
    before_value(w);
    write_string(w, s);
}

void eb_json_num(struct eb_json_writer *w, double v)
{
    if (!isfinite(v)) {
        eb_json_null(w);
        return;
    }
    before_value(w);
    char b[40];
    /* Shortest of %.6g .. %.17g that round-trips keeps files small and exact. */
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(b, sizeof(b), "%.*g", prec, v);
        if (strtod(b, NULL) == v)
            break;
    }
    puts_(w, b);
}

void eb_json_int(struct eb_json_writer *w, int64_t v)
{
    before_value(w);
    char b[32];
    snprintf(b, sizeof(b), "%lld", (long long)v);
    puts_(w, b);
}

void eb_json_uint(struct eb_json_writer *w, uint64_t v)
{
    before_value(w);
    char b[32];
    snprintf(b, sizeof(b), "%llu", (unsigned long long)v);
    puts_(w, b);
}

void eb_json_bool(struct eb_json_writer *w, int v)
{
    before_value(w);
    puts_(w, v ? "true" : "false");
}

void eb_json_null(struct eb_json_writer *w)
{
    before_value(w);
    puts_(w, "null");
}

void eb_json_kstr(struct eb_json_writer *w, const char *key, const char *s)
{
    eb_json_key(w, key);
    eb_json_str(w, s);
}

void eb_json_knum(struct eb_json_writer *w, const char *key, double v)
{
    eb_json_key(w, key);
    eb_json_num(w, v);
}

void eb_json_kint(struct eb_json_writer *w, const char *key, int64_t v)
{
    eb_json_key(w, key);
    eb_json_int(w, v);
}

void eb_json_kbool(struct eb_json_writer *w, const char *key, int v)
{
    eb_json_key(w, key);
    eb_json_bool(w, v);
}

/* ---------------------------------------------------------------- reader */

struct parser {
    const char *s;
    size_t len, pos;
    int depth;
    struct eb_diag *diag;
};

static enum eb_status perr(struct parser *p, const char *what)
{
    return eb_diag_fail(p->diag, EB_ERR_FORMAT, "malformed JSON at byte %zu: %s", p->pos, what);
}

static void skip_ws(struct parser *p)
{
    while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
                               p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
        p->pos++;
}

static void free_value(struct eb_json_value *v)
{
    if (v == NULL)
        return;
    free(v->str);
    for (size_t i = 0; i < v->n; i++) {
        free_value(&v->items[i]);
        if (v->keys != NULL)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static enum eb_status parse_string(struct parser *p, char **out)
{
    p->pos++; /* opening quote */
    size_t cap = 16, n = 0;
    char *b = malloc(cap);
    if (b == NULL)
        return eb_diag_fail(p->diag, EB_ERR_NOMEM, "out of memory parsing JSON");
    for (;;) {
        if (p->pos >= p->len) {
            free(b);
            return perr(p, "unterminated string");
        }
        unsigned char c = (unsigned char)p->s[p->pos++];
        char enc[4];
        size_t en = 1;
        if (c == '"')
            break;
        if (c < 0x20) {
            free(b);
            return perr(p, "control character in string");
        }
        enc[0] = (char)c;
        if (c == '\\') {
            if (p->pos >= p->len) {
                free(b);
                return perr(p, "bad escape");
            }
            char e = p->s[p->pos++];
            switch (e) {
            case '"': enc[0] = '"'; break;
            case '\\': enc[0] = '\\'; break;
            case '/': enc[0] = '/'; break;
            case 'b': enc[0] = '\b'; break;
            case 'f': enc[0] = '\f'; break;
            case 'n': enc[0] = '\n'; break;
            case 'r': enc[0] = '\r'; break;
            case 't': enc[0] = '\t'; break;
            case 'u': {
                unsigned cp = 0;
                for (int i = 0; i < 4; i++) {
                    int h = p->pos < p->len ? hexval(p->s[p->pos]) : -1;
                    if (h < 0) {
                        free(b);
                        return perr(p, "bad \\u escape");
                    }
                    cp = cp * 16 + (unsigned)h;
                    p->pos++;
                }
                if (cp >= 0xD800 && cp <= 0xDFFF)
                    cp = 0xFFFD; /* surrogates are not paired up; replaced */
                if (cp < 0x80)
                    enc[0] = (char)cp, en = 1;
                else if (cp < 0x800)
                    enc[0] = (char)(0xC0 | (cp >> 6)), enc[1] = (char)(0x80 | (cp & 0x3F)), en = 2;
                else
                    enc[0] = (char)(0xE0 | (cp >> 12)), enc[1] = (char)(0x80 | ((cp >> 6) & 0x3F)),
                    enc[2] = (char)(0x80 | (cp & 0x3F)), en = 3;
                break;
            }
            default: free(b); return perr(p, "bad escape");
            }
        }
        if (n + en + 1 > cap) {
            cap *= 2;
            char *nb = realloc(b, cap);
            if (nb == NULL) {
                free(b);
                return eb_diag_fail(p->diag, EB_ERR_NOMEM, "out of memory parsing JSON");
            }
            b = nb;
        }
        memcpy(b + n, enc, en);
        n += en;
    }
    b[n] = '\0';
    *out = b;
    return EB_OK;
}

static enum eb_status parse_value(struct parser *p, struct eb_json_value *v);

static enum eb_status parse_container(struct parser *p, struct eb_json_value *v, int is_obj)
{
    enum eb_status st;
    size_t cap = 0;
    v->type = is_obj ? EB_JSON_OBJECT : EB_JSON_ARRAY;
    p->pos++;
    if (++p->depth > EB_JSON_MAX_DEPTH)
        return perr(p, "nesting too deep");
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == (is_obj ? '}' : ']')) {
        p->pos++;
        p->depth--;
        return EB_OK;
    }
    for (;;) {
        if (v->n == cap) {
            size_t nc = cap ? cap * 2 : 4;
            struct eb_json_value *ni = realloc(v->items, nc * sizeof(*ni));
            if (ni == NULL)
                return eb_diag_fail(p->diag, EB_ERR_NOMEM, "out of memory parsing JSON");
            v->items = ni;
            if (is_obj) {
                char **nk = realloc(v->keys, nc * sizeof(*nk));
                if (nk == NULL)
                    return eb_diag_fail(p->diag, EB_ERR_NOMEM, "out of memory parsing JSON");
                v->keys = nk;
            }
            cap = nc;
        }
        struct eb_json_value *item = &v->items[v->n];
        memset(item, 0, sizeof(*item));
        if (is_obj) {
            v->keys[v->n] = NULL;
            skip_ws(p);
            if (p->pos >= p->len || p->s[p->pos] != '"')
                return perr(p, "expected a key");
            st = parse_string(p, &v->keys[v->n]);
            if (st != EB_OK)
                return st;
            v->n++; /* counted now so that cleanup frees the key */
            skip_ws(p);
            if (p->pos >= p->len || p->s[p->pos] != ':')
                return perr(p, "expected ':'");
            p->pos++;
        } else {
            v->n++;
        }
        st = parse_value(p, item);
        if (st != EB_OK)
            return st;
        skip_ws(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == (is_obj ? '}' : ']')) {
            p->pos++;
            p->depth--;
            return EB_OK;
        }
        return perr(p, is_obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static enum eb_status parse_value(struct parser *p, struct eb_json_value *v)
{
    skip_ws(p);
    if (p->pos >= p->len)
        return perr(p, "unexpected end");
    char c = p->s[p->pos];
    if (c == '{')
        return parse_container(p, v, 1);
    if (c == '[')
        return parse_container(p, v, 0);
    if (c == '"') {
        v->type = EB_JSON_STRING;
        return parse_string(p, &v->str);
    }
    static const struct {
        const char *lit;
        enum eb_json_type t;
        double num;
    } lits[] = {{"true", EB_JSON_BOOL, 1}, {"false", EB_JSON_BOOL, 0}, {"null", EB_JSON_NULL, 0}};
    for (size_t i = 0; i < EB_ARRAY_LEN(lits); i++) {
        size_t n = strlen(lits[i].lit);
        if (p->len - p->pos >= n && memcmp(p->s + p->pos, lits[i].lit, n) == 0) {
            v->type = lits[i].t;
            v->num = lits[i].num;
            p->pos += n;
            return EB_OK;
        }
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        char buf[64];
        size_t n = 0;
        while (p->pos + n < p->len && n < sizeof(buf) - 1 &&
               strchr("+-0123456789.eE", p->s[p->pos + n]) != NULL) {
            buf[n] = p->s[p->pos + n];
            n++;
        }
        buf[n] = '\0';
        char *end = NULL;
        v->num = strtod(buf, &end);
        if (end != buf + n || n == 0)
            return perr(p, "bad number");
        v->type = EB_JSON_NUMBER;
        p->pos += n;
        return EB_OK;
    }
    return perr(p, "unexpected character");
}

enum eb_status eb_json_parse(const char *text, size_t len, struct eb_json_value **root_out,
                             struct eb_diag *diag)
{
    struct parser p = {.s = text, .len = len, .pos = 0, .depth = 0, .diag = diag};
    struct eb_json_value *root = calloc(1, sizeof(*root));
    if (root == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory parsing JSON");
    enum eb_status st = parse_value(&p, root);
    if (st == EB_OK) {
        skip_ws(&p);
        if (p.pos != p.len)
            st = perr(&p, "trailing characters");
    }
    if (st != EB_OK) {
        eb_json_free(root);
        return st;
    }
    *root_out = root;
    return EB_OK;
}

void eb_json_free(struct eb_json_value *root)
{
    if (root == NULL)
        return;
    free_value(root);
    free(root);
}

const struct eb_json_value *eb_json_get(const struct eb_json_value *obj, const char *key)
{
    if (obj == NULL || obj->type != EB_JSON_OBJECT)
        return NULL;
    for (size_t i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0)
            return &obj->items[i];
    return NULL;
}

const struct eb_json_value *eb_json_path(const struct eb_json_value *root, const char *path)
{
    const struct eb_json_value *v = root;
    char seg[128];
    while (v != NULL && *path) {
        size_t n = strcspn(path, "/");
        if (n >= sizeof(seg))
            return NULL;
        memcpy(seg, path, n);
        seg[n] = '\0';
        path += n;
        if (*path == '/')
            path++;
        if (v->type == EB_JSON_ARRAY) {
            char *end = NULL;
            unsigned long idx = strtoul(seg, &end, 10);
            if (end == seg || *end != '\0' || idx >= v->n)
                return NULL;
            v = &v->items[idx];
        } else {
            v = eb_json_get(v, seg);
        }
    }
    return v;
}
