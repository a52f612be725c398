/*
 * The tegrastats child process: spawned with posix_spawnp in its own process group with its
 * stdout on a pipe; a reader thread polls the pipe (so it notices a stop request even when the
 * child holds the pipe open), parses each line and keeps running aggregates plus the latest
 * parsed line for the sampler thread. Stopping sends SIGTERM to the group, SIGKILL after a
 * short wait, and always reaps the child.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "eb/clock.h"
#include "eb/thread.h"
#include "harness/metrics/sampler.h"

extern char **environ;

#define LINE_MAX_BYTES EB_TEGRASTATS_LINE_MAX
#define POLL_MS        50
#define TERM_WAIT_NS   500000000ull

struct eb_sampler__tegra {
    pid_t pid;
    int fd; /* read end of the pipe; -1 when closed */
    const struct eb_log *log;
    char cmd[128]; /* for messages */
    struct eb_thread reader;
    int reader_started;
    atomic_int stop;

    struct eb_mutex mu; /* guards latest/have_latest and stats.meter */
    int have_latest;
    struct eb_tegra_sample latest;

    /* Owned by the reader thread until it is joined. */
    struct eb_sampler__tegra_stats stats;
    size_t line_len;
    int line_overflow;
    char line[LINE_MAX_BYTES];
    struct eb_tegra_sample parsed;
};

static int blank(const char *s)
{
    for (; *s != '\0'; s++)
        if (*s != ' ' && *s != '\t' && *s != '\r' && *s != '\n')
            return 0;
    return 1;
}

static void handle_line(struct eb_sampler__tegra *t, const char *line, int overflowed)
{
    struct eb_sampler__tegra_stats *st = &t->stats;
    /* The time first, the halt flag after (eb_sampler__tegra_halt): a line read after the
     * sampler's end time is dropped, one kept came before it. */
    const uint64_t now = eb_clock_ns();
    if (atomic_load(&t->stop))
        return;
    if (!overflowed && blank(line))
        return;
    st->lines++;
    if (overflowed) {
        st->bad_lines++;
        return;
    }
    eb_tegrastats_parse_line(line, &t->parsed);
    if (t->parsed.status == EB_TEGRA_MALFORMED) {
        st->bad_lines++;
        return;
    }
    const struct eb_tegra_sample *p = &t->parsed;
    if (isfinite(p->gpu_load_pct)) {
        st->gpu_sum += p->gpu_load_pct;
        if (st->gpu_n == 0 || p->gpu_load_pct > st->gpu_max)
            st->gpu_max = p->gpu_load_pct;
        st->gpu_n++;
    }
    if (isfinite(p->power_total_mw)) {
        double pw = p->power_total_mw;
        st->power_sum += pw;
        if (st->power_n == 0 || pw > st->power_max)
            st->power_max = pw;
        st->power_n++;
    }
    eb_mutex_lock(&t->mu);
    eb_energy_add(&st->meter, now, p->power_total_mw); /* NaN: no reading */
    t->latest = *p;
    t->have_latest = 1;
    eb_mutex_unlock(&t->mu);
}

static void consume(struct eb_sampler__tegra *t, const char *buf, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char c = buf[i];
        if (c == '\n') {
            t->line[t->line_len] = '\0';
            handle_line(t, t->line, t->line_overflow);
            t->line_len = 0;
            t->line_overflow = 0;
        } else if (c == '\0') {
            /* A NUL would cut the line short; treat it as a space. */
            if (t->line_len + 1 < sizeof(t->line))
                t->line[t->line_len++] = ' ';
            else
                t->line_overflow = 1;
        } else if (t->line_len + 1 < sizeof(t->line)) {
            t->line[t->line_len++] = c;
        } else {
            t->line_overflow = 1;
        }
    }
}

static void *reader_main(void *arg)
{
    struct eb_sampler__tegra *t = arg;
    char buf[4096];
    int eof = 0;
    while (!atomic_load(&t->stop)) {
        struct pollfd pfd = {.fd = t->fd, .events = POLLIN};
        int r = poll(&pfd, 1, POLL_MS);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (r == 0)
            continue;
        ssize_t n = read(t->fd, buf, sizeof(buf));
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            break;
        }
        if (n == 0) {
            eof = 1;
            break;
        }
        consume(t, buf, (size_t)n);
    }
    if (eof && t->line_len > 0) {
        t->line[t->line_len] = '\0';
        handle_line(t, t->line, t->line_overflow);
        t->line_len = 0;
    }
    if (eof && !atomic_load(&t->stop) && t->stats.lines == 0) {
        snprintf(t->stats.warning, sizeof(t->stats.warning),
                 "tegrastats not available (%s exited before printing a line); using procfs only",
                 t->cmd);
        eb_log_msg(t->log, EB_LOG_WARN, "%s", t->stats.warning);
    }
    return NULL;
}

static int set_cloexec(int fd)
{
    int flags = fcntl(fd, F_GETFD);
    return flags >= 0 && fcntl(fd, F_SETFD, flags | FD_CLOEXEC) == 0;
}

/*
 * Sends SIGTERM to the child's process group (so a wrapper script's own children go too), waits
 * up to TERM_WAIT_NS, then SIGKILL; always reaps the child.
 */
