#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "eb/diag.h"

enum eb_status eb_diag_fail(struct eb_diag *diag, enum eb_status st, const char *fmt, ...)
{
    if (diag == NULL || diag->status != EB_OK)
        return st;
    diag->status = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(diag->msg, sizeof(diag->msg), fmt, ap);
    va_end(ap);
    return st;
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
    diag->msg[0] = '\0';
}
