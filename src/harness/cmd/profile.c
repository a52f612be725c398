/*
 * `edgebench profile [--ncu]` (profile.h): the in-process profile run, then Nsight Compute as
 * child processes started with posix_spawnp (no shell), their output in the run folder.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "eb/clock.h"
#include "eb/number.h"
#include "harness/cmd/ncu.h"
#include "harness/cmd/nsys.h"
#include "harness/cmd/profile.h"
#include "harness/cmd/trace.h"

extern char **environ;

/* ---- options ---- */

static int usage(FILE *err, const char *msg)
{
    fprintf(err, "edgebench: error: %s\n", msg);
    return EB_EXIT_USAGE;
}

/* Option warnings (the --gpu_mem_limit_gb clamp), as `run` prints them. */
static void console_log(void *ctx, enum eb_log_level level, const char *msg)
{
    fprintf(ctx, "edgebench: %s: %s\n", level >= EB_LOG_ERROR ? "error" : "warning", msg);
}

void eb_profile_options_fini(struct eb_profile_options *po)
{
    if (po == NULL)
        return;
    free(po->run_argv);
    po->run_argv = NULL;
    po->run_argc = 0;
}

/* An integer option's value in 1..max into *out; else the message into msg, -1. */
static int parse_int(const char *name, const char *text, int max, int *out, char *msg, size_t size)
{
    long long v = 0;
    const enum eb_number num = eb_number_parse_int(text, &v);
    if (num == EB_NUMBER_SYNTAX) {
        snprintf(msg, size, "%s: '%s' is not an integer (accepted: 1..%d)", name, text, max);
        return -1;
    }
    if (num == EB_NUMBER_RANGE || v < 1 || v > max) {
        snprintf(msg, size, "%s: %s is out of range (accepted: 1..%d)", name, text, max);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int eb_profile_parse(int argc, char **argv, struct eb_config *cfg, struct eb_profile_options *po,
                     int *help_out, FILE *err)
{
    char msg[EB_DIAG_MSG_MAX];
    memset(po, 0, sizeof(*po));
    po->ncu_top = EB_PROFILE_NCU_TOP_DEFAULT;
    po->ncu_timeout_s = EB_PROFILE_NCU_TIMEOUT_DEFAULT;
    *help_out = 0;
    eb_config_defaults(cfg);
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            *help_out = 1;
            return EB_EXIT_OK;
        }
    po->run_argv = malloc(((size_t)argc + 1) * sizeof(char *));
    if (po->run_argv == NULL)
        return usage(err, "out of memory");
    const char *top_text = NULL, *timeout_text = NULL;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i], *value = NULL;
        static const char *const flags[] = {"ncu", "trace", "nsys"};
        int *const flag_of[] = {&po->ncu, &po->trace, &po->nsys};
        int matched = 0;
        for (int f = 0; f < 3 && !matched; f++)
            if (eb_config_match_option(arg, flags[f], &value)) {
                if (value != NULL) {
                    snprintf(msg, sizeof(msg), "--%s takes no value", flags[f]);
                    return usage(err, msg);
                }
                *flag_of[f] = matched = 1;
            }
        if (matched)
            continue;
        int top = eb_config_match_option(arg, "ncu_top", &value);
        int tmo = !top && eb_config_match_option(arg, "ncu_timeout_s", &value);
        if (top || tmo || eb_config_match_option(arg, "ncu_path", &value)) {
            const char *name = top ? "--ncu_top" : tmo ? "--ncu_timeout_s" : "--ncu_path";
            if (value == NULL && i + 1 < argc)
                value = argv[++i];
            if (value == NULL || value[0] == '\0') {
                snprintf(msg, sizeof(msg), "%s needs a value%s", name,
                         top   ? " (accepted: 1..15)"
                         : tmo ? " (accepted: 1..86400 seconds)"
                               : " (the ncu executable)");
                return usage(err, msg);
            }
            if (top)
                top_text = value;
            else if (tmo)
                timeout_text = value;
            else
                po->ncu_path = value;
            continue;
        }
        /* A run option's value is passed along as it is, even when it starts with "--ncu". */
        const char *eq = strchr(arg, '=');
        po->run_argv[po->run_argc++] = argv[i];
        if (strncmp(arg, "--", 2) == 0 && eq == NULL && i + 1 < argc &&
            eb_config_option_takes_value(arg + 2, strlen(arg + 2)))
            po->run_argv[po->run_argc++] = argv[++i];
    }
    po->run_argv[po->run_argc] = NULL;
    if (top_text != NULL &&
        parse_int("--ncu_top", top_text, EB_NCU_MAX_TARGETS, &po->ncu_top, msg, sizeof(msg)) != 0)
        return usage(err, msg);
    if (timeout_text != NULL &&
        parse_int("--ncu_timeout_s", timeout_text, EB_PROFILE_NCU_TIMEOUT_MAX, &po->ncu_timeout_s,
                  msg, sizeof(msg)) != 0)
        return usage(err, msg);
    if (!po->ncu && (top_text != NULL || timeout_text != NULL || po->ncu_path != NULL))
        return usage(err, "--ncu_top, --ncu_timeout_s and --ncu_path go with --ncu; add --ncu");
    struct eb_log log = {.fn = console_log, .ctx = err, .level = EB_LOG_WARN};
    struct eb_diag diag = {0};
    int help = 0;
    if (eb_config_parse(po->run_argc, po->run_argv, cfg, &help, &log, &diag) != EB_OK)
        return usage(err, diag.msg);
    cfg->profile = 1;
    cfg->trace = po->trace;
    return EB_EXIT_OK;
}

