#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "eb/diag.h"

static enum eb_status vfail(struct eb_diag *diag, enum eb_status st, unsigned advice,
                            const char *fmt, va_list ap)
{
    if (diag == NULL || diag->status != EB_OK)
        return st;
    diag->status = st;
    diag->advice = advice;
    vsnprintf(diag->msg, sizeof(diag->msg), fmt, ap);
    return st;
}

enum eb_status eb_diag_fail(struct eb_diag *diag, enum eb_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    enum eb_status r = vfail(diag, st, 0, fmt, ap);
    va_end(ap);
    return r;
}

enum eb_status eb_diag_fail_advise(struct eb_diag *diag, enum eb_status st, unsigned advice,
                                   const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    enum eb_status r = vfail(diag, st, advice, fmt, ap);
    va_end(ap);
    return r;
}

void eb_diag_prefix(struct eb_diag *diag, const char *fmt, ...)
{
    if (diag == NULL || diag->msg[0] == '\0')
        return;
    char prefix[EB_DIAG_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    /* Truncation is acceptable: the start of the message (its context) matters most. */
    char joined[2 * EB_DIAG_MSG_MAX];
    size_t np = strlen(prefix), nm = strlen(diag->msg);
    memcpy(joined, prefix, np);
    memcpy(joined + np, diag->msg, nm + 1);
    joined[EB_DIAG_MSG_MAX - 1] = '\0';
    memcpy(diag->msg, joined, EB_DIAG_MSG_MAX);
}

void eb_diag_clear(struct eb_diag *diag)
{
    if (diag == NULL)
        return;
    diag->status = EB_OK;
    diag->advice = 0;
    diag->msg[0] = '\0';
}
