/*
 * Helpers shared by the libFuzzer targets that read files from disk (the dataset readers): one
 * temporary folder per process, created on first use and removed when the process exits.
 */
#ifndef EB_FUZZ_SUPPORT_H
#define EB_FUZZ_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

/* The largest input a target looks at: longer ones are cut (keeps every execution fast). */
#define EB_FUZZ_MAX_INPUT ((size_t)64 << 10)

/**
 * This process's temporary folder ($TMPDIR or /tmp, "eb-fuzz-XXXXXX"), created on the first
 * call and removed with its contents at exit. Aborts when it cannot be made: a target that
 * cannot run must not look clean.
 */
const char *eb_fuzz_tmpdir(void);

/** Writes `n` bytes to `path` (replacing it); aborts on failure. */
void eb_fuzz_write_file(const char *path, const void *data, size_t n);

/** Creates folder `path` when absent; aborts on failure. */
void eb_fuzz_mkdir(const char *path);

/** Writes a `w` x `h` 24-bit BMP (a gray ramp) to `path`; aborts on failure. */
void eb_fuzz_write_bmp(const char *path, int w, int h);

/**
 * Splits `data` (cut to EB_FUZZ_MAX_INPUT) at its first NUL byte: the part before goes to *a
 * (*a_len bytes), the part after to *b (*b_len bytes; NULL when there is no NUL). Both are
 * NUL-terminated and come from one malloc'd block that the caller frees with free(*a). Aborts on
 * out of memory.
 */
void eb_fuzz_split(const uint8_t *data, size_t size, char **a, size_t *a_len, char **b,
                   size_t *b_len);

#endif
