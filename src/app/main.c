/*
 * edgebench: argv → subcommand → exit code. The only file allowed process globals (the signal
 * flag).
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb/backend.h"
#include "eb/log.h"
#include "harness/cmd/compare.h"
#include "harness/cmd/config.h"
#include "harness/cmd/llm.h"
#include "harness/cmd/model_plan.h"
#include "harness/cmd/profile.h"
#include "harness/cmd/quantize.h"
#include "harness/cmd/run.h"
#include "harness/cmd/val.h"
#include "harness/metrics/tegrastats.h"
#include "harness/pipeline/advice.h"
#include "harness/pipeline/source.h"
#include "harness/results/history.h"
#include "model/model.h"

#ifndef EB_VERSION
#define EB_VERSION "0.0.0"
#endif

/* Set to the number of the first signal that interrupts the run (SIGINT, SIGTERM, SIGHUP,
 * SIGPIPE); the pipeline threads poll it and stop after the current frame or wait. */
static atomic_int g_stop;
_Static_assert(ATOMIC_INT_LOCK_FREE == 2,
               "the stop flag must be lock-free to be set in a signal handler");

static void on_signal(int sig)
{
    /* A lock-free atomic compare-and-swap is async-signal-safe and visible to the pipeline
     * threads. The first signal stays: the report names what interrupted the run, not the
     * SIGPIPE of a console write after it. */
    int saved = errno;
    int none = 0;
    atomic_compare_exchange_strong(&g_stop, &none, sig);
    errno = saved;
}

/*
 * SIGINT, SIGTERM and SIGHUP (the terminal closed) interrupt the run: the report of what ran is
 * written, marked interrupted, and the exit code is 130. Their handler is reset after the first,
 * so a second Ctrl-C kills at once. SIGPIPE (the console's reader is gone: `edgebench run 2>&1 |
 * head -1`) interrupts the run the same way, but its handler stays: every later write to the
 * closed pipe fails with EPIPE instead of killing the process before the report is written. A
 * handler, not SIG_IGN, so that children (tegrastats, ncu) start with the default disposition.
 */
static void install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_flags = 0;
    sigaction(SIGPIPE, &sa, NULL);
}

static void print_help(FILE *fp)
{
    fprintf(
        fp,
        "edgebench %s: benchmarks YOLO object detectors on one or two camera streams\n\n"
        "usage:\n"
        "  edgebench run [options]            benchmark (see edgebench run --help)\n"
        "  edgebench profile [options]        run with --profile; --ncu: Nsight Compute\n"
        "                                     on the slowest nodes' kernels (profile --help)\n"
        "  edgebench model synth [options]    write a synthesized yolov8/yolo11 or llama/qwen2\n"
        "                                     ONNX model\n"
        "  edgebench model info FILE          inputs, outputs, ops, parameters, FLOPs, planned "
        "memory\n"
        "  edgebench model dequantize IN -o OUT   the float twin of a QDQ model\n"
        "  edgebench val --model PATH --data DIR   COCO mAP of a model on a dataset (COCO,\n"
        "                                     YOLO or VOC); val --help\n"
        "  edgebench quantize --model F --calib DIR -o OUT   an int8 QDQ model calibrated\n"
        "                                     on images (quantize --help)\n"
        "  edgebench llm --model M.onnx [options]   a decoder LLM: time to first token,\n"
        "                                     prefill/decode tokens/s, MFU (llm --help)\n"
        "  edgebench compare [options]        sweep models x backends x precisions x imgsz x\n"
        "                                     devices into one table (compare --help)\n"
        "  edgebench tegrastats [--summary] FILE|-   parse a tegrastats log to JSON lines\n"
        "  edgebench backends                 list inference backends and their status\n"
        "  edgebench history [options]        list the runs recorded in the history database\n"
        "  edgebench diff A B [options]       compare two recorded runs; exit 4 on a "
        "regression\n"
        "  edgebench sync [--db TARGET]       upload the runs kept in the local spool while\n"
        "                                     a PostgreSQL history was unreachable\n"
        "  edgebench --version | --help\n\n"
        "Options without a command (`edgebench --source S --model0 M ...`) are run's\n"
        "(`edgebench run ...`). Without --mode, one stream (--source or --data) takes its\n"
        "mode from the models: --model0 alone runs rgb, --model1 alone thermal, both run\n"
        "dual with each slot reading that source.\n"
        "Run with no model and no source for the embedded default (dual mode, synthesized\n"
        "models on synthetic streams).\n",
        EB_VERSION);
}

static void join_args(int argc, char **argv, char *buf, size_t size)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < argc && off + 1 < size; i++) {
        int quote = strpbrk(argv[i], " \t\"'$") != NULL || argv[i][0] == '\0';
        off += (size_t)snprintf(buf + off, size - off, "%s%s%s%s", i ? " " : "", quote ? "'" : "",
                                argv[i], quote ? "'" : "");
    }
}

