/* UTF-8 validation shared by every writer that escapes text (JSON, Markdown, SVG/HTML). */
#ifndef EB_UTF8_H
#define EB_UTF8_H

#include <stddef.h>

/**
 * Length of the valid UTF-8 sequence starting at `p` (1 for an ASCII byte, 2..4), or 0 when it
 * is not one: a stray continuation byte, an overlong form, a surrogate, a code point above
 * U+10FFFF, or a sequence cut by a NUL (the reads stop at the first byte that does not fit).
 */
size_t eb_utf8_seq_len(const unsigned char *p);

#endif
