#include <string.h>

#include "backends/native/native_backend.h"
#include "backends/ort/ort_backend.h"
#include "eb/backend.h"

static const struct eb_backend_ops *const backends[] = {
    &eb_backend_native_ops,
#ifndef EB_NO_ORT
    &eb_backend_ort_ops,
#endif
    NULL,
};

const struct eb_backend_ops *const *eb_backend_list(void)
{
    return backends;
}

const struct eb_backend_ops *eb_backend_find(const char *name)
{
    for (size_t i = 0; backends[i] != NULL; i++)
        if (strcmp(backends[i]->name, name) == 0)
            return backends[i];
    return NULL;
}
