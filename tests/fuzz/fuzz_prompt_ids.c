/*
 * libFuzzer target on the --prompt_ids parser of `edgebench llm` (eb_llm_prompt_ids_parse, the
 * code the command runs on the file's text): the input cut to 64 KiB and NUL-terminated, parsed
 * against a vocabulary of 1000. On success every id must be inside it and the count positive;
 * on failure nothing is returned and the message says which token.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/pipeline/llm_core.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum { MAX = 65536, VOCAB = 1000 };
    char *text = malloc(MAX + 1);
    int64_t *ids = NULL;
    size_t n = 0;
    struct eb_diag d = {0};
    if (text == NULL)
        return 0;
    if (size > MAX)
        size = MAX;
    memcpy(text, data, size);
    text[size] = '\0';
    if (eb_llm_prompt_ids_parse(text, VOCAB, &ids, &n, &d) == EB_OK) {
        if (n == 0 || ids == NULL) {
            fprintf(stderr, "fuzz_prompt_ids: success without ids\n");
            abort();
        }
        for (size_t i = 0; i < n; i++)
            if (ids[i] < 0 || ids[i] >= VOCAB) {
                fprintf(stderr, "fuzz_prompt_ids: id %lld outside the vocabulary\n",
                        (long long)ids[i]);
                abort();
            }
        free(ids);
    } else if (d.msg[0] == '\0') {
        fprintf(stderr, "fuzz_prompt_ids: failure without a message\n");
        abort();
    }
    free(text);
    return 0;
}
