/* Runner for EB_TEST cases: `test_x CASE` runs one case; `test_x` alone runs all in-process. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eb/status.h"
#include "eb_test.h"

#define MAX_TESTS 512

struct test_entry {
    const char *name;
    eb_test_fn fn;
};

/* The registry is filled by constructors before main runs; test binaries only. */
static struct test_entry registry[MAX_TESTS];
static size_t n_registered;
static char tmpdir_path[512];

void eb_test_register(const char *name, eb_test_fn fn)
{
    EB_ASSERT(n_registered < MAX_TESTS);
    registry[n_registered].name = name;
    registry[n_registered].fn = fn;
    n_registered++;
}

const char *eb_test_shared_data(void)
{
    const char *env = getenv("EB_SHARED_DATA");
    const char *p = env != NULL ? env : EB_SHARED_DATA_DEFAULT;
    struct stat sb;
    if (stat(p, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return NULL;
    return p;
}

void eb_test_write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        EB_FAIL("cannot open %s for writing", path);
    const int ok = fwrite(data, 1, n, f) == n;
    if (fclose(f) != 0 || !ok)
        EB_FAIL("cannot write %s", path);
}

uint8_t *eb_test_shared_file(const char *rel, size_t *len_out)
{
    const char *dir = eb_test_shared_data();
    char path[1024];
    if (dir == NULL)
        EB_SKIP("shared data folder absent");
    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    uint8_t *bytes = (uint8_t *)eb_test_read_file(path, len_out);
    if (bytes == NULL)
        EB_SKIP("%s is absent", path);
    return bytes;
}

static void remove_tree(const char *path)
{
    DIR *d = opendir(path);
    if (d != NULL) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char child[1024];
            snprintf(child, sizeof(child), "%s/%s", path, e->d_name);
            struct stat sb;
            if (lstat(child, &sb) == 0 && S_ISDIR(sb.st_mode))
                remove_tree(child);
            else
                unlink(child);
        }
        closedir(d);
    }
    rmdir(path);
}

static void cleanup_tmpdir(void)
{
    if (tmpdir_path[0] != '\0' && getenv("EB_KEEP_TMP") == NULL)
        remove_tree(tmpdir_path);
}

const char *eb_test_tmpdir(void)
{
    if (tmpdir_path[0] == '\0') {
        const char *base = getenv("TMPDIR");
        snprintf(tmpdir_path, sizeof(tmpdir_path), "%s/ebtest.XXXXXX", base ? base : "/tmp");
        if (mkdtemp(tmpdir_path) == NULL)
            EB_FAIL("cannot create a temporary directory");
        atexit(cleanup_tmpdir);
    }
    return tmpdir_path;
}

char *eb_test_read_file(const char *path, size_t *len_out)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    for (;;) {
        if (b == NULL)
            break;
        size_t r = fread(b + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0)
            break;
        if (n + 1 >= cap) {
            cap *= 2;
            char *nb = realloc(b, cap);
            if (nb == NULL) {
                free(b);
                b = NULL;
                break;
            }
            b = nb;
        }
    }
    fclose(f);
    if (b != NULL) {
        b[n] = '\0';
        if (len_out != NULL)
            *len_out = n;
    }
    return b;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < n_registered; i++)
            printf("%s\n", registry[i].name);
        return 0;
    }
    size_t ran = 0;
    for (size_t i = 0; i < n_registered; i++) {
        if (argc >= 2 && strcmp(argv[1], registry[i].name) != 0)
            continue;
        registry[i].fn();
        ran++;
    }
    if (ran == 0) {
        fprintf(stderr, "no test named '%s'\n", argc >= 2 ? argv[1] : "");
        return 1;
    }
    return 0;
}
