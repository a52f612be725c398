/*
 * The command-line advice for engine and backend failures. The engine and the backends name no
 * CLI flag: they record the kinds of remedy as enum eb_advice bits in their eb_diag (diag.h),
 * and the harness turns them into flag text here, where it shows or stores the failure (a
 * slot's failure, `edgebench model info`, the backend list, compare, val, profile).
 */
#ifndef EB_HARNESS_ADVICE_H
#define EB_HARNESS_ADVICE_H

#include <stddef.h>

#include "eb/diag.h"

/**
 * Writes the remedies named by `advice` (enum eb_advice bits) into `out`, in the table's order,
 * joined by " or " ("use --precision fp32 or --device cpu"); "" for none. Returns the length
 * the text needs (as snprintf).
 */
size_t eb_advice_text(unsigned advice, char *out, size_t size);

/**
 * Completes a failure for the user: appends "; <remedies>" for diag->advice to the message and
 * clears the bits, so that a second call adds nothing. Where the line would not fit, the end of
 * the message gives way ("...") so that the remedies stay whole. `diag` may be NULL.
 */
void eb_advice_append(struct eb_diag *diag);

#endif
