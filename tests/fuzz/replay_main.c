/*
 * Replays a libFuzzer corpus without libFuzzer: calls LLVMFuzzerTestOneInput once on every file
 * of the folders (or files) named on the command line, so that any compiler and every sanitizer
 * build checks that the corpus (including the inputs that once crashed) still loads cleanly.
 *
 *     fuzz_onnx_replay tests/fuzz/corpus/onnx
 *     fuzz_onnx_replay --hostile ../shared/data/hostile '*.onnx'
 *
 * --hostile DIR PATTERNS: the files of DIR whose names match one of the ','-separated shell
 * patterns; exit 77 (skipped, with the reason printed) when DIR is absent or nothing matches.
 */
#include <dirent.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    struct stat sb;
    uint8_t *buf;
    size_t n;
    if (f == NULL || fstat(fileno(f), &sb) != 0 || sb.st_size < 0) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        if (f != NULL)
            fclose(f);
        return -1;
    }
    /* One spare byte so that an empty file still has a valid pointer. */
    buf = malloc((size_t)sb.st_size + 1);
    if (buf == NULL) {
        fclose(f);
        fprintf(stderr, "replay: out of memory for %s\n", path);
        return -1;
    }
    n = fread(buf, 1, (size_t)sb.st_size, f);
    fclose(f);
    if (n != (size_t)sb.st_size) {
        free(buf);
        fprintf(stderr, "replay: short read of %s\n", path);
        return -1;
    }
    (void)LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* 1 when `name` matches one of the ','-separated shell patterns in `patterns` (NULL: all). */
static int matches(const char *name, const char *patterns)
{
    char pat[256];
    const char *p = patterns;
    if (patterns == NULL)
        return 1;
    while (*p != '\0') {
        size_t n = strcspn(p, ",");
        if (n > 0 && n < sizeof(pat)) {
            memcpy(pat, p, n);
            pat[n] = '\0';
            if (fnmatch(pat, name, 0) == 0)
                return 1;
        }
        p += n + (p[n] == ',');
    }
    return 0;
}

/* Replays every regular file of `dir` whose name matches `patterns` (NULL: all), in name
   order; the number replayed, or -1. */
static long replay_dir(const char *dir, const char *patterns)
{
    DIR *dp = opendir(dir);
    struct dirent *ent;
    char **names = NULL;
    size_t n = 0, cap = 0;
    long done = 0;
    if (dp == NULL)
        return -1;
    while ((ent = readdir(dp)) != NULL) {
        if (ent->d_name[0] == '.' || !matches(ent->d_name, patterns))
            continue;
        if (n == cap) {
            size_t ncap = cap ? 2 * cap : 64;
            char **p = realloc(names, ncap * sizeof(*p));
            if (p == NULL)
                break;
            names = p;
            cap = ncap;
        }
        names[n] = malloc(strlen(dir) + strlen(ent->d_name) + 2);
        if (names[n] == NULL)
            break;
        snprintf(names[n], strlen(dir) + strlen(ent->d_name) + 2, "%s/%s", dir, ent->d_name);
        n++;
    }
    closedir(dp);
    if (n > 0)
        qsort(names, n, sizeof(*names), by_name);
    for (size_t i = 0; i < n; i++) {
        struct stat sb;
        if (done >= 0 && stat(names[i], &sb) == 0 && S_ISREG(sb.st_mode)) {
            if (replay_file(names[i]) != 0)
                done = -1;
            else
                done++;
        }
        free(names[i]);
    }
    free(names);
    return done;
}

int main(int argc, char **argv)
{
    long total = 0;
    if (argc < 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE... | --hostile DIR PATTERNS\n", argv[0]);
        return 2;
    }
    if (strcmp(argv[1], "--hostile") == 0) {
        struct stat sb;
        long n;
        if (argc != 4) {
            fprintf(stderr, "usage: %s --hostile DIR 'PATTERN[,PATTERN...]'\n", argv[0]);
            return 2;
        }
        if (stat(argv[2], &sb) != 0 || !S_ISDIR(sb.st_mode)) {
            printf("skipped: %s is absent (the shared data folder's hostile inputs)\n", argv[2]);
            return 77;
        }
        n = replay_dir(argv[2], argv[3]);
        if (n < 0)
            return 1;
        if (n == 0) {
            printf("skipped: no file in %s matches %s\n", argv[2], argv[3]);
            return 77;
        }
        printf("replayed %ld hostile inputs\n", n);
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        struct stat sb;
        long n;
        if (stat(argv[i], &sb) != 0) {
            fprintf(stderr, "replay: %s does not exist\n", argv[i]);
            return 1;
        }
        n = S_ISDIR(sb.st_mode) ? replay_dir(argv[i], NULL) : (replay_file(argv[i]) == 0 ? 1 : -1);
        if (n < 0)
            return 1;
        total += n;
    }
    if (total == 0) {
        fprintf(stderr, "replay: no inputs found\n");
        return 1;
    }
    printf("replayed %ld inputs\n", total);
    return 0;
}
