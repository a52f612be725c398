/*
 * libFuzzer target on the `run` option parser (src/harness/cmd/cli.c, driven by cli_opts.def):
 * the input (cut to 4 KiB) is split into argv words at newlines and NUL bytes (at most 64
 * words) and parsed by eb_config_parse, which runs nothing. A configuration that parses is
 * written as JSON (the report's config echo), which must parse back.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb/json.h"
#include "harness/cmd/config.h"

#define MAX_WORDS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_echo(const struct eb_config *cfg)
{
    struct eb_json_writer w;
    struct eb_json_value *root = NULL;
    struct eb_diag d = {0};
    size_t len = 0;
    char *json;

    eb_json_writer_init_mem(&w, 0);
    eb_config_write_json(cfg, &w);
    json = eb_json_writer_take(&w, &len);
    eb_json_writer_fini(&w);
    if (json == NULL)
        abort();
    if (eb_json_parse(json, len, &root, &d) != EB_OK) {
        fprintf(stderr, "fuzz_cli: the config echo does not parse (%s): %s\n", d.msg, json);
        abort();
    }
    eb_json_free(root);
    free(json);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char buf[4097];
    char *argv[MAX_WORDS + 1];
    int argc = 0, help = 0;
    struct eb_config cfg;
    struct eb_diag d = {0};

    if (size > sizeof(buf) - 1)
        size = sizeof(buf) - 1;
    memcpy(buf, data, size);
    buf[size] = '\0';
    /* Words end at '\n' or NUL; an empty input is no words at all. */
    for (size_t i = 0, start = 0; i <= size && argc < MAX_WORDS; i++) {
        if (i == size || buf[i] == '\n' || buf[i] == '\0') {
            buf[i] = '\0';
            if (i > start || i < size)
                argv[argc++] = buf + start;
            start = i + 1;
        }
    }
    argv[argc] = NULL;
    eb_config_defaults(&cfg);
    if (eb_config_parse(argc, argv, &cfg, &help, NULL, &d) == EB_OK && !help) {
        check_echo(&cfg);
        (void)eb_config_slot_data(&cfg, 0);
        (void)eb_config_slot_data(&cfg, 1);
        (void)eb_config_slot_class_map(&cfg, 0);
        (void)eb_config_slot_fps(&cfg, 1);
    } else if (d.msg[0] == '\0' && !help) {
        fprintf(stderr, "fuzz_cli: a refused command line left no message\n");
        abort();
    }
    return 0;
}
