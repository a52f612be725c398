/*
 * eb_nvtx_*: NVTX ranges through the CUDA toolkit's header-only nvtx3 (EB_HAVE_NVTX, set by
 * CMake for this file alone when it finds the headers), or nothing.
 */
#include <string.h>

#include "eb/nvtx.h"

#ifdef EB_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

int eb_nvtx_available(void)
{
#ifdef EB_HAVE_NVTX
    return 1;
#else
    return 0;
#endif
}

void eb_nvtx_init(struct eb_nvtx *nv, const char *domain)
{
#ifdef EB_HAVE_NVTX
    nv->domain = nvtxDomainCreateA(domain);
#else
    (void)domain;
    nv->domain = NULL;
#endif
}

void eb_nvtx_push(const struct eb_nvtx *nv, const char *name)
{
#ifdef EB_HAVE_NVTX
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof(a));
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name;
    nvtxDomainRangePushEx((nvtxDomainHandle_t)nv->domain, &a);
#else
    (void)nv;
    (void)name;
#endif
}

void eb_nvtx_pop(const struct eb_nvtx *nv)
{
#ifdef EB_HAVE_NVTX
    nvtxDomainRangePop((nvtxDomainHandle_t)nv->domain);
#else
    (void)nv;
#endif
}

size_t eb_nvtx_range_name(const char *op, const char *node, char *buf, size_t size)
{
    if (size == 0)
        return 0;
    size_t n = 0;
    for (const char *p = op ? op : ""; *p != '\0' && n + 1 < size; p++)
        buf[n++] = *p;
    if (n + 1 < size)
        buf[n++] = ':';
    size_t kept = 0;
    for (const char *p = node ? node : ""; *p != '\0' && kept < EB_NVTX_NODE_CHARS && n + 1 < size;
         p++, kept++)
        buf[n++] = strchr("/@\\*[]", *p) != NULL ? '.' : *p;
    buf[n] = '\0';
    return n;
}