void eb_profile_print_help(FILE *fp)
{
    fprintf(
        fp,
        "usage: edgebench profile [run options] [--trace] [--nsys] [--ncu [--ncu_top N]\n"
        "                         [--ncu_path PATH] [--ncu_timeout_s S]]\n\n"
        "Runs the workload once, as `edgebench run` with --profile: the run folder, report.json\n"
        "and report.md with the per-operator profile are written as usual. NVTX ranges mark every\n"
        "stage (domain " EB_NVTX_DOMAIN_STAGE ", \"rgb:infer\") and, in profiled runs, every node\n"
        "(domain " EB_NVTX_DOMAIN_OP ", \"Conv:<node>\": the cpu device's timed loop and the cuda\n"
        "device's node-by-node pass alike) for Nsight Systems and Nsight Compute.\n\n"
        "options (besides every option of edgebench run; see edgebench run --help):\n"
        "  --trace          also write trace.json (Chrome trace format: open it in Perfetto or\n"
        "                   chrome://tracing): each slot's thread with its first %d measured\n"
        "                   frames' stages (read, preprocess, inference, postprocess), and on\n"
        "                   the cuda device every kernel on its stream's track from CUPTI\n"
        "                   (libcupti, loaded at run time; without it the trace holds the CPU\n"
        "                   stages only); the top kernels by GPU time are printed and go to\n"
        "                   report.json's \"trace\" section and, with --ncu, become its targets\n"
        "  --nsys           then run the workload again under Nsight Systems (nsys profile,\n"
        "                   capture gated on the NVTX range \"<slot>:measure\" of the measured\n"
        "                   pass): nsys.nsys-rep and nsys_kernels.csv in the run folder, the\n"
        "                   top kernels printed\n"
        "  --ncu            then profile the kernels of the slowest nodes with Nsight Compute: "
        "ncu\n"
        "                   runs `edgebench run <the same options> --db none --profile "
        "--frames " EB_PROFILE_NCU_FRAMES " --warmup " EB_PROFILE_NCU_WARMUP "`\n"
        "                   with one --nvtx-include per node; ncu.md and ncu.json in the run\n"
        "                   folder give per kernel its NVTX range, duration, SM %%, DRAM %%,\n"
        "                   achieved occupancy %% and a verdict (memory-bound when DRAM %% > SM "
        "%%,\n"
        "                   else compute-bound)\n"
        "  --ncu_top N      how many of the slowest nodes (all slots together), or with\n"
        "                   --trace and kernels in its trace, of its top kernels (ncu then\n"
        "                   selects them by mangled name, --kernel-name); default %d;\n"
        "                   accepted: 1..%d\n"
        "  --ncu_path PATH  the ncu executable; default: ncu on PATH\n"
        "  --ncu_timeout_s S  the most one ncu command may take, in seconds; past it ncu is\n"
        "                   stopped (its process group: SIGTERM, SIGKILL 5 s later) and reaped;\n"
        "                   default %d; accepted: 1..%d\n\n"
        "--ncu also leaves in the run folder: ncu.ncu-rep (open it in Nsight Compute), ncu.log\n"
        "and ncu.err.log (ncu's output), ncu_raw.csv and ncu_ranges.csv (the report as CSV),\n"
        "ncu-run/ (the re-run's own run folder).\n\n"
        "exit codes: as edgebench run (0, 1, 3, 5, 6, 130); 2 usage error, with --nsys also:\n"
        "nsys not found or failed; with --ncu also:\n"
        "ncu not found, ncu failed or timed out, or no per-operator profile to target (the run's\n"
        "reports are written all the same); 130 also when Ctrl-C stopped ncu (it is stopped\n"
        "and reaped; ncu.json says interrupted).\n",
        EB_TRACE_MAX_FRAMES, EB_PROFILE_NCU_TOP_DEFAULT, EB_NCU_MAX_TARGETS,
        EB_PROFILE_NCU_TIMEOUT_DEFAULT, EB_PROFILE_NCU_TIMEOUT_MAX);
}

