/*
 * The XML reader: a recursive descent over elements with a growable text buffer per element.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/xml.h"

struct parser {
    const char *p, *end;
    size_t line;
    struct eb_diag *diag;
};

struct buf {
    char *s;
    size_t len, cap;
};

static int buf_put(struct buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 32;
        while (nc < b->len + n + 1)
            nc *= 2;
        char *p = realloc(b->s, nc);
        if (p == NULL)
            return 0;
        b->s = p;
        b->cap = nc;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
    return 1;
}

static void node_fini(struct eb_xml_node *n)
{
    for (size_t i = 0; i < n->n_children; i++)
        node_fini(&n->children[i]);
    free(n->children);
    free(n->name);
    free(n->text);
}

void eb_xml_free(struct eb_xml_node *root)
{
    if (root == NULL)
        return;
    node_fini(root);
    free(root);
}

const struct eb_xml_node *eb_xml_child(const struct eb_xml_node *node, const char *name)
{
    if (node == NULL)
        return NULL;
    for (size_t i = 0; i < node->n_children; i++)
        if (strcmp(node->children[i].name, name) == 0)
            return &node->children[i];
    return NULL;
}

const char *eb_xml_text(const struct eb_xml_node *node)
{
    return node != NULL && node->text != NULL ? node->text : "";
}

static enum eb_status fail(struct parser *ps, const char *what)
{
    return eb_diag_fail(ps->diag, EB_ERR_FORMAT, "line %zu: %s", ps->line, what);
}

static enum eb_status nomem(struct parser *ps)
{
    return eb_diag_fail(ps->diag, EB_ERR_NOMEM, "out of memory while reading XML");
}

/* Advances over n bytes, counting lines. */
static void skip(struct parser *ps, size_t n)
{
    for (size_t i = 0; i < n && ps->p < ps->end; i++, ps->p++)
        if (*ps->p == '\n')
            ps->line++;
}

static int starts(const struct parser *ps, const char *s)
{
    size_t n = strlen(s);
    return (size_t)(ps->end - ps->p) >= n && memcmp(ps->p, s, n) == 0;
}

/* Skips to just after `term`; 0 when the input ends first. */
static int skip_past(struct parser *ps, const char *term)
{
    size_t n = strlen(term);
    while ((size_t)(ps->end - ps->p) >= n) {
        if (memcmp(ps->p, term, n) == 0) {
            skip(ps, n);
            return 1;
        }
        skip(ps, 1);
    }
    return 0;
}

static int is_name_char(char c)
{
    return c != '\0' && strchr(" \t\r\n/>=<\"'", c) == NULL;
}

/* Appends text with the predefined entities and small numeric references decoded. */
static int put_text(struct buf *b, const char *s, size_t n)
{
    static const struct {
        const char *ent;
        char c;
    } ents[] = {{"&lt;", '<'}, {"&gt;", '>'}, {"&amp;", '&'}, {"&quot;", '"'}, {"&apos;", '\''}};
    size_t i = 0;
    while (i < n) {
        if (s[i] == '&') {
            int done = 0;
            for (size_t e = 0; e < sizeof(ents) / sizeof(ents[0]) && !done; e++) {
                size_t el = strlen(ents[e].ent);
                if (n - i >= el && memcmp(s + i, ents[e].ent, el) == 0) {
                    if (!buf_put(b, &ents[e].c, 1))
                        return 0;
                    i += el;
                    done = 1;
                }
            }
            if (!done && n - i >= 4 && s[i + 1] == '#') {
                int hex = s[i + 2] == 'x' || s[i + 2] == 'X';
                char *end = NULL;
                char tmp[16];
                size_t tl = n - i - 2 - (size_t)hex < sizeof(tmp) - 1 ? n - i - 2 - (size_t)hex
                                                                      : sizeof(tmp) - 1;
                memcpy(tmp, s + i + 2 + hex, tl);
                tmp[tl] = '\0';
                long v = strtol(tmp, &end, hex ? 16 : 10);
                if (end != tmp && *end == ';' && v > 0 && v < 128) {
                    char c = (char)v;
                    if (!buf_put(b, &c, 1))
                        return 0;
                    i += 2 + (size_t)hex + (size_t)(end - tmp) + 1;
                    done = 1;
                }
            }
            if (done)
                continue;
        }
        if (!buf_put(b, s + i, 1))
            return 0;
        i++;
    }
    return 1;
}

/* Trims blanks in place. */
static void trim(char *s)
{
    size_t n = strlen(s), a = 0;
    while (a < n && strchr(" \t\r\n", s[a]) != NULL)
        a++;
    while (n > a && strchr(" \t\r\n", s[n - 1]) != NULL)
        n--;
    memmove(s, s + a, n - a);
    s[n - a] = '\0';
}