static void kill_and_reap(pid_t pid)
{
    int status;
    pid_t r;
    kill(-pid, SIGTERM);
    uint64_t deadline = eb_clock_ns() + TERM_WAIT_NS;
    for (;;) {
        r = waitpid(pid, &status, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR))
            break;
        if (eb_clock_ns() >= deadline) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL); /* in case it left its group */
            do {
                r = waitpid(pid, &status, 0);
            } while (r < 0 && errno == EINTR);
            break;
        }
        eb_clock_sleep_ns(5000000ull);
    }
}

enum eb_status eb_sampler__tegra_start(const char *cmd, uint64_t interval_ms,
                                       const struct eb_log *log, struct eb_sampler__tegra **t_out,
                                       struct eb_diag *diag)
{
    enum eb_status st = EB_ERR_NOMEM;
    int fds[2] = {-1, -1};
    int fa_init = 0, attr_init = 0;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    struct eb_sampler__tegra *t = calloc(1, sizeof(*t));
    if (t == NULL) {
        eb_diag_fail(diag, EB_ERR_NOMEM, "out of memory for the tegrastats reader");
        goto fail;
    }
    t->pid = -1;
    t->fd = -1;
    t->log = log;
    atomic_init(&t->stop, 0);
    eb_mutex_init(&t->mu);
    eb_energy_init(&t->stats.meter);
    snprintf(t->cmd, sizeof(t->cmd), "%s", cmd);

    if (pipe(fds) != 0 || !set_cloexec(fds[0]) || !set_cloexec(fds[1])) {
        st = eb_diag_fail(diag, EB_ERR_IO, "cannot create a pipe for %s: %s", cmd, strerror(errno));
        goto fail;
    }
    int rc = posix_spawn_file_actions_init(&fa);
    fa_init = rc == 0;
    if (rc == 0)
        rc = posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    if (rc == 0)
        rc = posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    if (rc == 0)
        rc = posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    if (rc == 0) {
        rc = posix_spawnattr_init(&attr);
        attr_init = rc == 0;
    }
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGTERM);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGPIPE);
    if (rc == 0)
        rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                                 POSIX_SPAWN_SETSIGDEF);
    if (rc == 0)
        rc = posix_spawnattr_setpgroup(&attr, 0);
    if (rc == 0)
        rc = posix_spawnattr_setsigmask(&attr, &none);
    if (rc == 0)
        rc = posix_spawnattr_setsigdefault(&attr, &defaults);
    if (rc != 0) {
        st = eb_diag_fail(diag, EB_ERR_UNSUPPORTED, "cannot prepare to start %s: %s", cmd,
                          strerror(rc));
        goto fail;
    }

    char ms[32];
    snprintf(ms, sizeof(ms), "%llu", (unsigned long long)(interval_ms > 0 ? interval_ms : 1));
    /* posix_spawnp takes non-const strings but does not modify them. */
    char *argv[] = {(char *)cmd, "--interval", ms, NULL};
    pid_t pid = -1;
    rc = posix_spawnp(&pid, cmd, &fa, &attr, argv, environ);
    if (rc != 0) {
        st = eb_diag_fail(diag, EB_ERR_UNSUPPORTED, "%s: %s", cmd, strerror(rc));
        goto fail;
    }
    t->pid = pid;
    close(fds[1]);
    fds[1] = -1;
    t->fd = fds[0];
    fds[0] = -1;

    st = eb_thread_create(&t->reader, reader_main, t, diag);
    if (st != EB_OK)
        goto fail;
    t->reader_started = 1;
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    *t_out = t;
    return EB_OK;

fail:
    if (fa_init)
        posix_spawn_file_actions_destroy(&fa);
    if (attr_init)
        posix_spawnattr_destroy(&attr);
    if (fds[0] >= 0)
        close(fds[0]);
    if (fds[1] >= 0)
        close(fds[1]);
    eb_sampler__tegra_stop(t, NULL);
    return st;
}

int eb_sampler__tegra_latest(struct eb_sampler__tegra *t, struct eb_tegra_sample *out)
{
    if (t == NULL)
        return 0;
    eb_mutex_lock(&t->mu);
    int have = t->have_latest;
    if (have)
        *out = t->latest;
    eb_mutex_unlock(&t->mu);
    return have;
}

pid_t eb_sampler__tegra_pid(const struct eb_sampler__tegra *t)
{
    return t != NULL ? t->pid : -1;
}

void eb_sampler__tegra_halt(struct eb_sampler__tegra *t)
{
    if (t != NULL)
        atomic_store(&t->stop, 1);
}

void eb_sampler__tegra_mark(struct eb_sampler__tegra *t, enum eb_energy_mark which, uint64_t t_ns)
{
    if (t == NULL)
        return;
    eb_mutex_lock(&t->mu);
    eb_energy_mark(&t->stats.meter, which, t_ns);
    eb_mutex_unlock(&t->mu);
}

void eb_sampler__tegra_stop(struct eb_sampler__tegra *t, struct eb_sampler__tegra_stats *stats_out)
{
    if (t == NULL)
        return;
    eb_sampler__tegra_halt(t);
    if (t->pid > 0) {
        kill_and_reap(t->pid);
        t->pid = -1;
    }
    if (t->reader_started)
        eb_thread_join(&t->reader);
    if (t->fd >= 0)
        close(t->fd);
    if (stats_out != NULL)
        *stats_out = t->stats;
    eb_mutex_fini(&t->mu);
    free(t);
}
