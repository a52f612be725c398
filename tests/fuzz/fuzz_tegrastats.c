/*
 * libFuzzer target on the tegrastats line parser: eb_tegrastats_parse_line on the input (cut
 * to 4 KiB, NUL-terminated), then the sample written as JSON (eb_tegrastats_write_json), which
 * must parse back: a hostile name or number never makes the sampler's JSON invalid.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb/json.h"
#include "harness/metrics/tegrastats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char line[4097];
    struct eb_tegra_sample s;
    struct eb_json_writer w;
    struct eb_json_value *root = NULL;
    struct eb_diag d = {0};
    char *json;
    size_t len = 0;

    if (size > sizeof(line) - 1)
        size = sizeof(line) - 1;
    memcpy(line, data, size);
    line[size] = '\0';
    eb_tegrastats_parse_line(line, &s);
    if (s.n_cpus < 0 || s.n_cpus > EB_TEGRA_MAX_CPUS || s.n_temps < 0 ||
        s.n_temps > EB_TEGRA_MAX_TEMPS || s.n_rails < 0 || s.n_rails > EB_TEGRA_MAX_RAILS) {
        fprintf(stderr, "fuzz_tegrastats: counts out of range\n");
        abort();
    }
    eb_json_writer_init_mem(&w, 0);
    eb_tegrastats_write_json(&s, &w);
    json = eb_json_writer_take(&w, &len);
    eb_json_writer_fini(&w);
    if (json == NULL)
        abort(); /* out of memory for a few KiB */
    if (eb_json_parse(json, len, &root, &d) != EB_OK) {
        fprintf(stderr, "fuzz_tegrastats: the sample's JSON does not parse (%s): %s\n", d.msg,
                json);
        abort();
    }
    eb_json_free(root);
    free(json);
    return 0;
}
