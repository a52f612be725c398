/* Numbers typed by a user (option values, source specs): one grammar for every parser. */
#ifndef EB_NUMBER_H
#define EB_NUMBER_H

/** What eb_number_parse_* found. */
enum eb_number {
    EB_NUMBER_OK,     /**< the whole text is a number in the type's range */
    EB_NUMBER_SYNTAX, /**< not a decimal number (hex, inf, nan, spaces, trailing text, empty) */
    EB_NUMBER_RANGE   /**< a decimal number too large for the type */
};

/**
 * A decimal real, the whole of `text`: an optional sign, digits with an optional fraction (at
 * least one digit), an optional exponent. Hex, "inf", "nan" and spaces are refused, as they are
 * for integers. A value below the smallest double reads as its nearest double (1e-320 is a
 * number, and then the caller's range decides); one above the largest is EB_NUMBER_RANGE.
 * `*out` is written on EB_NUMBER_OK only.
 */
enum eb_number eb_number_parse_real(const char *text, double *out);
/** A decimal integer, the whole of `text` (optional sign, digits); EB_NUMBER_RANGE beyond long long. */
enum eb_number eb_number_parse_int(const char *text, long long *out);

#include <stdint.h>

/**
 * The next value of the splitmix64 sequence whose state is `*state` (advanced): the seeded draws
 * of the commands (quantize's calibration images, llm's prompt), the same for the same seed on
 * every machine.
 */
uint64_t eb_splitmix64(uint64_t *state);

/** Bytes in MiB (2^20 bytes), as the reports print memory. */
static inline double eb_mib(uint64_t bytes)
{
    return (double)bytes / (1024.0 * 1024.0);
}

#endif