/* ---- files and processes ---- */

/* The whole file, NUL-terminated (malloc'd); NULL with errno set. */
static char *slurp(const char *path, size_t *len_out)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return NULL;
    size_t cap = 1 << 16, n = 0, r;
    char *buf = malloc(cap + 1);
    while (buf != NULL && (r = fread(buf + n, 1, cap - n, fp)) > 0) {
        n += r;
        if (n == cap) {
            char *nb = cap < ((size_t)1 << 30) ? realloc(buf, cap * 2 + 1) : NULL;
            if (nb == NULL) {
                free(buf);
                buf = NULL;
                errno = ENOMEM;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(fp);
    if (buf != NULL) {
        buf[n] = '\0';
        *len_out = n;
    }
    return buf;
}

static int is_executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* `name` as given when it holds a '/', else the first match on $PATH, into out; 0 if none. */
static int find_executable(const char *name, char *out, size_t size)
{
    if (strchr(name, '/') != NULL) {
        snprintf(out, size, "%s", name);
        return is_executable(name);
    }
    const char *p = getenv("PATH");
    if (p == NULL)
        p = "/usr/local/bin:/usr/bin:/bin";
    for (;;) {
        size_t n = strcspn(p, ":");
        if (n == 0)
            snprintf(out, size, "./%s", name);
        else
            snprintf(out, size, "%.*s/%s", (int)n, p, name);
        if (is_executable(out))
            return 1;
        if (p[n] == '\0')
            return 0;
        p += n + 1;
    }
}

/* This executable, for ncu to start: /proc/self/exe, else argv[0]. */
static void self_path(const char *argv0, char *out, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", out, size - 1);
    if (n > 0) {
        out[n] = '\0';
        return;
    }
    snprintf(out, size, "%s", argv0 != NULL ? argv0 : "edgebench");
}

/* The command line for the reports: arguments with spaces or quotes in single quotes. */
static void join_argv(char *const *argv, char *buf, size_t size)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; argv[i] != NULL && off + 1 < size; i++) {
        int quote = strpbrk(argv[i], " \t\"'$") != NULL || argv[i][0] == '\0';
        off += (size_t)snprintf(buf + off, size - off, "%s%s%s%s", i ? " " : "", quote ? "'" : "",
                                argv[i], quote ? "'" : "");
    }
}

/* How a child ended: by itself, or stopped by us. */
enum child_end { CHILD_EXITED, CHILD_TIMED_OUT, CHILD_STOPPED };

/* Seconds between SIGTERM to a child's process group and SIGKILL. */
#define CHILD_KILL_GRACE_NS (5ull * 1000000000ull)

/*
 * Runs argv (argv[0] an executable path) to its end: stdin from /dev/null, stdout into
 * out_path (truncated), stderr appended to err_path. It leads a process group of its own, so
 * that ncu and the application it starts are stopped together: past `timeout_s`, or once
 * *stop is set (the signal is forwarded; SIGPIPE as SIGTERM), the group gets that signal
 * (SIGTERM on a timeout), SIGKILL after CHILD_KILL_GRACE_NS, and the child is reaped; what is
 * left of the group then gets SIGKILL. *wstatus_out is waitpid's status, *end_out how it ended.
 */
