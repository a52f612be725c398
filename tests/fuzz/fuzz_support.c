/* Helpers of the file-reading libFuzzer targets (fuzz_support.h). */
#define _XOPEN_SOURCE 700
#include "fuzz_support.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The process's temporary folder: test-only state, set once by eb_fuzz_tmpdir. */
static char tmp_root[512];

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path) != 0 ? -1 : 0;
}

static void remove_tmpdir(void)
{
    if (tmp_root[0] != '\0')
        (void)nftw(tmp_root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *eb_fuzz_tmpdir(void)
{
    if (tmp_root[0] == '\0') {
        const char *base = getenv("TMPDIR");
        if (base == NULL || base[0] == '\0')
            base = "/tmp";
        snprintf(tmp_root, sizeof(tmp_root), "%s/eb-fuzz-XXXXXX", base);
        if (mkdtemp(tmp_root) == NULL) {
            fprintf(stderr, "fuzz: cannot create a temporary folder in %s\n", base);
            abort();
        }
        atexit(remove_tmpdir);
    }
    return tmp_root;
}

void eb_fuzz_write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL || (n > 0 && fwrite(data, 1, n, f) != n) || fclose(f) != 0) {
        fprintf(stderr, "fuzz: cannot write %s\n", path);
        abort();
    }
}

void eb_fuzz_mkdir(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return;
    if (mkdir(path, 0700) != 0) {
        fprintf(stderr, "fuzz: cannot create %s\n", path);
        abort();
    }
}

static void put_le(uint8_t *p, uint32_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void eb_fuzz_write_bmp(const char *path, int w, int h)
{
    size_t stride = ((size_t)w * 3 + 3) & ~(size_t)3;
    size_t size = 54 + stride * (size_t)h;
    uint8_t *b = calloc(1, size);
    if (b == NULL)
        abort();
    b[0] = 'B';
    b[1] = 'M';
    put_le(b + 2, (uint32_t)size, 4);
    put_le(b + 10, 54, 4);
    put_le(b + 14, 40, 4);
    put_le(b + 18, (uint32_t)w, 4);
    put_le(b + 22, (uint32_t)h, 4);
    put_le(b + 26, 1, 2);
    put_le(b + 28, 24, 2);
    for (size_t i = 54; i < size; i++)
        b[i] = (uint8_t)(i * 7);
    eb_fuzz_write_file(path, b, size);
    free(b);
}

void eb_fuzz_split(const uint8_t *data, size_t size, char **a, size_t *a_len, char **b,
                   size_t *b_len)
{
    char *buf;
    const uint8_t *nul;
    if (size > EB_FUZZ_MAX_INPUT)
        size = EB_FUZZ_MAX_INPUT;
    buf = malloc(size + 2);
    if (buf == NULL)
        abort();
    if (size > 0)
        memcpy(buf, data, size);
    buf[size] = '\0';
    buf[size + 1] = '\0';
    nul = size > 0 ? memchr(data, 0, size) : NULL;
    *a = buf;
    *a_len = nul != NULL ? (size_t)(nul - data) : size;
    *b = nul != NULL ? buf + *a_len + 1 : NULL;
    *b_len = nul != NULL ? size - *a_len - 1 : 0;
}
