/*
 * Replays a libFuzzer corpus without libFuzzer: calls LLVMFuzzerTestOneInput once on every file
 * of the folders (or files) named on the command line, so that any compiler and every sanitizer
 * build checks that the corpus (including the inputs that once crashed) still loads cleanly.
 *
 *     fuzz_onnx_replay tests/fuzz/corpus/onnx --hostile ../shared/data/hostile '*.onnx'
 *
 * --hostile DIR PATTERNS: also the files of DIR whose names match one of the ','-separated shell
 * patterns; when DIR is absent or nothing matches, the line saying so is printed and the corpus
 * alone is replayed.
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

/* The hostile inputs of `dir` matching `patterns`: their count (0 when none, with the line
 * saying why), or -1 when one could not be read. */
static long replay_hostile(const char *dir, const char *patterns)
{
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        printf("hostile inputs: none replayed, %s is absent (the shared data folder)\n", dir);
        return 0;
    }
    long n = replay_dir(dir, patterns);
    if (n == 0)
        printf("hostile inputs: none in %s matches %s\n", dir, patterns);
    else if (n > 0)
        printf("replayed %ld hostile inputs of %s\n", n, dir);
    return n;
}

int main(int argc, char **argv)
{
    long total = 0;
    if (argc < 2 || strcmp(argv[1], "--hostile") == 0) {
        fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE... [--hostile DIR PATTERNS]\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        struct stat sb;
        long n;
        if (strcmp(argv[i], "--hostile") == 0) {
            if (i + 3 != argc) {
                fprintf(stderr, "usage: %s CORPUS... --hostile DIR 'PATTERN[,PATTERN...]'\n",
                        argv[0]);
                return 2;
            }
            if (replay_hostile(argv[i + 1], argv[i + 2]) < 0)
                return 1;
            break;
        }
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
        fprintf(stderr, "replay: no inputs found in the corpus\n");
        return 1;
    }
    printf("replayed %ld corpus inputs\n", total);
    return 0;
}
