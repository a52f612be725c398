/*
 * Status codes shared by every edgebench component.
 *
 * Every fallible function returns an `enum eb_status` (marked EB_NODISCARD) and writes its
 * outputs only on EB_OK. Details of a failure go into a caller-owned `struct eb_diag`
 * (see diag.h). The table of codes lives in status.def.
 *
 *     enum eb_status st = eb_source_open(spec, &src, &diag);
 *     if (st != EB_OK) fprintf(stderr, "%s\n", diag.msg);
 */
#ifndef EB_STATUS_H
#define EB_STATUS_H

#if defined(__GNUC__) || defined(__clang__)
#define EB_NODISCARD                __attribute__((warn_unused_result))
#define EB_PRINTF(fmt_idx, arg_idx) __attribute__((format(printf, fmt_idx, arg_idx)))
#else
#define EB_NODISCARD
#define EB_PRINTF(fmt_idx, arg_idx)
#endif

enum eb_status {
#define EB_STATUS(code, name, message) code,
#include "eb/status.def"
#undef EB_STATUS
    EB_STATUS_COUNT
};

/** Short stable name of a status ("ok", "limit", ...); never NULL. */
const char *eb_status_name(enum eb_status st);
/** Human-readable description of a status; never NULL. */
const char *eb_status_message(enum eb_status st);

/** Aborts with file:line when an invariant that no input can break is broken. */
#define EB_ASSERT(cond) ((cond) ? (void)0 : eb_assert_fail(#cond, __FILE__, __LINE__))
_Noreturn void eb_assert_fail(const char *expr, const char *file, int line);

#define EB_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#endif