static void console_log(void *ctx, enum eb_log_level level, const char *msg)
{
    FILE *fp = ctx;
    fprintf(fp, "edgebench: %s: %s\n", level >= EB_LOG_ERROR ? "error" : "warning", msg);
}

/* The run options that decide the mode without --mode (mode_from_models), and --quiet. */
struct run_words {
    int mode, model0, model1, data, quiet;
    int source_at;      /* index of --source in argv, -1 when absent */
    const char *source; /* its value */
};

static void scan_run_words(int argc, char **argv, struct run_words *w)
{
    memset(w, 0, sizeof(*w));
    w->source_at = -1;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (strncmp(a, "--", 2) != 0)
            continue;
        const size_t len = strcspn(a + 2, "=");
        const int takes = a[2 + len] == '\0' && eb_config_option_takes_value(a + 2, len);
        const char *next = takes && i + 1 < argc ? argv[i + 1] : NULL;
        if (eb_config_match_option(a, "mode", &v))
            w->mode = 1;
        else if (eb_config_match_option(a, "model0", &v))
            w->model0 = 1;
        else if (eb_config_match_option(a, "model1", &v))
            w->model1 = 1;
        else if (eb_config_match_option(a, "data", &v))
            w->data = 1;
        else if (eb_config_match_option(a, "quiet", &v))
            w->quiet = 1;
        else if (eb_config_match_option(a, "source", &v)) {
            w->source_at = i;
            w->source = v != NULL ? v : next;
        }
        if (takes)
            i++; /* the value, which may itself start with -- */
    }
}

/*
 * Without --mode, one stream (--source SPEC or --data DIR) takes its mode from the models, as
 * in the tool users come from: --model0 alone runs rgb, --model1 alone thermal, both run dual
 * with that one source read by each slot (--source S becomes --rgb_source S --thermal_source S).
 * Anything else keeps the default (dual) and its checks. `out` has room for argc + 4 words;
 * returns the word count (argv copied unchanged when nothing is inferred).
 */
static int mode_from_models(int argc, char **argv, char **out)
{
    struct run_words w;
    scan_run_words(argc, argv, &w);
    int n = 0;
    const int one_stream = w.source_at >= 0 || w.data;
    if (!w.mode && one_stream && (w.model0 || w.model1)) {
        static char mode_flag[] = "--mode", rgb[] = "rgb", thermal[] = "thermal", dual[] = "dual";
        out[n++] = mode_flag;
        out[n++] = w.model0 && w.model1 ? dual : w.model0 ? rgb : thermal;
    }
    for (int i = 0; i < argc; i++) {
        if (i == w.source_at && !w.mode && w.model0 && w.model1 && w.source != NULL) {
            static char rgb_src[] = "--rgb_source", th_src[] = "--thermal_source";
            out[n++] = rgb_src;
            out[n++] = (char *)w.source;
            out[n++] = th_src;
            out[n++] = (char *)w.source;
            if (strchr(argv[i], '=') == NULL)
                i++; /* the value, given above */
            continue;
        }
        out[n++] = argv[i];
    }
    return n;
}

static int cmd_run(int argc0, char **argv0, const char *command_line)
{
    struct eb_config cfg;
    eb_config_defaults(&cfg);
    struct eb_log log = {.fn = console_log, .ctx = stderr, .level = EB_LOG_WARN};
    struct eb_diag diag = {0};
    int help = 0;
    char **argv = calloc((size_t)argc0 + 5, sizeof(*argv));
    if (argv == NULL) {
        fprintf(stderr, "edgebench: error: out of memory\n");
        return EB_EXIT_NOTHING_RAN;
    }
    const int argc = mode_from_models(argc0, argv0, argv);
    /* --quiet: errors only, from the parse's warnings (a clamped value) on. */
    struct run_words w;
    scan_run_words(argc, argv, &w);
    if (w.quiet)
        log.level = EB_LOG_ERROR;
    enum eb_status st = eb_config_parse(argc, argv, &cfg, &help, &log, &diag);
    free(argv); /* the configuration keeps the option values, which are argv0's strings */
    if (st != EB_OK) {
        fprintf(stderr, "edgebench: error: %s\n", diag.msg);
        return EB_EXIT_USAGE;
    }
    if (help) {
        eb_config_print_help(stdout);
        return EB_EXIT_OK;
    }
    install_signals();
    /* FFmpeg prints its own diagnostics to stderr; edgebench reports failures itself in one
     * line, so FFmpeg speaks only with --verbose. The level is process-wide state, set here. */
    eb_source_video_log_level(cfg.verbose);
    struct eb_run_env env = {.stop = &g_stop,
                             .command_line = command_line,
                             .version = EB_VERSION,
                             .console = stderr,
                             .tegrastats_cmd = "tegrastats"};
    return eb_run_main(&cfg, &env);
}