/* Skips a tag's attributes up to '>' (quoted values may hold '>'). Sets *self_closing. */
static enum eb_status skip_attrs(struct parser *ps, int *self_closing)
{
    *self_closing = 0;
    while (ps->p < ps->end) {
        char c = *ps->p;
        if (c == '"' || c == '\'') {
            skip(ps, 1);
            while (ps->p < ps->end && *ps->p != c)
                skip(ps, 1);
            if (ps->p == ps->end)
                break;
        } else if (c == '>') {
            *self_closing = ps->p[-1] == '/';
            skip(ps, 1);
            return EB_OK;
        }
        skip(ps, 1);
    }
    return fail(ps, "a tag is not closed with '>'; the file is cut short");
}

static enum eb_status parse_content(struct parser *ps, struct eb_xml_node *node, int depth);

/* Parses the element whose '<' is at ps->p into a new child of `parent`. */
static enum eb_status parse_element(struct parser *ps, struct eb_xml_node *parent, int depth)
{
    if (depth >= EB_XML_MAX_DEPTH)
        return fail(ps, "elements nest too deep");
    skip(ps, 1); /* '<' */
    const char *name = ps->p;
    while (ps->p < ps->end && is_name_char(*ps->p))
        skip(ps, 1);
    size_t name_len = (size_t)(ps->p - name);
    if (name_len == 0)
        return fail(ps, "'<' is not followed by an element name");
    if (parent->n_children == parent->cap_children) {
        size_t nc = parent->cap_children ? parent->cap_children * 2 : 4;
        struct eb_xml_node *p = realloc(parent->children, nc * sizeof(*p));
        if (p == NULL)
            return nomem(ps);
        parent->children = p;
        parent->cap_children = nc;
    }
    struct eb_xml_node *node = &parent->children[parent->n_children];
    memset(node, 0, sizeof(*node));
    parent->n_children++;
    node->name = malloc(name_len + 1);
    if (node->name == NULL)
        return nomem(ps);
    memcpy(node->name, name, name_len);
    node->name[name_len] = '\0';
    int self_closing = 0;
    enum eb_status st = skip_attrs(ps, &self_closing);
    if (st != EB_OK || self_closing)
        return st;
    return parse_content(ps, node, depth + 1);
}

/* Parses character data and child elements up to the end tag of `node` (or the end of input
 * for the document node). */
static enum eb_status parse_content(struct parser *ps, struct eb_xml_node *node, int depth)
{
    struct buf text = {0};
    enum eb_status st = EB_OK;
    int is_doc = node->name[0] == '\0';
    for (;;) {
        const char *start = ps->p;
        while (ps->p < ps->end && *ps->p != '<')
            skip(ps, 1);
        if (ps->p > start && !put_text(&text, start, (size_t)(ps->p - start))) {
            st = nomem(ps);
            break;
        }
        if (ps->p == ps->end) {
            if (!is_doc) {
                char msg[160];
                snprintf(msg, sizeof(msg), "element <%.100s> is not closed", node->name);
                st = fail(ps, msg);
            }
            break;
        }
        if (starts(ps, "<!--")) {
            if (!skip_past(ps, "-->")) {
                st = fail(ps, "a comment is not closed with -->");
                break;
            }
        } else if (starts(ps, "<![CDATA[")) {
            skip(ps, 9);
            const char *c0 = ps->p;
            if (!skip_past(ps, "]]>")) {
                st = fail(ps, "a CDATA section is not closed with ]]>");
                break;
            }
            if (!buf_put(&text, c0, (size_t)(ps->p - 3 - c0))) {
                st = nomem(ps);
                break;
            }
        } else if (starts(ps, "<?") || starts(ps, "<!")) {
            if (!skip_past(ps, ">")) {
                st = fail(ps, "a declaration is not closed with '>'");
                break;
            }
        } else if (starts(ps, "</")) {
            skip(ps, 2);
            const char *name = ps->p;
            while (ps->p < ps->end && is_name_char(*ps->p))
                skip(ps, 1);
            size_t nl = (size_t)(ps->p - name);
            if (is_doc || nl != strlen(node->name) || memcmp(name, node->name, nl) != 0) {
                char msg[240];
                snprintf(msg, sizeof(msg), "</%.*s> does not close <%.100s>",
                         (int)(nl < 100 ? nl : 100), name, is_doc ? "(none)" : node->name);
                st = fail(ps, msg);
                break;
            }
            if (!skip_past(ps, ">")) {
                st = fail(ps, "a closing tag is not closed with '>'");
                break;
            }
            break;
        } else {
            st = parse_element(ps, node, depth);
            if (st != EB_OK)
                break;
        }
    }
    if (st == EB_OK && text.s != NULL) {
        trim(text.s);
        node->text = text.s;
        text.s = NULL;
    }
    free(text.s);
    return st;
}

enum eb_status eb_xml_parse(const char *text, size_t len, struct eb_xml_node **root_out,
                            struct eb_diag *diag)
{
    struct parser ps = {.p = text, .end = text + len, .line = 1, .diag = diag};
    struct eb_xml_node *root = calloc(1, sizeof(*root));
    if (root == NULL || (root->name = calloc(1, 1)) == NULL) {
        free(root);
        return eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory while reading XML");
    }
    enum eb_status st = parse_content(&ps, root, 0);
    if (st != EB_OK) {
        eb_xml_free(root);
        return st;
    }
    *root_out = root;
    return EB_OK;
}
