/* eb_number_parse_*: strict decimal parsing in front of strtod/strtoll. */
#include "eb/number.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Length of the decimal real at `s` by the grammar in number.h, or 0 when it is not one. */
static size_t real_length(const char *s)
{
    const char *p = s;
    size_t digits = 0;
    if (*p == '+' || *p == '-')
        p++;
    while (is_digit(*p)) {
        p++;
        digits++;
    }
    if (*p == '.') {
        p++;
        while (is_digit(*p)) {
            p++;
            digits++;
        }
    }
    if (digits == 0)
        return 0;
    if (*p == 'e' || *p == 'E') {
        const char *q = p + 1;
        if (*q == '+' || *q == '-')
            q++;
        if (!is_digit(*q))
            return 0;
        while (is_digit(*q))
            q++;
        p = q;
    }
    return (size_t)(p - s);
}

enum eb_number eb_number_parse_real(const char *text, double *out)
{
    const size_t n = real_length(text);
    if (n == 0 || text[n] != '\0')
        return EB_NUMBER_SYNTAX;
    char *end = NULL;
    errno = 0;
    const double v = strtod(text, &end);
    if (end != text + n)
        return EB_NUMBER_SYNTAX;
    /* ERANGE is also set on underflow, where strtod returns the nearest (sub)normal or 0. */
    if (!isfinite(v) || (errno == ERANGE && fabs(v) >= 1.0))
        return EB_NUMBER_RANGE;
    *out = v;
    return EB_NUMBER_OK;
}

uint64_t eb_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

enum eb_number eb_number_parse_int(const char *text, long long *out)
{
    const char *p = text;
    if (*p == '+' || *p == '-')
        p++;
    if (!is_digit(*p))
        return EB_NUMBER_SYNTAX;
    while (is_digit(*p))
        p++;
    if (*p != '\0')
        return EB_NUMBER_SYNTAX;
    errno = 0;
    const long long v = strtoll(text, NULL, 10);
    if (errno == ERANGE)
        return EB_NUMBER_RANGE;
    *out = v;
    return EB_NUMBER_OK;
}