static enum eb_status run_child(char *const *argv, const char *out_path, const char *err_path,
                                const atomic_int *stop, int timeout_s, int *wstatus_out,
                                enum child_end *end_out, struct eb_diag *diag)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc != 0)
        return eb_diag_fail(diag, EB_ERR_IO, "failed to start %s: %s", argv[0], strerror(rc));
    rc = posix_spawnattr_init(&attr);
    if (rc != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return eb_diag_fail(diag, EB_ERR_IO, "failed to start %s: %s", argv[0], strerror(rc));
    }
    rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    if (rc == 0)
        rc = posix_spawnattr_setpgroup(&attr, 0);
    if (rc == 0)
        rc = posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    if (rc == 0)
        rc = posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out_path,
                                              O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (rc == 0)
        rc = posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, err_path,
                                              O_WRONLY | O_CREAT | O_APPEND, 0644);
    pid_t pid = -1;
    if (rc == 0)
        rc = posix_spawnp(&pid, argv[0], &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (rc != 0)
        return eb_diag_fail(diag, EB_ERR_IO, "failed to start %s: %s", argv[0], strerror(rc));
    const uint64_t deadline = eb_clock_ns() + (uint64_t)timeout_s * 1000000000ull;
    enum child_end end = CHILD_EXITED;
    uint64_t termed_at = 0;
    int killed = 0, status = 0;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR) {
            /* Cannot happen for our own child; never leave it running. */
            kill(-pid, SIGKILL);
            return eb_diag_fail(diag, EB_ERR_IO, "failed to wait for %s: %s", argv[0],
                                strerror(errno));
        }
        const uint64_t now = eb_clock_ns();
        const int sig = atomic_load(stop);
        if (end == CHILD_EXITED && (sig != 0 || now >= deadline)) {
            end = sig != 0 ? CHILD_STOPPED : CHILD_TIMED_OUT;
            kill(-pid, sig != 0 && sig != SIGPIPE ? sig : SIGTERM);
            termed_at = now;
        } else if (end != CHILD_EXITED && !killed && now - termed_at >= CHILD_KILL_GRACE_NS) {
            kill(-pid, SIGKILL);
            killed = 1;
        }
        eb_clock_sleep_ns(EB_CLOCK_SLEEP_SLICE_NS);
    }
    if (end != CHILD_EXITED)
        kill(-pid, SIGKILL); /* what the leader left behind (ESRCH when nothing) */
    *wstatus_out = status;
    *end_out = end;
    return EB_OK;
}

/* The line of `path` that says most about a failure: its last "==ERROR==" line, else its last
 * non-empty line (when `any`), into out; 0 when there is none. */
static int telling_line(const char *path, int any, char *out, size_t size)
{
    size_t len = 0;
    char *text = slurp(path, &len);
    if (text == NULL)
        return 0;
    const char *err = NULL, *last = NULL;
    size_t err_n = 0, last_n = 0;
    for (const char *p = text; *p != '\0';) {
        size_t n = strcspn(p, "\n");
        size_t m = n;
        while (m > 0 && (p[m - 1] == '\r' || p[m - 1] == ' '))
            m--;
        if (m > 0) {
            last = p;
            last_n = m;
            for (size_t i = 0; i + 9 <= m; i++)
                if (memcmp(p + i, "==ERROR==", 9) == 0) {
                    err = p;
                    err_n = m;
                    break;
                }
        }
        p += n + (p[n] == '\n');
    }
    const char *pick = err != NULL ? err : any ? last : NULL;
    size_t pick_n = err != NULL ? err_n : last_n;
    if (pick != NULL)
        snprintf(out, size, "%.*s", (int)(pick_n < 300 ? pick_n : 300), pick);
    free(text);
    return pick != NULL;
}

/* ---- the ncu step ---- */

struct ncu_ctx {
    const char *dir; /* the run folder */
    const struct eb_run_env *env;
    int timeout_s; /* --ncu_timeout_s */
    struct eb_ncu_target targets[EB_NCU_MAX_TARGETS];
    size_t n_targets;
    struct eb_ncu_info info;
    char ncu[4096];
    char command[8192];
    char report[4200];
    char run_folder[4200];
    char err_log[4200];
    char message[EB_DIAG_MSG_MAX];
};

/* Writes ncu.json/ncu.md (a failure to is one more line) and returns `code`. */
static int finish(struct ncu_ctx *c, const struct eb_ncu_summary *sum, int code)
{
    struct eb_diag d = {0};
    c->info.targets = c->targets;
    c->info.n_targets = c->n_targets;
    if (eb_ncu_write_reports(c->dir, &c->info, sum, &d) != EB_OK) {
        fprintf(c->env->console, "edgebench: error: %s\n", d.msg);
        return EB_EXIT_WRITE_FAILED;
    }
    return code;
}

/* Records a failure: one line on the console, the same in ncu.json/md; returns `code`. */
static int fail_with(struct ncu_ctx *c, const char *status, int code)
{
    c->info.status = status;
    c->info.message = c->message;
    fprintf(c->env->console, "edgebench: error: %s\n", c->message);
    return finish(c, NULL, code);
}

/*
 * Why ncu (or the re-run under it) failed, from its exit status and its output. Nsight Compute
 * 2025.3 prints its own "==ERROR==" lines on stdout (ncu.log), the application's messages go to
 * stderr (ncu.err.log): ncu's error line is quoted, unless it only says that the application
 * failed, then the application's last line says more.
 */
