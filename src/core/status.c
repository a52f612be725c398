#include <stdio.h>
#include <stdlib.h>

#include "eb/status.h"

static const char *const status_names[] = {
#define EB_STATUS(code, name, message) name,
#include "eb/status.def"
#undef EB_STATUS
};

static const char *const status_messages[] = {
#define EB_STATUS(code, name, message) message,
#include "eb/status.def"
#undef EB_STATUS
};

const char *eb_status_name(enum eb_status st)
{
    if ((unsigned)st >= EB_STATUS_COUNT)
        return "unknown";
    return status_names[st];
}

const char *eb_status_message(enum eb_status st)
{
    if ((unsigned)st >= EB_STATUS_COUNT)
        return "unknown status";
    return status_messages[st];
}

void eb_assert_fail(const char *expr, const char *file, int line)
{
    fprintf(stderr, "edgebench: internal error: assertion '%s' failed at %s:%d\n", expr, file,
            line);
    abort();
}
