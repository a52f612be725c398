/*
 * A minimal NVTX tool for the tests, loaded by NVTX (nvtx3) through NVTX_INJECTION64_PATH in
 * place of Nsight Systems or Nsight Compute: it takes over the domain API's create, push and
 * pop and appends one line per call to the file named by $EB_NVTX_LOG:
 *
 *     push edgebench@Conv:.model.0.conv.Conv
 *     pop edgebench
 *
 * A domain handle is the name edgebench passed to nvtxDomainCreateA (its domains are string
 * literals, so the pointer stays valid); the tool keeps no other state. InitializeInjectionNvtx2
 * is the entry point NVTX looks up by that name, hence no eb_ prefix.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table);

/* One line, appended with one write() so that the two slot threads' lines do not interleave. */
static void log_line(const char *what, const char *domain, const char *name)
{
    const char *path = getenv("EB_NVTX_LOG");
    if (path == NULL || path[0] == '\0')
        return;
    char line[512];
    int n = snprintf(line, sizeof(line), "%s %s%s%s\n", what, domain ? domain : "(default)",
                     name ? "@" : "", name ? name : "");
    if (n <= 0)
        return;
    if ((size_t)n >= sizeof(line))
        n = (int)sizeof(line) - 1;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0)
        return;
    ssize_t w = write(fd, line, (size_t)n);
    (void)w;
    close(fd);
}

static nvtxDomainHandle_t domain_create(const char *name)
{
    return (nvtxDomainHandle_t)(void *)(char *)name;
}

static int range_push(nvtxDomainHandle_t domain, const nvtxEventAttributes_t *a)
{
    const char *name =
        a != NULL && a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii : "(not ascii)";
    log_line("push", (const char *)(void *)domain, name);
    return 0;
}

static int range_pop(nvtxDomainHandle_t domain)
{
    log_line("pop", (const char *)(void *)domain, NULL);
    return 0;
}

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table)
{
    const NvtxExportTableCallbacks *cb = get_export_table(NVTX_ETID_CALLBACKS);
    NvtxFunctionTable table = NULL;
    unsigned int size = 0;
    if (cb == NULL || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) ||
        table == NULL || size <= NVTX_CBID_CORE2_DomainCreateA)
        return 0;
    *table[NVTX_CBID_CORE2_DomainCreateA] = (NvtxFunctionPointer)domain_create;
    *table[NVTX_CBID_CORE2_DomainRangePushEx] = (NvtxFunctionPointer)range_push;
    *table[NVTX_CBID_CORE2_DomainRangePop] = (NvtxFunctionPointer)range_pop;
    return 1;
}