static void explain_failure(struct ncu_ctx *c, const char *what, int wstatus, const char *out_log)
{
    char line[320] = "", app[320] = "";
    int have = telling_line(c->err_log, 0, line, sizeof(line)) ||
               telling_line(out_log, 0, line, sizeof(line));
    if ((!have || strstr(line, "application returned") != NULL) &&
        telling_line(c->err_log, 1, app, sizeof(app))) {
        snprintf(line, sizeof(line), "%s", app);
        have = 1;
    }
    char how[64];
    if (WIFSIGNALED(wstatus))
        snprintf(how, sizeof(how), "killed by signal %d", WTERMSIG(wstatus));
    else
        snprintf(how, sizeof(how), "exit status %d", WEXITSTATUS(wstatus));
    snprintf(c->message, sizeof(c->message),
             "%.40s failed (%.40s)%s%.200s%s; see ncu.log and ncu.err.log in %.160s", what, how,
             have ? ": \"" : "", have ? line : "", have ? "\"" : "", c->dir);
}

/* Runs one ncu command to its end; 0 on success, else the exit code after fail_with. */
static int ncu_step(struct ncu_ctx *c, char *const *argv, const char *out_path, const char *what,
                    int *code)
{
    struct eb_diag d = {0};
    int wstatus = 0;
    enum child_end end = CHILD_EXITED;
    if (run_child(argv, out_path, c->err_log, c->env->stop, c->timeout_s, &wstatus, &end, &d) !=
        EB_OK) {
        snprintf(c->message, sizeof(c->message), "%s", d.msg);
        *code = fail_with(c, "failed", EB_EXIT_USAGE);
        return 0;
    }
    if (end == CHILD_TIMED_OUT) {
        snprintf(c->message, sizeof(c->message),
                 "%.40s did not finish within %d s (--ncu_timeout_s): stopped; see ncu.log and "
                 "ncu.err.log in %.300s",
                 what, c->timeout_s, c->dir);
        *code = fail_with(c, "timeout", EB_EXIT_USAGE);
        return 0;
    }
    if (end == CHILD_STOPPED || atomic_load(c->env->stop) != 0) {
        snprintf(c->message, sizeof(c->message), "%s: interrupted; stopped", what);
        *code = fail_with(c, "interrupted", EB_EXIT_INTERRUPTED);
        return 0;
    }
    if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
        explain_failure(c, what, wstatus, out_path);
        *code = fail_with(c, "failed", EB_EXIT_USAGE);
        return 0;
    }
    return 1;
}

/* Imports the report as CSV into `csv` (with --print-nvtx-rename kernel when `rename`) and
 * parses it; 0 after fail_with on failure. */
static int import_csv(struct ncu_ctx *c, const char *csv, int rename, struct eb_ncu_table *t,
                      int *code)
{
    char *argv[] = {
        c->ncu,   "--import", c->report, "--csv", "--page", "raw", "--print-nvtx-rename",
        "kernel", NULL};
    if (!rename)
        argv[6] = NULL;
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s", c->dir, csv);
    if (!ncu_step(c, argv, path, "ncu --import", code))
        return 0;
    size_t len = 0;
    char *text = slurp(path, &len);
    struct eb_diag d = {0};
    if (text == NULL) {
        snprintf(c->message, sizeof(c->message), "failed to read %.400s: %s", path,
                 strerror(errno));
        *code = fail_with(c, "failed", EB_EXIT_USAGE);
        return 0;
    }
    enum eb_status st = eb_ncu_csv_parse(text, len, t, &d);
    free(text);
    if (st != EB_OK) {
        snprintf(c->message, sizeof(c->message), "%.200s: %.280s", path, d.msg);
        *code = fail_with(c, "failed", EB_EXIT_USAGE);
        return 0;
    }
    return 1;
}

