/*
 * SHA-256 after FIPS 180-4 §6.2: 64-byte blocks, big-endian words, the message padded with
 * 0x80, zeros and its bit length.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eb/path.h"
#include "harness/results/sha256.h"

static const uint32_t k256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t rotr(uint32_t x, unsigned n)
{
    return (x >> n) | (x << (32 - n));
}

static void compress(struct eb_sha256 *s, const uint8_t *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3];
    uint32_t e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 =
            h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k256[i] + w[i];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    s->h[0] += a;
    s->h[1] += b;
    s->h[2] += c;
    s->h[3] += d;
    s->h[4] += e;
    s->h[5] += f;
    s->h[6] += g;
    s->h[7] += h;
}

void eb_sha256_init(struct eb_sha256 *s)
{
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memset(s, 0, sizeof(*s));
    memcpy(s->h, iv, sizeof(iv));
}

void eb_sha256_update(struct eb_sha256 *s, const void *data, size_t len)
{
    const uint8_t *p = data;
    s->bytes += len;
    while (len > 0) {
        size_t take = sizeof(s->block) - s->fill;
        if (take > len)
            take = len;
        memcpy(s->block + s->fill, p, take);
        s->fill += take;
        p += take;
        len -= take;
        if (s->fill == sizeof(s->block)) {
            compress(s, s->block);
            s->fill = 0;
        }
    }
}

void eb_sha256_final_hex(struct eb_sha256 *s, char hex_out[EB_SHA256_HEX_SIZE])
{
    static const char digits[] = "0123456789abcdef";
    const uint64_t bits = s->bytes * 8u;
    uint8_t pad[72];
    size_t npad = (s->fill < 56 ? 56 : 120) - s->fill;
    memset(pad, 0, sizeof(pad));
    pad[0] = 0x80;
    for (int i = 0; i < 8; i++)
        pad[npad + (size_t)i] = (uint8_t)(bits >> (56 - 8 * i));
    eb_sha256_update(s, pad, npad + 8);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++) {
            uint8_t byte = (uint8_t)(s->h[i] >> (24 - 8 * j));
            hex_out[8 * i + 2 * j] = digits[byte >> 4];
            hex_out[8 * i + 2 * j + 1] = digits[byte & 15];
        }
    hex_out[64] = '\0';
}

enum eb_status eb_sha256_file(const char *path, uint64_t max_bytes, const atomic_int *stop,
                              char hex_out[EB_SHA256_HEX_SIZE], uint64_t *size_out,
                              struct eb_diag *diag)
{
    struct stat sb;
    const char *why = NULL;
    const int fd = eb_file_open_regular(path, &sb, &why);
    if (fd == EB_FILE_OPEN_FAILED)
        return eb_diag_fail(diag, EB_ERR_IO, "cannot read %s: %s", path, strerror(errno));
    if (fd < 0)
        return eb_diag_fail(diag, EB_ERR_IO, "cannot read %s: %s", path, why);
    if (max_bytes > 0 && (uint64_t)sb.st_size > max_bytes) {
        close(fd);
        return eb_diag_fail(diag, EB_ERR_LIMIT,
                            "cannot fingerprint %s: %llu bytes, above the %llu read at most", path,
                            (unsigned long long)sb.st_size, (unsigned long long)max_bytes);
    }
    FILE *fp = fdopen(fd, "rb");
    if (fp == NULL) {
        close(fd);
        return eb_diag_fail(diag, EB_ERR_IO, "cannot read %s: %s", path, strerror(errno));
    }
    struct eb_sha256 s;
    eb_sha256_init(&s);
    uint8_t buf[65536];
    size_t got;
    int cancelled = 0;
    while ((got = fread(buf, 1, sizeof(buf), fp)) > 0) {
        eb_sha256_update(&s, buf, got);
        /* a file that grows while it is read is bounded too */
        if ((max_bytes > 0 && s.bytes > max_bytes) ||
            (stop != NULL && atomic_load_explicit(stop, memory_order_relaxed) != 0)) {
            cancelled = 1;
            break;
        }
    }
    int bad = ferror(fp);
    fclose(fp);
    if (cancelled && max_bytes > 0 && s.bytes > max_bytes)
        return eb_diag_fail(diag, EB_ERR_LIMIT, "cannot fingerprint %s: it grew past %llu bytes",
                            path, (unsigned long long)max_bytes);
    if (cancelled)
        return eb_diag_fail(diag, EB_ERR_CANCELLED, "fingerprint of %s stopped", path);
    if (bad)
        return eb_diag_fail(diag, EB_ERR_IO, "cannot read %s: read error", path);
    *size_out = s.bytes;
    eb_sha256_final_hex(&s, hex_out);
    return EB_OK;
}
