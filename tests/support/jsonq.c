/* eb_jsonq FILE [PATH]: validates FILE as JSON (or each line with -l) and prints the value at
 * PATH: strings raw, numbers with %.17g, containers as their element count. Exit 1 when the
 * file does not parse, 2 when the path does not exist. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb/json.h"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 16, n = 0, r;
    char *b = malloc(cap);
    while (b != NULL && (r = fread(b + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            char *nb = realloc(b, cap * 2);
            if (nb == NULL) {
                free(b);
                b = NULL;
                break;
            }
            b = nb;
            cap *= 2;
        }
    }
    fclose(f);
    *len = n;
    return b;
}

static int print_value(const struct eb_json_value *v)
{
    switch (v->type) {
    case EB_JSON_NULL: puts("null"); break;
    case EB_JSON_BOOL: puts(v->num != 0 ? "true" : "false"); break;
    case EB_JSON_NUMBER: printf("%.17g\n", v->num); break;
    case EB_JSON_STRING: puts(v->str); break;
    case EB_JSON_ARRAY:
    case EB_JSON_OBJECT: printf("%zu\n", v->n); break;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int lines = argc > 1 && strcmp(argv[1], "-l") == 0;
    int a = lines ? 2 : 1;
    if (argc <= a) {
        fprintf(stderr, "usage: eb_jsonq [-l] FILE [PATH]\n");
        return 2;
    }
    size_t len = 0;
    char *text = slurp(argv[a], &len);
    if (text == NULL) {
        fprintf(stderr, "eb_jsonq: cannot read %s\n", argv[a]);
        return 1;
    }
    struct eb_diag diag = {0};
    int rc = 0;
    if (lines) {
        size_t start = 0, n = 0;
        for (size_t i = 0; i <= len && rc == 0; i++) {
            if (i == len || text[i] == '\n') {
                if (i > start) {
                    struct eb_json_value *v = NULL;
                    if (eb_json_parse(text + start, i - start, &v, &diag) != EB_OK) {
                        fprintf(stderr, "line %zu: %s\n", n + 1, diag.msg);
                        rc = 1;
                    }
                    eb_json_free(v);
                    n++;
                }
                start = i + 1;
            }
        }
        if (rc == 0)
            printf("%zu\n", n);
        free(text);
        return rc;
    }
    struct eb_json_value *root = NULL;
    if (eb_json_parse(text, len, &root, &diag) != EB_OK) {
        fprintf(stderr, "eb_jsonq: %s\n", diag.msg);
        free(text);
        return 1;
    }
    if (argc > a + 1) {
        const struct eb_json_value *v = eb_json_path(root, argv[a + 1]);
        if (v == NULL) {
            fprintf(stderr, "eb_jsonq: no %s\n", argv[a + 1]);
            rc = 2;
        } else {
            print_value(v);
        }
    }
    eb_json_free(root);
    free(text);
    return rc;
}