static int run_ncu(const struct eb_config *cfg, const struct eb_profile_options *po,
                   const struct eb_run_env *env, const char *argv0, const char *dir, int run_code)
{
    struct ncu_ctx *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        fprintf(env->console, "edgebench: error: out of memory for the ncu step\n");
        return EB_EXIT_USAGE;
    }
    c->dir = dir;
    c->env = env;
    c->timeout_s = po->ncu_timeout_s;
    c->info.status = "ok";
    snprintf(c->err_log, sizeof(c->err_log), "%s/ncu.err.log", dir);
    int code = run_code;
    char path[4200];
    char **argv = NULL;
    struct eb_ncu_table raw = {0}, ranges = {0};
    struct eb_ncu_summary sum = {0};

    /* The targets: the slowest nodes of the per-operator profile just written. */
    snprintf(path, sizeof(path), "%s/report.json", dir);
    size_t len = 0;
    char *json = slurp(path, &len);
    struct eb_diag d = {0};
    if (json == NULL) {
        snprintf(c->message, sizeof(c->message), "failed to read %.400s: %s; ncu did not run", path,
                 strerror(errno));
        code = fail_with(c, "failed", EB_EXIT_USAGE);
        goto out;
    }
    /* With --trace, the top kernels of its trace (CUPTI) when it has any; else the nodes. */
    enum eb_status st = EB_OK;
    int by_kernel = 0;
    if (po->trace)
        st = eb_ncu_kernel_targets_from_report(json, len, po->ncu_top, c->targets, &c->n_targets,
                                               &d);
    by_kernel = st == EB_OK && c->n_targets > 0;
    if (st == EB_OK && !by_kernel)
        st = eb_ncu_targets_from_report(json, len, po->ncu_top, c->targets, &c->n_targets, &d);
    free(json);
    if (st != EB_OK || c->n_targets == 0) {
        if (st != EB_OK)
            snprintf(c->message, sizeof(c->message), "%.200s: %.280s", path, d.msg);
        else
            snprintf(c->message, sizeof(c->message),
                     "the run has no per-operator profile to target (ncu finds nodes by the "
                     "native engine's NVTX ranges: --backend native); ncu did not run");
        code = fail_with(c, "no_targets", EB_EXIT_USAGE);
        goto out;
    }

    if (!find_executable(po->ncu_path ? po->ncu_path : "ncu", c->ncu, sizeof(c->ncu))) {
        if (po->ncu_path != NULL)
            snprintf(c->message, sizeof(c->message),
                     "--ncu_path %s: not an executable file; install Nsight Compute or fix "
                     "--ncu_path",
                     po->ncu_path);
        else
            snprintf(c->message, sizeof(c->message),
                     "ncu not found on PATH: install Nsight Compute or pass --ncu_path");
        code = fail_with(c, "unavailable", EB_EXIT_USAGE);
        goto out;
    }
    c->info.ncu = c->ncu;

    /* ncu [options] <self> run <run options> --profile --frames 3 --warmup 1 --output ... */
    char self[4096];
    self_path(argv0, self, sizeof(self));
    char incl[EB_NCU_MAX_TARGETS][EB_NVTX_NAME_MAX + 32];
    char export_base[4200], output[4200];
    snprintf(export_base, sizeof(export_base), "%s/ncu", dir);
    snprintf(c->report, sizeof(c->report), "%s/ncu.ncu-rep", dir);
    snprintf(output, sizeof(output), "%s/ncu-run", dir);
    argv = malloc((2 * c->n_targets + (size_t)po->run_argc + 32) * sizeof(char *));
    if (argv == NULL) {
        snprintf(c->message, sizeof(c->message), "out of memory for the ncu command line");
        code = fail_with(c, "failed", EB_EXIT_USAGE);
        goto out;
    }
    size_t n = 0;
    argv[n++] = c->ncu;
    char kernel_re[EB_NCU_MAX_TARGETS * 2 * 256 + 16];
    if (by_kernel) {
        if (!eb_ncu_kernel_regex(c->targets, c->n_targets, kernel_re, sizeof(kernel_re))) {
            snprintf(c->message, sizeof(c->message),
                     "the kernels' names are too long for ncu's "
                     "--kernel-name filter; ncu did not run");
            code = fail_with(c, "failed", EB_EXIT_USAGE);
            goto out;
        }
        argv[n++] = "--kernel-name-base";
        argv[n++] = "mangled";
        argv[n++] = "--kernel-name";
        argv[n++] = kernel_re;
    } else {
        argv[n++] = "--nvtx";
        for (size_t i = 0; i < c->n_targets; i++) {
            snprintf(incl[i], sizeof(incl[i]), "%s@%s/", EB_NVTX_DOMAIN_OP, c->targets[i].range);
            argv[n++] = "--nvtx-include";
            argv[n++] = incl[i];
        }
    }
    argv[n++] = "--metrics";
    argv[n++] = EB_NCU_METRICS;
    argv[n++] = "--target-processes";
    argv[n++] = "all";
    argv[n++] = "--force-overwrite";
    argv[n++] = "--export";
    argv[n++] = export_base;
    argv[n++] = self;
    argv[n++] = "run";
    for (int i = 0; i < po->run_argc; i++)
        argv[n++] = po->run_argv[i];
    /* The child's run is this profile's instrument, not a run of its own: not in the history. */
    argv[n++] = "--db";
    argv[n++] = "none";
    argv[n++] = "--profile";
    argv[n++] = "--frames";
    argv[n++] = EB_PROFILE_NCU_FRAMES;
    argv[n++] = "--warmup";
    argv[n++] = EB_PROFILE_NCU_WARMUP;
    argv[n++] = "--output";
    argv[n++] = output;
    argv[n] = NULL;
    join_argv(argv, c->command, sizeof(c->command));
    c->info.command = c->command;
    c->info.run_folder = c->run_folder;
    snprintf(c->run_folder, sizeof(c->run_folder), "%s", output);
    if (!cfg->quiet)
        fprintf(env->console, "edgebench: ncu: profiling %s%zu %s%s (output: %s/ncu.log)\n",
                by_kernel ? "the trace's top " : "the kernels of ", c->n_targets,
                by_kernel ? "kernel" : "node", c->n_targets == 1 ? "" : "s", dir);

    snprintf(path, sizeof(path), "%s/ncu.log", dir);
    if (!ncu_step(c, argv, path, "ncu", &code))
        goto out;
    /* ncu writes no report when no kernel matched the filters. */
    if (access(c->report, F_OK) != 0) {
        fprintf(env->console,
                "edgebench: warning: ncu profiled no kernel in these ranges (the cpu device "
                "launches none; --device cuda --backend native)\n");
        code = finish(c, NULL, run_code);
        goto printed;
    }
    c->info.report = c->report;
    if (!import_csv(c, "ncu_raw.csv", 0, &raw, &code) ||
        !import_csv(c, "ncu_ranges.csv", 1, &ranges, &code))
        goto out;
    if (eb_ncu_summarize(&raw, &ranges, c->targets, c->n_targets, &sum, &d) != EB_OK) {
        snprintf(c->message, sizeof(c->message), "%s", d.msg);
        code = fail_with(c, "failed", EB_EXIT_USAGE);
        goto out;
    }
    code = finish(c, &sum, run_code);
