/*
 * SHA-256 (FIPS 180-4), for fingerprints in the run history: the model files and the
 * environment. Streaming: init, update any number of times, final.
 *
 *     struct eb_sha256 h;
 *     eb_sha256_init(&h);
 *     eb_sha256_update(&h, bytes, len);
 *     char hex[EB_SHA256_HEX_SIZE];
 *     eb_sha256_final_hex(&h, hex);
 */
#ifndef EB_SHA256_H
#define EB_SHA256_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "eb/diag.h"

#define EB_SHA256_HEX_SIZE 65 /* 64 hex digits and the NUL */

/** Hashing state; caller-owned, no heap. */
struct eb_sha256 {
    uint32_t h[8];
    uint64_t bytes;    /* message length so far */
    uint8_t block[64]; /* pending input */
    size_t fill;       /* bytes in block */
};

/** Starts a hash in `s` (caller-owned). */
void eb_sha256_init(struct eb_sha256 *s);
/** Adds `len` bytes (`data` may be NULL when len is 0; not kept after the call). */
void eb_sha256_update(struct eb_sha256 *s, const void *data, size_t len);
/** Finishes and writes the digest as 64 lowercase hex digits and a NUL into `hex_out`. */
void eb_sha256_final_hex(struct eb_sha256 *s, char hex_out[EB_SHA256_HEX_SIZE]);

/**
 * The SHA-256 of the regular file at `path` and its size in bytes, reading at most `max_bytes`
 * (0 = no bound) and looking at `*stop` (may be NULL; non-zero = give up) between chunks.
 * EB_ERR_IO naming the file when it cannot be read or is not a regular file (a FIFO is never
 * waited for, a device never read), EB_ERR_LIMIT when it is larger than max_bytes (nothing
 * read), EB_ERR_CANCELLED when stopped (outputs untouched on failure).
 */
EB_NODISCARD enum eb_status eb_sha256_file(const char *path, uint64_t max_bytes,
                                           const atomic_int *stop, char hex_out[EB_SHA256_HEX_SIZE],
                                           uint64_t *size_out, struct eb_diag *diag);

#endif
