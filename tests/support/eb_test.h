/*
 * Minimal test framework. A test file defines cases with EB_TEST(name) { ... }; CMake reads
 * the names from the file and registers one ctest entry per case (each in its own process).
 *
 *     EB_TEST(letterbox_square) {
 *         ASSERT_EQ_INT(lb.pad_x, 0);
 *     }
 *
 * A case that cannot run calls EB_SKIP("reason") (exit 77, reported as skipped).
 */
#ifndef EB_TEST_H
#define EB_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*eb_test_fn)(void);

void eb_test_register(const char *name, eb_test_fn fn);
/** Path of ../shared/data, or NULL when absent (then tests that need it skip). */
const char *eb_test_shared_data(void);
/** A fresh temporary directory for this case (removed at exit when the case passes). */
const char *eb_test_tmpdir(void);
/** Reads a whole file into a malloc'd NUL-terminated buffer; NULL when unreadable. */
char *eb_test_read_file(const char *path, size_t *len_out);
/** Writes n bytes of data to `path` (made or truncated); fails the case when it cannot. */
void eb_test_write_file(const char *path, const void *data, size_t n);
/** ../shared/data/<rel> read whole (malloc'd); skips the case (EB_SKIP) when it is absent. */
uint8_t *eb_test_shared_file(const char *rel, size_t *len_out);

/* 1 in an ASan or TSan build (gcc defines __SANITIZE_*__, clang has __has_feature). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define EB_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define EB_TEST_SANITIZED 1
#endif
#endif
#ifndef EB_TEST_SANITIZED
#define EB_TEST_SANITIZED 0
#endif

#define EB_TEST(name)                                                                              \
    static void eb_test_##name(void);                                                              \
    __attribute__((constructor)) static void eb_test_reg_##name(void)                              \
    {                                                                                              \
        eb_test_register(#name, eb_test_##name);                                                   \
    }                                                                                              \
    static void eb_test_##name(void)

#define EB_FAIL(...)                                                                               \
    do {                                                                                           \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                            \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
        exit(1);                                                                                   \
    } while (0)

#define EB_SKIP(...)                                                                               \
    do {                                                                                           \
        printf("SKIP: ");                                                                          \
        printf(__VA_ARGS__);                                                                       \
        printf("\n");                                                                              \
        exit(77);                                                                                  \
    } while (0)

#define ASSERT_TRUE(c)                                                                             \
    do {                                                                                           \
        if (!(c))                                                                                  \
            EB_FAIL("assertion failed: %s", #c);                                                   \
    } while (0)
#define ASSERT_EQ_INT(a, b)                                                                        \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ != b_)                                                                              \
            EB_FAIL("%s == %s failed: %lld vs %lld", #a, #b, a_, b_);                              \
    } while (0)
#define ASSERT_NEAR(a, b, tol)                                                                     \
    do {                                                                                           \
        double a_ = (double)(a), b_ = (double)(b);                                                 \
        if (!(fabs(a_ - b_) <= (tol)))                                                             \
            EB_FAIL("%s ~= %s failed: %.9g vs %.9g (tol %g)", #a, #b, a_, b_, (double)(tol));      \
    } while (0)
#define ASSERT_STREQ(a, b)                                                                         \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (a_ == NULL || b_ == NULL || strcmp(a_, b_) != 0)                                       \
            EB_FAIL("%s == %s failed: \"%s\" vs \"%s\"", #a, #b, a_ ? a_ : "(null)",               \
                    b_ ? b_ : "(null)");                                                           \
    } while (0)
#define ASSERT_CONTAINS(hay, needle)                                                               \
    do {                                                                                           \
        const char *h_ = (hay), *n_ = (needle);                                                    \
        if (h_ == NULL || strstr(h_, n_) == NULL)                                                  \
            EB_FAIL("%s does not contain \"%s\": \"%.300s\"", #hay, n_, h_ ? h_ : "(null)");       \
    } while (0)
/* An engine/backend failure: it names no CLI flag and carries exactly the advice bits `bits`
 * (enum eb_advice; the harness adds the flag text). */
#define ASSERT_ADVICE(diag, bits)                                                                  \
    do {                                                                                           \
        const struct eb_diag *d_ = &(diag);                                                        \
        if (strstr(d_->msg, "--") != NULL)                                                         \
            EB_FAIL("%s names a CLI flag: \"%.300s\"", #diag, d_->msg);                            \
        if (d_->advice != (unsigned)(bits))                                                        \
            EB_FAIL("%s.advice is 0x%x, want %s (0x%x)", #diag, d_->advice, #bits,                 \
                    (unsigned)(bits));                                                             \
    } while (0)
#define ASSERT_OK(expr)                                                                            \
    do {                                                                                           \
        enum eb_status st_ = (expr);                                                               \
        if (st_ != EB_OK)                                                                          \
            EB_FAIL("%s returned %s", #expr, eb_status_name(st_));                                 \
    } while (0)

#endif