printed:
    fprintf(stdout, "ncu: %s/ncu.md\n", dir);
    fflush(stdout);
out:
    eb_ncu_summary_fini(&sum);
    eb_ncu_table_fini(&raw);
    eb_ncu_table_fini(&ranges);
    free(argv);
    free(c);
    return code;
}

/* ---- the nsys step ---- */

/* Runs one nsys command (stdout to out_name, stderr appended to nsys.err.log in `dir`); 0 when
 * it ran to a clean end, else the one-line message is printed and *code set. */
static int nsys_step(char *const *argv, const char *dir, const char *out_name, const char *what,
                     const struct eb_nsys_job *env, int *code)
{
    char out[4200], err_log[4200], line[320] = "";
    snprintf(out, sizeof(out), "%s/%s", dir, out_name);
    snprintf(err_log, sizeof(err_log), "%s/nsys.err.log", dir);
    struct eb_diag d = {0};
    int wstatus = 0;
    enum child_end end = CHILD_EXITED;
    if (run_child(argv, out, err_log, env->stop, EB_PROFILE_NCU_TIMEOUT_DEFAULT, &wstatus, &end,
                  &d) != EB_OK) {
        fprintf(env->console, "edgebench: error: %s\n", d.msg);
        *code = EB_EXIT_USAGE;
        return 0;
    }
    if (end == CHILD_STOPPED || atomic_load(env->stop) != 0) {
        fprintf(env->console, "edgebench: error: %s: interrupted; stopped\n", what);
        *code = EB_EXIT_INTERRUPTED;
        return 0;
    }
    if (end == CHILD_TIMED_OUT || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
        int have = telling_line(err_log, 1, line, sizeof(line));
        fprintf(env->console,
                "edgebench: error: %s failed (%s)%s%s%s; see %s and nsys.err.log in %s\n", what,
                end == CHILD_TIMED_OUT ? "timed out" : "non-zero exit", have ? ": \"" : "",
                have ? line : "", have ? "\"" : "", out_name, dir);
        *code = EB_EXIT_USAGE;
        return 0;
    }
    return 1;
}