static int cmd_profile(int argc, char **argv, const char *argv0, const char *command_line)
{
    struct eb_config cfg;
    struct eb_profile_options po;
    int help = 0;
    int code = eb_profile_parse(argc, argv, &cfg, &po, &help, stderr);
    if (code == EB_EXIT_OK && help)
        eb_profile_print_help(stdout);
    if (code == EB_EXIT_OK && !help) {
        install_signals();
        eb_source_video_log_level(cfg.verbose); /* as cmd_run */
        struct eb_run_env env = {.stop = &g_stop,
                                 .command_line = command_line,
                                 .version = EB_VERSION,
                                 .console = stderr,
                                 .tegrastats_cmd = "tegrastats"};
        code = eb_profile_run(&cfg, &po, &env, argv0);
    }
    eb_profile_options_fini(&po);
    return code;
}

static int cmd_val(int argc, char **argv, const char *command_line)
{
    install_signals();
    eb_source_video_log_level(0); /* undecodable images are reported by edgebench */
    struct eb_val_env env = {.stop = &g_stop,
                             .command_line = command_line,
                             .version = EB_VERSION,
                             .out = stdout,
                             .err = stderr};
    return eb_val_main(argc, argv, &env);
}

static int cmd_compare(int argc, char **argv, const char *command_line)
{
    install_signals();
    eb_source_video_log_level(0); /* as cmd_val */
    struct eb_compare_env env = {.stop = &g_stop,
                                 .command_line = command_line,
                                 .version = EB_VERSION,
                                 .out = stdout,
                                 .err = stderr};
    return eb_compare_main(argc, argv, &env);
}

static int cmd_llm(int argc, char **argv, const char *command_line)
{
    install_signals(); /* Ctrl-C stops after the current step; the report covers what ran */
    const struct eb_llm_env env = {.stop = &g_stop,
                                   .command_line = command_line,
                                   .version = EB_VERSION,
                                   .out = stdout,
                                   .err = stderr};
    return eb_llm_main(argc, argv, &env);
}

static int cmd_backends(void)
{
    int any = 0;
    const struct eb_backend_ops *const *list = eb_backend_list();
    for (size_t i = 0; list[i] != NULL; i++) {
        struct eb_backend_config cfg = {.device = EB_DEVICE_CPU, .mem_limit_bytes = 8000000000ull};
        struct eb_backend_probe probe;
        memset(&probe, 0, sizeof(probe));
        struct eb_diag diag = {0};
        if (list[i]->probe(&cfg, &probe, &diag) == EB_OK && probe.available) {
            printf("%-8s available  %s (%s)\n", list[i]->name, probe.version, probe.library);
            any = 1;
        } else {
            eb_advice_append(&diag);
            printf("%-8s missing    %s\n", list[i]->name, diag.msg);
        }
    }
    return any ? 0 : 1;
}

int main(int argc, char **argv)
{
    char command_line[4096];
    join_args(argc, argv, command_line, sizeof(command_line));
    if (argc < 2) {
        print_help(stderr);
        return EB_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        print_help(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("edgebench %s\n", EB_VERSION);
        return 0;
    }
    if (strcmp(cmd, "run") == 0)
        return cmd_run(argc - 2, argv + 2, command_line);
    if (strncmp(cmd, "--", 2) == 0)
        return cmd_run(argc - 1, argv + 1, command_line);
    if (strcmp(cmd, "profile") == 0)
        return cmd_profile(argc - 2, argv + 2, argv[0], command_line);
    if (strcmp(cmd, "model") == 0)
        return eb_model_main(argc - 2, argv + 2, eb_harness_model_plan, stdout, stderr);
    if (strcmp(cmd, "tegrastats") == 0) {
        install_signals(); /* an endless input (a live tegrastats pipe) ends on Ctrl-C, summed */
        return eb_tegrastats_main(argc - 2, argv + 2, stdout, stderr, &g_stop);
    }
    if (strcmp(cmd, "backends") == 0)
        return cmd_backends();
    if (strcmp(cmd, "val") == 0)
        return cmd_val(argc - 2, argv + 2, command_line);
    if (strcmp(cmd, "quantize") == 0) {
        install_signals(); /* Ctrl-C stops after the current image, nothing written */
        const struct eb_quantize_env qenv = {
            .stop = &g_stop, .version = EB_VERSION, .out = stdout, .err = stderr};
        return eb_quantize_main(argc - 2, argv + 2, &qenv);
    }
    if (strcmp(cmd, "llm") == 0)
        return cmd_llm(argc - 2, argv + 2, command_line);
    if (strcmp(cmd, "compare") == 0)
        return cmd_compare(argc - 2, argv + 2, command_line);
    if (strcmp(cmd, "history") == 0)
        return eb_history_main(argc - 2, argv + 2, stdout, stderr);
    if (strcmp(cmd, "diff") == 0)
        return eb_diff_main(argc - 2, argv + 2, stdout, stderr);
    if (strcmp(cmd, "sync") == 0)
        return eb_sync_main(argc - 2, argv + 2, stdout, stderr);
    fprintf(stderr, "edgebench: error: unknown command '%s'; see edgebench --help\n", cmd);
    return EB_EXIT_USAGE;
}