int eb_profile_nsys(const struct eb_nsys_job *job, int run_code)
{
    char nsys[4096];
    if (!find_executable("nsys", nsys, sizeof(nsys))) {
        fprintf(job->console, "edgebench: error: nsys not found on PATH: install Nsight Systems "
                              "(the CUDA toolkit's nsight-systems) for --nsys\n");
        return EB_EXIT_USAGE;
    }
    char self[4096], report_base[4200], report[4300], output[4200];
    self_path(job->argv0, self, sizeof(self));
    snprintf(report_base, sizeof(report_base), "%s/nsys", job->dir);
    snprintf(report, sizeof(report), "%s.nsys-rep", report_base);
    snprintf(output, sizeof(output), "%s/nsys-run", job->dir);
    char **argv = malloc(((size_t)job->n_args + 24) * sizeof(char *));
    if (argv == NULL) {
        fprintf(job->console, "edgebench: error: out of memory for the nsys command line\n");
        return EB_EXIT_USAGE;
    }
    size_t n = 0;
    char *fixed[] = {nsys,
                     "profile",
                     "--trace=cuda,nvtx",
                     "--capture-range=nvtx",
                     "--nvtx-capture",
                     (char *)job->capture,
                     "--capture-range-end=stop",
                     "--force-overwrite=true",
                     "--output",
                     report_base,
                     self,
                     (char *)job->subcmd};
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        argv[n++] = fixed[i];
    for (int i = 0; i < job->n_args; i++)
        argv[n++] = job->args[i];
    char *tail[] = {"--db", "none", "--output", output, NULL};
    for (size_t i = 0; i < sizeof(tail) / sizeof(tail[0]); i++)
        argv[n++] = tail[i];
    int code = run_code;
    if (!job->quiet)
        fprintf(job->console,
                "edgebench: nsys: profiling the measured pass (output: %s/nsys.log)\n", job->dir);
    char *stats[] = {nsys, "stats", "--report", "cuda_gpu_kern_sum", "--format", "csv", "--output",
                     "-",  report,  NULL};
    if (nsys_step(argv, job->dir, "nsys.log", "nsys profile", job, &code) &&
        nsys_step(stats, job->dir, "nsys_kernels.csv", "nsys stats", job, &code)) {
        char path[4200];
        snprintf(path, sizeof(path), "%s/nsys_kernels.csv", job->dir);
        size_t len = 0;
        char *text = slurp(path, &len);
        struct eb_kernel_stat top[EB_TRACE_TOP_KERNELS];
        size_t n_top = 0;
        struct eb_diag d = {0};
        if (text == NULL ||
            eb_nsys_kern_sum_parse(text, len, top, EB_TRACE_TOP_KERNELS, &n_top, &d) != EB_OK) {
            fprintf(job->console, "edgebench: error: %s: %s\n", path,
                    text == NULL ? strerror(errno) : d.msg);
            code = EB_EXIT_USAGE;
        } else {
            eb_trace_print_kernels(job->out, "top kernels by total GPU time (nsys):", top, n_top);
            fprintf(job->out, "nsys: %s\n", report);
            fflush(job->out);
        }
        free(text);
    }
    free(argv);
    return code;
}

int eb_profile_run(const struct eb_config *cfg, const struct eb_profile_options *po,
                   const struct eb_run_env *env, const char *argv0)
{
    char dir[4096] = "";
    struct eb_run_env renv = *env;
    renv.dir_out = dir;
    renv.dir_out_size = sizeof(dir);
    int code = eb_run_main(cfg, &renv);
    /* Nothing to profile when nothing ran or Ctrl-C stopped the run (it said so itself). */
    if ((!po->ncu && !po->nsys) || dir[0] == '\0' || code == EB_EXIT_NOTHING_RAN ||
        code == EB_EXIT_INTERRUPTED || atomic_load(env->stop) != 0)
        return code;
    int tool_code = code;
    if (po->nsys) {
        char capture[64];
        snprintf(capture, sizeof(capture), "%s%s@%s",
                 cfg->mode == EB_MODE_THERMAL ? "thermal" : "rgb", EB_NSYS_MEASURE_RANGE_SUFFIX,
                 EB_NVTX_DOMAIN_STAGE);
        const struct eb_nsys_job job = {.subcmd = "run",
                                        .capture = capture,
                                        .args = po->run_argv,
                                        .n_args = po->run_argc,
                                        .dir = dir,
                                        .argv0 = argv0,
                                        .quiet = cfg->quiet,
                                        .stop = env->stop,
                                        .console = env->console,
                                        .out = stdout};
        tool_code = eb_profile_nsys(&job, code);
    }
    if (po->ncu && (tool_code == code || tool_code == EB_EXIT_USAGE) &&
        atomic_load(env->stop) == 0) {
        const int ncu_code = run_ncu(cfg, po, env, argv0, dir, code);
        tool_code = tool_code == EB_EXIT_USAGE ? tool_code : ncu_code;
    }
    return code == EB_EXIT_WRITE_FAILED ? code : tool_code; /* a lost report file comes first */
}
