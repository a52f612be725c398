/*
 * The run history database (history.h). Every statement is here once, in the SQL that SQLite
 * and PostgreSQL share, with its values bound as parameters ($1, $2, ...; never formatted into
 * SQL); a driver (history_store.h: history_sqlite.c, history_pg.c) runs it. The schema is
 * created in one transaction with its version in `meta`; a later edgebench that changes it adds
 * a migration from each older version here. A PostgreSQL writer that cannot reach its server
 * keeps the run in the local spool (history_sync.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eb/json.h"
#include "harness/results/history.h"
#include "harness/results/history_store.h"
#include "harness/results/sha256.h"

/* Version 3 (2 lacked slots.model_precision and compute_precision; 1 also map50_95 and map50);
 * version 4 adds k_schema_llm, version 5 k_schema_5. Times are ISO 8601 UTC text, latencies ms,
 * memory bytes, energy mJ; NULL = not known (a NaN is stored as NULL). `stats` has a row per
 * measured stage of a slot that ran. The types are SQLite's; PostgreSQL's store writes them as
 * BIGINT and DOUBLE PRECISION (history_pg.c). */
static const char k_schema[] =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE runs("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, started_at TEXT NOT NULL, kind TEXT NOT NULL,"
    " mode TEXT, command_line TEXT, config_json TEXT, duration_s REAL, exit_code INTEGER,"
    " interrupted INTEGER, verdict TEXT, reasons TEXT, output_dir TEXT,"
    " energy_per_frame_mj REAL, edgebench_version TEXT, ort_version TEXT, hostname TEXT,"
    " os TEXT, kernel TEXT, cpu_model TEXT, n_cpus INTEGER, gpu_name TEXT, gpu_driver TEXT,"
    " l4t_release TEXT, power_mode TEXT, fingerprint TEXT);"
    "CREATE TABLE slots("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, slot INTEGER NOT NULL,"
    " name TEXT NOT NULL, status TEXT NOT NULL, message TEXT, model TEXT, model_sha256 TEXT,"
    " model_size INTEGER, backend TEXT, backend_version TEXT, device TEXT, provider TEXT,"
    " precision TEXT, input_w INTEGER, input_h INTEGER, frames INTEGER, warmup_frames INTEGER,"
    " wall_s REAL, fps REAL, mem_peak_bytes INTEGER, energy_per_frame_mj REAL, verdict TEXT,"
    " reasons TEXT, map50_95 REAL, map50 REAL, model_precision TEXT, compute_precision TEXT,"
    " PRIMARY KEY(run_id, slot));"
    "CREATE TABLE stats("
    " run_id INTEGER NOT NULL, slot INTEGER NOT NULL, stage TEXT NOT NULL, n INTEGER NOT NULL,"
    " mean REAL, std REAL, cov REAL, min REAL, p50 REAL, p90 REAL, p95 REAL, p99 REAL,"
    " max REAL, p50_ci_lo REAL, p50_ci_hi REAL, p50_ci_rank_lo INTEGER,"
    " p50_ci_rank_hi INTEGER, p50_ci_coverage REAL, p99_ci_lo REAL, p99_ci_hi REAL,"
    " p99_ci_rank_lo INTEGER, p99_ci_rank_hi INTEGER, p99_ci_coverage REAL,"
    " PRIMARY KEY(run_id, slot, stage),"
    " FOREIGN KEY(run_id, slot) REFERENCES slots(run_id, slot) ON DELETE CASCADE);"
    "CREATE INDEX slots_model ON slots(model);";

/* Version 4: runs of kind "llm" (`edgebench llm`), created with a new database or added to a
 * version-3 one. One `llm` row per llm run (such a run has no `slots` rows); its three latency
 * summaries are `llm_stats` rows, stage "ttft" (time to first token), "prefill" (prefill time)
 * and "decode" (decode latency per token), with the columns of `stats`. They are not `stats`
 * rows because those reference a slot (FOREIGN KEY(run_id, slot)), which an llm run has not.
 * Fractions (prefill_mfu, decode_mbu) are 0..1; seed is the uint64 bit for bit. */
static const char k_schema_llm[] =
    "CREATE TABLE llm("
    " run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE, model TEXT,"
    " model_sha256 TEXT, model_size INTEGER, arch TEXT, size TEXT, params INTEGER, dtype TEXT,"
    " prompt INTEGER, gen INTEGER, reps INTEGER, ctx INTEGER, seed INTEGER, backend TEXT,"
    " backend_version TEXT, device TEXT, provider TEXT, precision TEXT, threads INTEGER,"
    " prefill_tok_s REAL, prefill_tok_s_std REAL, decode_tok_s REAL, decode_tok_s_std REAL,"
    " prefill_mfu REAL, decode_mbu REAL, weight_bytes INTEGER, kv_bytes INTEGER,"
    " peak_mem_bytes INTEGER, verdict TEXT, reasons TEXT);"
    "CREATE TABLE llm_stats("
    " run_id INTEGER NOT NULL REFERENCES llm(run_id) ON DELETE CASCADE, stage TEXT NOT NULL,"
    " n INTEGER NOT NULL, mean REAL, std REAL, cov REAL, min REAL, p50 REAL, p90 REAL,"
    " p95 REAL, p99 REAL, max REAL, p50_ci_lo REAL, p50_ci_hi REAL, p50_ci_rank_lo INTEGER,"
    " p50_ci_rank_hi INTEGER, p50_ci_coverage REAL, p99_ci_lo REAL, p99_ci_hi REAL,"
    " p99_ci_rank_lo INTEGER, p99_ci_rank_hi INTEGER, p99_ci_coverage REAL,"
    " PRIMARY KEY(run_id, stage));"
    "CREATE INDEX llm_model ON llm(model);";

/* Version 5: runs.uuid, the run's key across databases (a board's spool and the shared
 * server: an upload inserts a run only when its uuid is absent), and an index on the board's
 * hostname (`history --host`). Added in two steps: the column, then (once the older runs have
 * been given one each) its unique index. */
static const char k_schema_5_column[] = "ALTER TABLE runs ADD COLUMN uuid TEXT;"
                                        "CREATE INDEX runs_hostname ON runs(hostname);";
static const char k_schema_5_index[] = "CREATE UNIQUE INDEX runs_uuid ON runs(uuid);";

/* The columns of a latency summary in `stats` and `llm_stats`, in the order bind_summary binds
 * and col_summary reads them. */
#define SUMMARY_COLS                                                                               \
    "n, mean, std, cov, min, p50, p90, p95, p99, max, p50_ci_lo, p50_ci_hi, p50_ci_rank_lo,"       \
    " p50_ci_rank_hi, p50_ci_coverage, p99_ci_lo, p99_ci_hi, p99_ci_rank_lo, p99_ci_rank_hi,"      \
    " p99_ci_coverage"
#define SUMMARY_N_COLS 20

/* The llm run's summaries as `llm_stats` stages. */
static const struct {
    const char *stage;
    size_t offset; /* of the struct eb_stat_summary in struct eb_history_llm */
} k_llm_stages[] = {
    {.stage = "ttft", .offset = offsetof(struct eb_history_llm, ttft)},
    {.stage = "prefill", .offset = offsetof(struct eb_history_llm, prefill)},
    {.stage = "decode", .offset = offsetof(struct eb_history_llm, decode)},
};

/* ---- records ----------------------------------------------------------------------------- */

void eb_history_run_fini(struct eb_history_run *run)
{
    if (run == NULL)
        return;
    free(run->config_json);
    run->config_json = NULL;
}

int eb_history_run_is_llm(const struct eb_history_run *run)
{
    return strcmp(run->kind, EB_HISTORY_KIND_LLM) == 0;
}

static void copy_str(char *dst, size_t size, const char *src)
{
    if (snprintf(dst, size, "%s", src != NULL ? src : "") < 0)
        dst[0] = '\0';
}

const char *eb_history_stage_name(int k)
{
    return k == EB_HISTORY_PIPELINE ? "pipeline" : eb_stage_name((enum eb_stage)k);
}

void eb_history_fingerprint(struct eb_history_run *run)
{
    char n[16];
    snprintf(n, sizeof(n), "%d", run->n_cpus);
    const char *facts[] = {
        run->hostname,         run->os,         run->kernel,      run->cpu_model,  n,
        run->gpu_name,         run->gpu_driver, run->l4t_release, run->power_mode, run->ort_version,
        run->edgebench_version};
    struct eb_sha256 h;
    eb_sha256_init(&h);
    for (size_t i = 0; i < EB_ARRAY_LEN(facts); i++)
        eb_sha256_update(&h, facts[i], strlen(facts[i]) + 1); /* the NUL separates */
    char hex[EB_SHA256_HEX_SIZE];
    eb_sha256_final_hex(&h, hex);
    memcpy(run->fingerprint, hex, 16);
    run->fingerprint[16] = '\0';
}

/* ---- targets ----------------------------------------------------------------------------- */

/* libpq's keywords that may open a `key=value` connection string. */
static const char *const k_pg_keywords[] = {
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "passfile",
    "service",
    "sslmode",
    "options",
    "connect_timeout",
    "application_name",
};

int eb_history_is_postgres(const char *target)
{
    if (target == NULL)
        return 0;
    if (strncmp(target, "postgresql://", 13) == 0 || strncmp(target, "postgres://", 11) == 0)
        return 1;
    const size_t n = strcspn(target, " =");
    const char *eq = target + n + strspn(target + n, " ");
    if (*eq != '=')
        return 0;
    for (size_t k = 0; k < EB_ARRAY_LEN(k_pg_keywords); k++)
        if (strlen(k_pg_keywords[k]) == n && strncmp(target, k_pg_keywords[k], n) == 0)
            return 1;
    return 0;
}

void eb_history_redact(const char *target, char *buf, size_t size)
{
    size_t k = 0;
    const char *s = target;
    if (size == 0)
        return;
#define PUT(c)                                                                                     \
    do {                                                                                           \
        if (k + 1 < size)                                                                          \
            buf[k++] = (c);                                                                        \
    } while (0)
    if (eb_history_is_postgres(target) && strstr(target, "://") != NULL) {
        /* scheme://[user[:password]@]host[:port][/db][?key=value&...] */
        const char *auth = strstr(target, "://") + 3;
        const char *at = NULL;
        for (const char *p = auth; *p != '\0' && *p != '/' && *p != '?'; p++)
            if (*p == '@')
                at = p;
        for (; s < auth; s++)
            PUT(*s);
        if (at != NULL) {
            for (; s < at && *s != ':'; s++)
                PUT(*s);
            s = at;
        }
        for (; *s != '\0' && *s != '?'; s++)
            PUT(*s);
        /* the query's parameters, password=... left out */
        int kept = 0;
        while (*s != '\0') {
            s++; /* '?' or '&' */
            const size_t n = strcspn(s, "&");
            if (strncmp(s, "password=", 9) != 0) {
                PUT(kept++ == 0 ? '?' : '&');
                for (size_t i = 0; i < n; i++)
                    PUT(s[i]);
            }
            s += n;
        }
    } else if (eb_history_is_postgres(target)) {
        /* key = value pairs; a value may be quoted ('...', \' escapes) */
        while (*s != '\0') {
            const char *start = s;
            s += strspn(s, " ");
            const int is_pw = strncmp(s, "password", 8) == 0 && (s[8] == '=' || s[8] == ' ');
            s += strcspn(s, "=");
            if (*s == '=')
                s++;
            s += strspn(s, " ");
            if (*s == '\'') {
                for (s++; *s != '\0' && *s != '\''; s++)
                    if (*s == '\\' && s[1] != '\0')
                        s++;
                if (*s == '\'')
                    s++;
            } else {
                s += strcspn(s, " ");
            }
            if (is_pw)
                continue;
            for (const char *p = start; p < s; p++)
                if (p != start || k > 0 || *p != ' ')
                    PUT(*p);
        }
    } else {
        for (; *s != '\0'; s++)
            PUT(*s);
    }
#undef PUT
    buf[k] = '\0';
}

/* The folder of the default database: $XDG_DATA_HOME/edgebench or ~/.local/share/edgebench. */
static int default_dir(char *buf, size_t size, struct eb_diag *diag)
{
    const char *xdg = getenv("XDG_DATA_HOME");
    const char *home = getenv("HOME");
    int n;
    /* The XDG base directory spec: a relative $XDG_DATA_HOME is invalid and ignored. */
    if (xdg != NULL && xdg[0] == '/')
        n = snprintf(buf, size, "%s/edgebench", xdg);
    else if (home != NULL && home[0] != '\0')
        n = snprintf(buf, size, "%s/.local/share/edgebench", home);
    else {
        buf[0] = '\0';
        eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                     "history: no default database ($XDG_DATA_HOME and $HOME are unset); give "
                     "--db PATH or --db none");
        return -1;
    }
    if (n < 0 || (size_t)n >= size) {
        buf[0] = '\0';
        eb_diag_fail(diag, EB_ERR_INVALID_ARG, "history: the database path is too long");
        return -1;
    }
    return 0;
}

int eb_history_path(const char *db, char *buf, size_t size, struct eb_diag *diag)
{
    buf[0] = '\0';
    if (db == NULL) {
        const char *env = getenv("EB_DB");
        if (env != NULL && env[0] != '\0')
            db = env;
    }
    if (db != NULL && strcmp(db, "none") == 0)
        return 0;
    int n;
    if (db != NULL) {
        n = snprintf(buf, size, "%s", db);
    } else {
        char dir[4096];
        if (default_dir(dir, sizeof(dir), diag) != 0)
            return -1;
        n = snprintf(buf, size, "%s/history.db", dir);
    }
    if (n < 0 || (size_t)n >= size) {
        buf[0] = '\0';
        eb_diag_fail(diag, EB_ERR_INVALID_ARG, "history: the database path is too long");
        return -1;
    }
    return 1;
}

int eb_history_spool_path(char *buf, size_t size, struct eb_diag *diag)
{
    char dir[4096];
    if (default_dir(dir, sizeof(dir), diag) != 0)
        return -1;
    const int n = snprintf(buf, size, "%s/" EB_HISTORY_SPOOL_NAME, dir);
    if (n < 0 || (size_t)n >= size) {
        buf[0] = '\0';
        eb_diag_fail(diag, EB_ERR_INVALID_ARG, "history: the spool path is too long");
        return -1;
    }
    return 0;
}

enum eb_status eb_history_uuid_new(char out[EB_HISTORY_UUID_SIZE], struct eb_diag *diag)
{
    unsigned char b[16];
    const int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, b, sizeof(b)) : -1;
    const int err = errno;
    if (fd >= 0)
        close(fd);
    if (got != (ssize_t)sizeof(b))
        return eb_diag_fail(diag, EB_ERR_IO,
                            "history: cannot read /dev/urandom for a run's uuid: %s",
                            got < 0 ? strerror(err) : "short read");
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4: random */
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* the RFC 4122 variant */
    static const char hex[] = "0123456789abcdef";
    size_t k = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[k++] = '-';
        out[k++] = hex[b[i] >> 4];
        out[k++] = hex[b[i] & 15];
    }
    out[k] = '\0';
    return EB_OK;
}

/* ---- statements -------------------------------------------------------------------------- */

/* A statement's parameters, $1 first. */
struct params {
    struct eb_history__val v[EB_HISTORY__MAX_PARAMS];
    int n;
};

static struct eb_history__val *param(struct params *p)
{
    EB_ASSERT(p->n < EB_HISTORY__MAX_PARAMS);
    struct eb_history__val *v = &p->v[p->n++];
    memset(v, 0, sizeof(*v));
    return v;
}

static void p_int(struct params *p, int64_t x)
{
    struct eb_history__val *v = param(p);
    v->kind = EB_HISTORY__INT;
    v->i = x;
}

static void p_u64(struct params *p, uint64_t x)
{
    p_int(p, x > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)x);
}

static void p_null_int(struct params *p)
{
    struct eb_history__val *v = param(p);
    v->kind = EB_HISTORY__INT;
    v->null = 1;
}

/* A double; a NaN or infinity is NULL. */
static void p_dbl(struct params *p, double x)
{
    struct eb_history__val *v = param(p);
    v->kind = EB_HISTORY__REAL;
    v->d = x;
    v->null = !isfinite(x);
}

/* Text; NULL or "" is NULL. */
static void p_text(struct params *p, const char *s)
{
    struct eb_history__val *v = param(p);
    v->kind = EB_HISTORY__TEXT;
    v->s = s;
    v->null = s == NULL || s[0] == '\0';
}

/* Text, "" kept as "". */
static void p_str(struct params *p, const char *s)
{
    struct eb_history__val *v = param(p);
    v->kind = EB_HISTORY__TEXT;
    v->s = s;
}

static enum eb_status db_fail(struct eb_history *h, struct eb_diag *diag, enum eb_status st,
                              const char *what)
{
    return eb_diag_fail(diag, st, "history database %s: %s: %s", h->where, what,
                        h->drv->errmsg(h->conn));
}

/* Runs SQL without parameters or results. */
static enum eb_status exec(struct eb_history *h, const char *sql, struct eb_diag *diag)
{
    if (h->drv->exec(h->conn, sql) == 0)
        return EB_OK;
    return eb_diag_fail(diag, EB_ERR_IO, "history database %s: %s", h->where,
                        h->drv->errmsg(h->conn));
}

/* Runs one statement; its rows or NULL (the failure in diag as "...: what: why"). */
static struct eb_history__rows *query(struct eb_history *h, const char *sql, const struct params *p,
                                      const char *what, struct eb_diag *diag)
{
    struct eb_history__rows *r =
        h->drv->query(h->conn, sql, p != NULL ? p->v : NULL, p != NULL ? p->n : 0);
    if (r == NULL)
        db_fail(h, diag, EB_ERR_IO, what);
    return r;
}

/* Runs one statement to its end. */
static enum eb_status run(struct eb_history *h, const char *sql, const struct params *p,
                          const char *what, struct eb_diag *diag)
{
    struct eb_history__rows *r = query(h, sql, p, what, diag);
    if (r == NULL)
        return EB_ERR_IO;
    int rc;
    while ((rc = h->drv->next(r)) == 1) {
    }
    h->drv->rows_close(r);
    return rc == 0 ? EB_OK : db_fail(h, diag, EB_ERR_IO, what);
}

/* Ends a failed transaction; the failure that led here is the one reported (an uncommitted
 * transaction is discarded by the database even when the rollback itself fails). */
static void rollback(struct eb_history *h)
{
    if (h->conn != NULL)
        (void)h->drv->exec(h->conn, "ROLLBACK");
}

static void col_text(struct eb_history *h, struct eb_history__rows *r, int i, char *dst,
                     size_t size)
{
    copy_str(dst, size, h->drv->text(r, i));
}

static double col_dbl(struct eb_history *h, struct eb_history__rows *r, int i)
{
    return h->drv->is_null(r, i) ? NAN : h->drv->dbl(r, i);
}

static int64_t col_i64(struct eb_history *h, struct eb_history__rows *r, int i)
{
    return h->drv->i64(r, i);
}

static int col_int(struct eb_history *h, struct eb_history__rows *r, int i)
{
    const int64_t v = h->drv->i64(r, i);
    return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int)v;
}

static uint64_t col_u64(struct eb_history *h, struct eb_history__rows *r, int i)
{
    const int64_t v = h->drv->i64(r, i);
    return v > 0 ? (uint64_t)v : 0;
}

/* ---- opening ----------------------------------------------------------------------------- */

/*
 * The schema version in meta: *version_out, or *empty_out = 1 when the database holds none of
 * edgebench's tables, or a status when it is not a history database or a newer one.
 */
static enum eb_status read_version(struct eb_history *h, int *empty_out, long *version_out,
                                   struct eb_diag *diag)
{
    enum eb_status st = EB_ERR_FORMAT;
    *empty_out = 0;
    struct eb_history__rows *r = h->drv->query(h->conn, h->drv->count_tables, NULL, 0);
    if (r == NULL || h->drv->next(r) != 1) {
        st = h->drv == &eb_history__sqlite
                 ? db_fail(h, diag, EB_ERR_FORMAT, "not readable as SQLite (use another --db)")
                 : db_fail(h, diag, EB_ERR_IO, "cannot list the tables");
        goto done;
    }
    if (h->drv->i64(r, 0) == 0) {
        *empty_out = 1;
        st = EB_OK;
        goto done;
    }
    h->drv->rows_close(r);
    r = h->drv->query(h->conn, "SELECT value FROM meta WHERE key = 'schema_version'", NULL, 0);
    if (r == NULL || h->drv->next(r) != 1) {
        st = eb_diag_fail(diag, EB_ERR_FORMAT,
                          "%s is not an edgebench history database (no schema_version in a meta "
                          "table); give another --db",
                          h->where);
        goto done;
    }
    const char *v = h->drv->text(r, 0);
    char *end = NULL;
    long version = v != NULL ? strtol(v, &end, 10) : 0;
    if (v == NULL || end == v || *end != '\0' || version < 1) {
        st = eb_diag_fail(diag, EB_ERR_FORMAT,
                          "%s: bad schema_version '%s' in the meta table; give another --db",
                          h->where, v != NULL ? v : "");
        goto done;
    }
    if (version > EB_HISTORY_SCHEMA_VERSION) {
        st = eb_diag_fail(diag, EB_ERR_FORMAT,
                          "%s has history schema %ld, newer than this edgebench's %d; use a newer "
                          "edgebench or another --db",
                          h->where, version, EB_HISTORY_SCHEMA_VERSION);
        goto done;
    }
    *version_out = version;
    st = EB_OK;
done:
    h->drv->rows_close(r);
    return st;
}

static enum eb_status set_version(struct eb_history *h, int version, struct eb_diag *diag)
{
    char sql[96];
    snprintf(sql, sizeof(sql), "UPDATE meta SET value = '%d' WHERE key = 'schema_version'",
             version);
    return exec(h, sql, diag);
}

/* Version 5's column and indexes; every run without a uuid is given one. */
static enum eb_status upgrade_to_5(struct eb_history *h, struct eb_diag *diag)
{
    enum eb_status st = exec(h, k_schema_5_column, diag);
    int64_t *ids = NULL;
    size_t n = 0, cap = 0;
    struct eb_history__rows *r = NULL;
    if (st == EB_OK)
        r = query(h, "SELECT id FROM runs WHERE uuid IS NULL", NULL, "cannot read the runs", diag);
    if (st == EB_OK && r == NULL)
        st = EB_ERR_IO;
    int rc = 0;
    while (st == EB_OK && (rc = h->drv->next(r)) == 1) {
        if (n == cap) {
            const size_t ncap = cap != 0 ? 2 * cap : 64;
            int64_t *grown = realloc(ids, ncap * sizeof(*ids));
            if (grown == NULL) {
                st = eb_diag_fail(diag, EB_ERR_NOMEM, "history: out of memory");
                break;
            }
            ids = grown;
            cap = ncap;
        }
        ids[n++] = h->drv->i64(r, 0);
    }
    if (st == EB_OK && rc != 0)
        st = db_fail(h, diag, EB_ERR_IO, "cannot read the runs");
    h->drv->rows_close(r);
    for (size_t k = 0; k < n && st == EB_OK; k++) {
        char uuid[EB_HISTORY_UUID_SIZE];
        struct params p = {.n = 0};
        st = eb_history_uuid_new(uuid, diag);
        p_str(&p, uuid);
        p_int(&p, ids[k]);
        if (st == EB_OK)
            st = run(h, "UPDATE runs SET uuid = $1 WHERE id = $2", &p, "cannot give a run its uuid",
                     diag);
    }
    free(ids);
    if (st == EB_OK)
        st = exec(h, k_schema_5_index, diag);
    if (st == EB_OK)
        st = set_version(h, 5, diag);
    return st;
}

static enum eb_status create_schema(struct eb_history *h, struct eb_diag *diag)
{
    char meta[160];
    snprintf(meta, sizeof(meta),
             "INSERT INTO meta(key, value) VALUES('schema_version', '%d'),"
             "('created_by', 'edgebench');",
             EB_HISTORY_SCHEMA_VERSION);
    enum eb_status st = exec(h, k_schema, diag);
    if (st == EB_OK)
        st = exec(h, k_schema_llm, diag);
    if (st == EB_OK)
        st = exec(h, k_schema_5_column, diag);
    if (st == EB_OK)
        st = exec(h, k_schema_5_index, diag);
    if (st == EB_OK)
        st = exec(h, meta, diag);
    return st;
}

/*
 * Checks the schema; with `create` creates it in an empty database and upgrades an older one in
 * place, in one write transaction, so that writers starting together on a new database create
 * it once.
 */
static enum eb_status check_schema(struct eb_history *h, int create, struct eb_diag *diag)
{
    enum eb_status st = EB_OK;
    if (create && (st = exec(h, h->drv->begin_write, diag)) != EB_OK)
        return st;
    if (create && h->drv->lock_schema[0] != '\0')
        st = exec(h, h->drv->lock_schema, diag);
    int empty = 0;
    long version = 0;
    if (st == EB_OK)
        st = read_version(h, &empty, &version, diag);
    if (st == EB_OK && empty) {
        if (!create)
            st = eb_diag_fail(diag, EB_ERR_FORMAT,
                              "%s is an empty database, not an edgebench history; give another "
                              "--db",
                              h->where);
        else
            st = create_schema(h, diag);
        version = EB_HISTORY_SCHEMA_VERSION;
    }
    /* Upgrades in place, one version after the other; columns are only appended. */
    if (st == EB_OK && create && version == 1) { /* the accuracy columns */
        st = exec(h,
                  "ALTER TABLE slots ADD COLUMN map50_95 REAL;"
                  "ALTER TABLE slots ADD COLUMN map50 REAL;",
                  diag);
        if (st == EB_OK)
            st = set_version(h, 2, diag);
        version = 2;
    }
    if (st == EB_OK && create && version == 2) { /* the precisions beside --precision */
        st = exec(h,
                  "ALTER TABLE slots ADD COLUMN model_precision TEXT;"
                  "ALTER TABLE slots ADD COLUMN compute_precision TEXT;",
                  diag);
        if (st == EB_OK)
            st = set_version(h, 3, diag);
        version = 3;
    }
    if (st == EB_OK && create && version == 3) { /* runs of kind llm */
        st = exec(h, k_schema_llm, diag);
        if (st == EB_OK)
            st = set_version(h, 4, diag);
        version = 4;
    }
    if (st == EB_OK && create && version == 4) { /* runs.uuid */
        st = upgrade_to_5(h, diag);
        version = 5;
    }
    h->version = version;
    if (create && st == EB_OK)
        st = exec(h, "COMMIT", diag);
    else if (create)
        rollback(h);
    return st;
}

enum eb_status eb_history__open(const char *target, int create, int spool_fallback,
                                struct eb_history **out, struct eb_diag *diag)
{
    enum eb_status st = EB_ERR_NOMEM;
    struct eb_history *h = calloc(1, sizeof(*h));
    if (h == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "history: out of memory");
    if (snprintf(h->target, sizeof(h->target), "%s", target) >= (int)sizeof(h->target)) {
        st = eb_diag_fail(diag, EB_ERR_INVALID_ARG, "history: the database path is too long");
        goto fail;
    }
    eb_history_redact(target, h->where, sizeof(h->where));
    h->drv = eb_history_is_postgres(target) ? &eb_history__pg : &eb_history__sqlite;
    struct eb_diag cd = {0};
    st = h->drv->open(target, h->where, create, &h->conn, &cd);
    if (st == EB_ERR_IO && create && spool_fallback && h->drv == &eb_history__pg) {
        /* The server cannot be reached: the runs go to the local spool. */
        if ((st = eb_history__spool_start(h, cd.msg, diag)) != EB_OK)
            goto fail;
        *out = h;
        return EB_OK;
    }
    if (st != EB_OK) {
        eb_diag_fail(diag, st, "%s", cd.msg);
        goto fail;
    }
    if ((st = check_schema(h, create, diag)) != EB_OK)
        goto fail;
    if (create && spool_fallback && h->drv == &eb_history__pg)
        eb_history__upload_spooled(h);
    *out = h;
    return EB_OK;
fail:
    eb_history_close(h);
    return st;
}

enum eb_status eb_history_open(const char *target, int create, struct eb_history **out,
                               struct eb_diag *diag)
{
    return eb_history__open(target, create, 1, out, diag);
}

void eb_history_close(struct eb_history *h)
{
    if (h == NULL)
        return;
    eb_history_close(h->spool);
    if (h->drv != NULL)
        h->drv->close(h->conn);
    free(h);
}

const char *eb_history_where(const struct eb_history *h)
{
    return h->last_spooled && h->spool != NULL ? h->spool->where : h->where;
}

int eb_history_spooled(const struct eb_history *h)
{
    return h->last_spooled;
}

int eb_history_take_note(struct eb_history *h, char *buf, size_t size)
{
    if (h->note[0] == '\0')
        return 0;
    copy_str(buf, size, h->note);
    h->note[0] = '\0';
    return 1;
}

/* ---- writing ----------------------------------------------------------------------------- */

/* Appends the SUMMARY_N_COLS values of `x` (SUMMARY_COLS). */
static void p_summary(struct params *p, const struct eb_stat_summary *x)
{
    p_u64(p, x->count);
    p_dbl(p, x->mean);
    p_dbl(p, x->std);
    p_dbl(p, x->cov);
    p_dbl(p, x->min);
    p_dbl(p, x->p50);
    p_dbl(p, x->p90);
    p_dbl(p, x->p95);
    p_dbl(p, x->p99);
    p_dbl(p, x->max);
    const struct eb_stat_ci *cis[2] = {&x->p50_ci, &x->p99_ci};
    for (int c = 0; c < 2; c++) {
        const struct eb_stat_ci *ci = cis[c];
        p_dbl(p, ci->available ? ci->lo : NAN);
        p_dbl(p, ci->available ? ci->hi : NAN);
        if (ci->available) {
            p_u64(p, ci->rank_lo);
            p_u64(p, ci->rank_hi);
        } else {
            p_null_int(p);
            p_null_int(p);
        }
        p_dbl(p, ci->available ? ci->coverage : NAN);
    }
}

/* "$first, $first+1, ..., $last" */
static void placeholders(char *buf, size_t size, int first, int last)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int i = first; i <= last && k < size; i++)
        k += (size_t)snprintf(buf + k, size - k, "%s$%d", i > first ? ", " : "", i);
}

/* The id of the run with key `uuid`: 1 with *id_out, 0 when there is none, -1 on failure. */
static int find_uuid(struct eb_history *h, const char *uuid, int64_t *id_out, struct eb_diag *diag)
{
    struct params p = {.n = 0};
    p_str(&p, uuid);
    struct eb_history__rows *r =
        query(h, "SELECT id FROM runs WHERE uuid = $1", &p, "cannot read the runs", diag);
    if (r == NULL)
        return -1;
    const int rc = h->drv->next(r);
    if (rc == 1)
        *id_out = h->drv->i64(r, 0);
    h->drv->rows_close(r);
    if (rc < 0)
        db_fail(h, diag, EB_ERR_IO, "cannot read the runs");
    return rc;
}

/* Inserts the runs row unless a run with this uuid is there: *id_out is the new row's id, or
 * the present one's with *existed_out = 1. (Looked up first: PostgreSQL draws an id even for
 * an insert that ON CONFLICT then skips; the clause itself settles a race between two
 * uploads.) */
static enum eb_status insert_run(struct eb_history *h, const struct eb_history_run *run,
                                 const char *uuid, int64_t *id_out, int *existed_out,
                                 struct eb_diag *diag)
{
    int found = find_uuid(h, uuid, id_out, diag);
    if (found != 0) {
        *existed_out = found == 1;
        return found == 1 ? EB_OK : EB_ERR_IO;
    }
    static const char cols[] =
        "INSERT INTO runs(uuid, started_at, kind, mode, command_line, config_json, duration_s,"
        " exit_code, interrupted, verdict, reasons, output_dir, energy_per_frame_mj,"
        " edgebench_version, ort_version, hostname, os, kernel, cpu_model, n_cpus, gpu_name,"
        " gpu_driver, l4t_release, power_mode, fingerprint) VALUES(";
    char ph[256], sql[sizeof(cols) + 256 + 64];
    placeholders(ph, sizeof(ph), 1, 25);
    snprintf(sql, sizeof(sql), "%s%s) ON CONFLICT(uuid) DO NOTHING RETURNING id", cols, ph);
    struct params p = {.n = 0};
    p_str(&p, uuid);
    p_str(&p, run->started_at[0] ? run->started_at : "unknown");
    p_str(&p, run->kind[0] ? run->kind : "run");
    p_text(&p, run->mode);
    p_text(&p, run->command_line);
    p_text(&p, run->config_json);
    p_dbl(&p, run->duration_s);
    p_int(&p, run->exit_code);
    p_int(&p, run->interrupted);
    p_text(&p, run->verdict);
    p_text(&p, run->reasons);
    p_text(&p, run->output_dir);
    p_dbl(&p, run->energy_per_frame_mj);
    p_text(&p, run->edgebench_version);
    p_text(&p, run->ort_version);
    p_text(&p, run->hostname);
    p_text(&p, run->os);
    p_text(&p, run->kernel);
    p_text(&p, run->cpu_model);
    p_int(&p, run->n_cpus);
    p_text(&p, run->gpu_name);
    p_text(&p, run->gpu_driver);
    p_text(&p, run->l4t_release);
    p_text(&p, run->power_mode);
    p_text(&p, run->fingerprint);
    struct eb_history__rows *r = query(h, sql, &p, "cannot add the run", diag);
    if (r == NULL)
        return EB_ERR_IO;
    int rc = h->drv->next(r);
    *existed_out = rc == 0;
    if (rc == 1) {
        *id_out = h->drv->i64(r, 0);
        rc = h->drv->next(r);
    }
    h->drv->rows_close(r);
    if (rc != 0)
        return db_fail(h, diag, EB_ERR_IO, "cannot add the run");
    if (!*existed_out)
        return EB_OK;
    found = find_uuid(h, uuid, id_out, diag);
    return found == 1   ? EB_OK
           : found == 0 ? eb_diag_fail(diag, EB_ERR_IO, "history database %s: run %s vanished",
                                       h->where, uuid)
                        : EB_ERR_IO;
}

static enum eb_status insert_slot(struct eb_history *h, int64_t id, const struct eb_history_slot *s,
                                  struct eb_diag *diag)
{
    static const char sql[] =
        "INSERT INTO slots(run_id, slot, name, status, message, model, model_sha256, model_size,"
        " backend, backend_version, device, provider, precision, input_w, input_h, frames,"
        " warmup_frames, wall_s, fps, mem_peak_bytes, energy_per_frame_mj, verdict, reasons,"
        " map50_95, map50, model_precision, compute_precision)"
        " VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,"
        " $19, $20, $21, $22, $23, $24, $25, $26, $27)";
    struct params p = {.n = 0};
    p_int(&p, id);
    p_int(&p, s->index);
    p_str(&p, s->name);
    p_str(&p, s->status[0] ? s->status : "skipped");
    p_text(&p, s->message);
    p_text(&p, s->model);
    p_text(&p, s->model_sha256);
    p_u64(&p, s->model_size);
    p_text(&p, s->backend);
    p_text(&p, s->backend_version);
    p_text(&p, s->device);
    p_text(&p, s->provider);
    p_text(&p, s->precision);
    p_int(&p, s->input_w);
    p_int(&p, s->input_h);
    p_u64(&p, s->frames);
    p_u64(&p, s->warmup_frames);
    p_dbl(&p, s->wall_s);
    p_dbl(&p, s->fps);
    p_u64(&p, s->mem_peak_bytes);
    p_dbl(&p, s->energy_per_frame_mj);
    p_text(&p, s->verdict);
    p_text(&p, s->reasons);
    p_dbl(&p, s->map50_95);
    p_dbl(&p, s->map50);
    p_text(&p, s->model_precision);
    p_text(&p, s->compute_precision);
    enum eb_status st = run(h, sql, &p, "cannot add a slot", diag);
    char ph[256], sql_stat[512];
    placeholders(ph, sizeof(ph), 4, 3 + SUMMARY_N_COLS);
    snprintf(sql_stat, sizeof(sql_stat),
             "INSERT INTO stats(run_id, slot, stage, " SUMMARY_COLS ") VALUES($1, $2, $3, %s)", ph);
    for (int k = 0; k < EB_HISTORY_STAGES && st == EB_OK; k++) {
        const struct eb_stat_summary *x = &s->stages[k];
        if (x->count == 0)
            continue;
        p.n = 0;
        p_int(&p, id);
        p_int(&p, s->index);
        p_str(&p, eb_history_stage_name(k));
        p_summary(&p, x);
        st = run(h, sql_stat, &p, "cannot add a statistic", diag);
    }
    return st;
}

/* The seed, a uint64, in a signed 64-bit integer bit for bit (and back). */
static int64_t seed_to_db(uint64_t v)
{
    int64_t r;
    memcpy(&r, &v, sizeof(r));
    return r;
}

static uint64_t seed_from_db(int64_t v)
{
    uint64_t r;
    memcpy(&r, &v, sizeof(r));
    return r;
}

static enum eb_status insert_llm(struct eb_history *h, int64_t id, const struct eb_history_llm *l,
                                 struct eb_diag *diag)
{
    static const char sql[] =
        "INSERT INTO llm(run_id, model, model_sha256, model_size, arch, size, params, dtype,"
        " prompt, gen, reps, ctx, seed, backend, backend_version, device, provider, precision,"
        " threads, prefill_tok_s, prefill_tok_s_std, decode_tok_s, decode_tok_s_std, prefill_mfu,"
        " decode_mbu, weight_bytes, kv_bytes, peak_mem_bytes, verdict, reasons)"
        " VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,"
        " $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30)";
    struct params p = {.n = 0};
    p_int(&p, id);
    p_text(&p, l->model);
    p_text(&p, l->model_sha256);
    p_u64(&p, l->model_size);
    p_text(&p, l->arch);
    p_text(&p, l->size);
    p_u64(&p, l->params);
    p_text(&p, l->dtype);
    p_int(&p, l->prompt);
    p_int(&p, l->gen);
    p_int(&p, l->reps);
    p_int(&p, l->ctx);
    p_int(&p, seed_to_db(l->seed));
    p_text(&p, l->backend);
    p_text(&p, l->backend_version);
    p_text(&p, l->device);
    p_text(&p, l->provider);
    p_text(&p, l->precision);
    p_int(&p, l->threads);
    p_dbl(&p, l->prefill_tok_s);
    p_dbl(&p, l->prefill_tok_s_std);
    p_dbl(&p, l->decode_tok_s);
    p_dbl(&p, l->decode_tok_s_std);
    p_dbl(&p, l->prefill_mfu);
    p_dbl(&p, l->decode_mbu);
    p_u64(&p, l->weight_bytes);
    p_u64(&p, l->kv_bytes);
    p_u64(&p, l->peak_mem_bytes);
    p_text(&p, l->verdict);
    p_text(&p, l->reasons);
    enum eb_status st = run(h, sql, &p, "cannot add the llm run", diag);
    char ph[256], sql_stat[512];
    placeholders(ph, sizeof(ph), 3, 2 + SUMMARY_N_COLS);
    snprintf(sql_stat, sizeof(sql_stat),
             "INSERT INTO llm_stats(run_id, stage, " SUMMARY_COLS ") VALUES($1, $2, %s)", ph);
    for (size_t k = 0; k < EB_ARRAY_LEN(k_llm_stages) && st == EB_OK; k++) {
        const struct eb_stat_summary *x =
            (const struct eb_stat_summary *)((const char *)l + k_llm_stages[k].offset);
        if (x->count == 0)
            continue;
        p.n = 0;
        p_int(&p, id);
        p_str(&p, k_llm_stages[k].stage);
        p_summary(&p, x);
        st = run(h, sql_stat, &p, "cannot add an llm statistic", diag);
    }
    return st;
}

enum eb_status eb_history__insert(struct eb_history *h, const struct eb_history_run *run_rec,
                                  const char *uuid, const char *pending_target, int64_t *id_out,
                                  int *existed_out, struct eb_diag *diag)
{
    enum eb_status st = exec(h, h->drv->begin_write, diag);
    if (st != EB_OK)
        return st;
    int64_t id = 0;
    int existed = 0;
    st = insert_run(h, run_rec, uuid, &id, &existed, diag);
    if (st == EB_OK && !existed && eb_history_run_is_llm(run_rec))
        st = insert_llm(h, id, &run_rec->llm, diag);
    for (int i = 0; i < EB_NUM_SLOTS && st == EB_OK && !existed && !eb_history_run_is_llm(run_rec);
         i++)
        st = insert_slot(h, id, &run_rec->slots[i], diag);
    if (st == EB_OK && pending_target != NULL) {
        struct params p = {.n = 0};
        p_str(&p, uuid);
        p_str(&p, pending_target);
        st = run(h, "INSERT INTO pending(uuid, target) VALUES($1, $2) ON CONFLICT(uuid) DO NOTHING",
                 &p, "cannot keep the run for upload", diag);
    }
    if (st == EB_OK)
        st = exec(h, "COMMIT", diag);
    if (st != EB_OK) {
        rollback(h);
        return st;
    }
    *id_out = id;
    if (existed_out != NULL)
        *existed_out = existed;
    return EB_OK;
}

enum eb_status eb_history_append(struct eb_history *h, const struct eb_history_run *run_rec,
                                 int64_t *id_out, struct eb_diag *diag)
{
    char uuid[EB_HISTORY_UUID_SIZE];
    enum eb_status st = EB_OK;
    if (run_rec->uuid[0] != '\0')
        copy_str(uuid, sizeof(uuid), run_rec->uuid);
    else if ((st = eb_history_uuid_new(uuid, diag)) != EB_OK)
        return st;
    h->last_spooled = 0;
    if (h->conn != NULL) {
        struct eb_diag d = {0};
        st = eb_history__insert(h, run_rec, uuid, NULL, id_out, NULL, &d);
        if (st == EB_OK)
            return EB_OK;
        if (h->drv != &eb_history__pg || !h->drv->lost(h->conn))
            return eb_diag_fail(diag, st, "%s", d.msg);
        /* The server went away: this run and the next ones go to the spool. */
        h->drv->close(h->conn);
        h->conn = NULL;
        if ((st = eb_history__spool_start(h, d.msg, diag)) != EB_OK)
            return st;
    }
    EB_ASSERT(h->spool != NULL); /* a handle without a connection is a spooling one */
    st = eb_history__insert(h->spool, run_rec, uuid, h->target, id_out, NULL, diag);
    if (st == EB_OK)
        h->last_spooled = 1;
    return st;
}

/* ---- reading ----------------------------------------------------------------------------- */

static enum eb_status read_run_row(struct eb_history *h, int64_t id, struct eb_history_run *out,
                                   struct eb_diag *diag)
{
    char sql[512];
    snprintf(sql, sizeof(sql),
             "SELECT started_at, kind, mode, command_line, config_json, duration_s, exit_code,"
             " interrupted, verdict, reasons, output_dir, energy_per_frame_mj, edgebench_version,"
             " ort_version, hostname, os, kernel, cpu_model, n_cpus, gpu_name, gpu_driver,"
             " l4t_release, power_mode, fingerprint, %s FROM runs WHERE id = $1",
             h->version >= 5 ? "uuid" : "NULL"); /* before 5, runs have no uuid */
    struct params p = {.n = 0};
    p_int(&p, id);
    enum eb_status st = EB_OK;
    struct eb_history__rows *r = query(h, sql, &p, "cannot read the runs", diag);
    if (r == NULL)
        return EB_ERR_IO;
    const int rc = h->drv->next(r);
    if (rc == 0) {
        st = eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                          "no run %lld in %s; edgebench history --db %s lists the runs",
                          (long long)id, h->where, h->where);
        goto done;
    }
    if (rc != 1) {
        st = db_fail(h, diag, EB_ERR_IO, "cannot read the runs");
        goto done;
    }
    int i = 0;
    out->id = id;
    col_text(h, r, i++, out->started_at, sizeof(out->started_at));
    col_text(h, r, i++, out->kind, sizeof(out->kind));
    col_text(h, r, i++, out->mode, sizeof(out->mode));
    col_text(h, r, i++, out->command_line, sizeof(out->command_line));
    const char *cj = h->drv->text(r, i++);
    if (cj != NULL && (out->config_json = strdup(cj)) == NULL) {
        st = eb_diag_fail(diag, EB_ERR_NOMEM, "history: out of memory");
        goto done;
    }
    out->duration_s = col_dbl(h, r, i++);
    out->exit_code = col_int(h, r, i++);
    out->interrupted = col_int(h, r, i++);
    col_text(h, r, i++, out->verdict, sizeof(out->verdict));
    col_text(h, r, i++, out->reasons, sizeof(out->reasons));
    col_text(h, r, i++, out->output_dir, sizeof(out->output_dir));
    out->energy_per_frame_mj = col_dbl(h, r, i++);
    col_text(h, r, i++, out->edgebench_version, sizeof(out->edgebench_version));
    col_text(h, r, i++, out->ort_version, sizeof(out->ort_version));
    col_text(h, r, i++, out->hostname, sizeof(out->hostname));
    col_text(h, r, i++, out->os, sizeof(out->os));
    col_text(h, r, i++, out->kernel, sizeof(out->kernel));
    col_text(h, r, i++, out->cpu_model, sizeof(out->cpu_model));
    out->n_cpus = col_int(h, r, i++);
    col_text(h, r, i++, out->gpu_name, sizeof(out->gpu_name));
    col_text(h, r, i++, out->gpu_driver, sizeof(out->gpu_driver));
    col_text(h, r, i++, out->l4t_release, sizeof(out->l4t_release));
    col_text(h, r, i++, out->power_mode, sizeof(out->power_mode));
    col_text(h, r, i++, out->fingerprint, sizeof(out->fingerprint));
    col_text(h, r, i++, out->uuid, sizeof(out->uuid));
done:
    h->drv->rows_close(r);
    return st;
}

static enum eb_status read_slots(struct eb_history *h, struct eb_history_run *out,
                                 struct eb_diag *diag)
{
    /* Columns a database of an older schema lacks read as NULL: schema 1 has no accuracy
     * columns, 1 and 2 no model/compute precision. */
    static const char *const tails[] = {
        [1] = "NULL, NULL, NULL, NULL",
        [2] = "map50_95, map50, NULL, NULL",
        [3] = "map50_95, map50, model_precision, compute_precision",
    };
    char sql[640];
    snprintf(sql, sizeof(sql),
             "SELECT slot, name, status, message, model, model_sha256, model_size, backend,"
             " backend_version, device, provider, precision, input_w, input_h, frames,"
             " warmup_frames, wall_s, fps, mem_peak_bytes, energy_per_frame_mj, verdict, reasons,"
             " %s FROM slots WHERE run_id = $1 ORDER BY slot",
             tails[h->version < 3 ? h->version : 3]);
    struct params p = {.n = 0};
    p_int(&p, out->id);
    struct eb_history__rows *r = query(h, sql, &p, "cannot read the slots", diag);
    if (r == NULL)
        return EB_ERR_IO;
    int rc;
    while ((rc = h->drv->next(r)) == 1) {
        const int idx = col_int(h, r, 0);
        if (idx < 0 || idx >= EB_NUM_SLOTS)
            continue;
        struct eb_history_slot *s = &out->slots[idx];
        int i = 0;
        s->index = col_int(h, r, i++);
        col_text(h, r, i++, s->name, sizeof(s->name));
        col_text(h, r, i++, s->status, sizeof(s->status));
        col_text(h, r, i++, s->message, sizeof(s->message));
        col_text(h, r, i++, s->model, sizeof(s->model));
        col_text(h, r, i++, s->model_sha256, sizeof(s->model_sha256));
        s->model_size = col_u64(h, r, i++);
        col_text(h, r, i++, s->backend, sizeof(s->backend));
        col_text(h, r, i++, s->backend_version, sizeof(s->backend_version));
        col_text(h, r, i++, s->device, sizeof(s->device));
        col_text(h, r, i++, s->provider, sizeof(s->provider));
        col_text(h, r, i++, s->precision, sizeof(s->precision));
        s->input_w = col_int(h, r, i++);
        s->input_h = col_int(h, r, i++);
        s->frames = col_u64(h, r, i++);
        s->warmup_frames = col_u64(h, r, i++);
        s->wall_s = col_dbl(h, r, i++);
        s->fps = col_dbl(h, r, i++);
        s->mem_peak_bytes = col_u64(h, r, i++);
        s->energy_per_frame_mj = col_dbl(h, r, i++);
        col_text(h, r, i++, s->verdict, sizeof(s->verdict));
        col_text(h, r, i++, s->reasons, sizeof(s->reasons));
        s->map50_95 = col_dbl(h, r, i++);
        s->map50 = col_dbl(h, r, i++);
        col_text(h, r, i++, s->model_precision, sizeof(s->model_precision));
        col_text(h, r, i++, s->compute_precision, sizeof(s->compute_precision));
    }
    h->drv->rows_close(r);
    return rc == 0 ? EB_OK : db_fail(h, diag, EB_ERR_IO, "cannot read the slots");
}

static void col_ci(struct eb_history *h, struct eb_history__rows *r, int i, struct eb_stat_ci *ci)
{
    memset(ci, 0, sizeof(*ci));
    if (h->drv->is_null(r, i) || h->drv->is_null(r, i + 1))
        return;
    ci->available = 1;
    ci->lo = h->drv->dbl(r, i);
    ci->hi = h->drv->dbl(r, i + 1);
    ci->rank_lo = col_u64(h, r, i + 2);
    ci->rank_hi = col_u64(h, r, i + 3);
    ci->coverage = col_dbl(h, r, i + 4);
}

/* Reads the SUMMARY_N_COLS columns from column `i` on (SUMMARY_COLS) into `x`. */
static void col_summary(struct eb_history *h, struct eb_history__rows *r, int i,
                        struct eb_stat_summary *x)
{
    x->count = col_u64(h, r, i);
    x->mean = col_dbl(h, r, i + 1);
    x->std = col_dbl(h, r, i + 2);
    x->cov = col_dbl(h, r, i + 3);
    x->min = col_dbl(h, r, i + 4);
    x->p50 = col_dbl(h, r, i + 5);
    x->p90 = col_dbl(h, r, i + 6);
    x->p95 = col_dbl(h, r, i + 7);
    x->p99 = col_dbl(h, r, i + 8);
    x->max = col_dbl(h, r, i + 9);
    x->fps = x->mean > 0 ? 1000.0 / x->mean : 0.0;
    col_ci(h, r, i + 10, &x->p50_ci);
    col_ci(h, r, i + 15, &x->p99_ci);
}

static enum eb_status read_stats(struct eb_history *h, struct eb_history_run *out,
                                 struct eb_diag *diag)
{
    static const char sql[] = "SELECT slot, stage, " SUMMARY_COLS " FROM stats WHERE run_id = $1";
    struct params p = {.n = 0};
    p_int(&p, out->id);
    struct eb_history__rows *r = query(h, sql, &p, "cannot read the statistics", diag);
    if (r == NULL)
        return EB_ERR_IO;
    int rc;
    while ((rc = h->drv->next(r)) == 1) {
        const int idx = col_int(h, r, 0);
        const char *stage = h->drv->text(r, 1);
        int st = -1;
        for (int k = 0; k < EB_HISTORY_STAGES && stage != NULL; k++)
            if (strcmp(stage, eb_history_stage_name(k)) == 0)
                st = k;
        if (idx < 0 || idx >= EB_NUM_SLOTS || st < 0)
            continue; /* a stage a later edgebench added */
        col_summary(h, r, 2, &out->slots[idx].stages[st]);
    }
    h->drv->rows_close(r);
    return rc == 0 ? EB_OK : db_fail(h, diag, EB_ERR_IO, "cannot read the statistics");
}

/* The llm row and its statistics of llm run out->id (schema 4 on); none leaves out->llm as
 * eb_history_get set it (nothing measured). */
static enum eb_status read_llm(struct eb_history *h, struct eb_history_run *out,
                               struct eb_diag *diag)
{
    static const char sql[] =
        "SELECT model, model_sha256, model_size, arch, size, params, dtype, prompt, gen, reps, ctx,"
        " seed, backend, backend_version, device, provider, precision, threads, prefill_tok_s,"
        " prefill_tok_s_std, decode_tok_s, decode_tok_s_std, prefill_mfu, decode_mbu,"
        " weight_bytes, kv_bytes, peak_mem_bytes, verdict, reasons FROM llm WHERE run_id = $1";
    struct eb_history_llm *l = &out->llm;
    struct params p = {.n = 0};
    p_int(&p, out->id);
    struct eb_history__rows *r = query(h, sql, &p, "cannot read the llm run", diag);
    if (r == NULL)
        return EB_ERR_IO;
    int rc = h->drv->next(r);
    if (rc == 1) {
        int i = 0;
        col_text(h, r, i++, l->model, sizeof(l->model));
        col_text(h, r, i++, l->model_sha256, sizeof(l->model_sha256));
        l->model_size = col_u64(h, r, i++);
        col_text(h, r, i++, l->arch, sizeof(l->arch));
        col_text(h, r, i++, l->size, sizeof(l->size));
        l->params = col_u64(h, r, i++);
        col_text(h, r, i++, l->dtype, sizeof(l->dtype));
        l->prompt = col_int(h, r, i++);
        l->gen = col_int(h, r, i++);
        l->reps = col_int(h, r, i++);
        l->ctx = col_int(h, r, i++);
        l->seed = seed_from_db(col_i64(h, r, i++));
        col_text(h, r, i++, l->backend, sizeof(l->backend));
        col_text(h, r, i++, l->backend_version, sizeof(l->backend_version));
        col_text(h, r, i++, l->device, sizeof(l->device));
        col_text(h, r, i++, l->provider, sizeof(l->provider));
        col_text(h, r, i++, l->precision, sizeof(l->precision));
        l->threads = col_int(h, r, i++);
        l->prefill_tok_s = col_dbl(h, r, i++);
        l->prefill_tok_s_std = col_dbl(h, r, i++);
        l->decode_tok_s = col_dbl(h, r, i++);
        l->decode_tok_s_std = col_dbl(h, r, i++);
        l->prefill_mfu = col_dbl(h, r, i++);
        l->decode_mbu = col_dbl(h, r, i++);
        l->weight_bytes = col_u64(h, r, i++);
        l->kv_bytes = col_u64(h, r, i++);
        l->peak_mem_bytes = col_u64(h, r, i++);
        col_text(h, r, i++, l->verdict, sizeof(l->verdict));
        col_text(h, r, i++, l->reasons, sizeof(l->reasons));
        rc = h->drv->next(r); /* run_id is the key: no second row */
    }
    h->drv->rows_close(r);
    if (rc != 0)
        return db_fail(h, diag, EB_ERR_IO, "cannot read the llm run");
    static const char sql_stat[] =
        "SELECT stage, " SUMMARY_COLS " FROM llm_stats WHERE run_id = $1";
    r = query(h, sql_stat, &p, "cannot read the llm statistics", diag);
    if (r == NULL)
        return EB_ERR_IO;
    while ((rc = h->drv->next(r)) == 1) {
        const char *stage = h->drv->text(r, 0);
        for (size_t k = 0; k < EB_ARRAY_LEN(k_llm_stages) && stage != NULL; k++)
            if (strcmp(stage, k_llm_stages[k].stage) == 0) /* else a later edgebench's stage */
                col_summary(h, r, 1,
                            (struct eb_stat_summary *)((char *)l + k_llm_stages[k].offset));
    }
    h->drv->rows_close(r);
    return rc == 0 ? EB_OK : db_fail(h, diag, EB_ERR_IO, "cannot read the llm statistics");
}

enum eb_status eb_history_get(struct eb_history *h, int64_t id, struct eb_history_run *out,
                              struct eb_diag *diag)
{
    memset(out, 0, sizeof(*out));
    if (h->conn == NULL)
        return eb_diag_fail(diag, EB_ERR_IO, "history database %s cannot be reached", h->where);
    struct eb_history_llm *l = &out->llm;
    l->prefill_tok_s = l->prefill_tok_s_std = l->decode_tok_s = l->decode_tok_s_std = NAN;
    l->prefill_mfu = l->decode_mbu = NAN;
    for (int i = 0; i < EB_NUM_SLOTS; i++) {
        out->slots[i].index = i;
        copy_str(out->slots[i].name, sizeof(out->slots[i].name), i == 0 ? "rgb" : "thermal");
        copy_str(out->slots[i].status, sizeof(out->slots[i].status), "skipped");
    }
    enum eb_status st = read_run_row(h, id, out, diag);
    if (st == EB_OK)
        st = read_slots(h, out, diag);
    if (st == EB_OK)
        st = read_stats(h, out, diag);
    /* A database before schema 4 has no llm table, and no llm runs. */
    if (st == EB_OK && h->version >= 4 && eb_history_run_is_llm(out))
        st = read_llm(h, out, diag);
    if (st != EB_OK)
        eb_history_run_fini(out);
    return st;
}

static int slot_matches(const struct eb_history_slot *s, const struct eb_history_filter *f)
{
    if (strcmp(s->status, "skipped") == 0)
        return 0;
    if (f->model != NULL && strstr(s->model, f->model) == NULL)
        return 0;
    if (f->backend != NULL && strcmp(s->backend, f->backend) != 0)
        return 0;
    if (f->device != NULL && strcmp(s->device, f->device) != 0)
        return 0;
    return 1;
}

static int llm_matches(const struct eb_history_llm *l, const struct eb_history_filter *f)
{
    if (f->model != NULL && strstr(l->model, f->model) == NULL)
        return 0;
    if (f->backend != NULL && strcmp(l->backend, f->backend) != 0)
        return 0;
    if (f->device != NULL && strcmp(l->device, f->device) != 0)
        return 0;
    return 1;
}

enum eb_status eb_history_list(struct eb_history *h, const struct eb_history_filter *filter,
                               eb_history_row_fn fn, void *ctx, struct eb_diag *diag)
{
    /* The runs of the host with a slot that matches, and (schema 4 on) the llm runs that
     * match; %1$s is the driver's substring function. */
    static const char sql_slots[] =
        "SELECT r.id FROM runs r WHERE ($5 IS NULL OR r.hostname = $5) AND (EXISTS(SELECT 1"
        " FROM slots s WHERE s.run_id = r.id AND s.status != 'skipped'"
        " AND ($1 IS NULL OR %s(s.model, $1) > 0)"
        " AND ($2 IS NULL OR s.backend = $2) AND ($3 IS NULL OR s.device = $3))";
    static const char sql_llm[] =
        " OR (r.kind = '" EB_HISTORY_KIND_LLM "' AND EXISTS(SELECT 1 FROM llm l"
        " WHERE l.run_id = r.id AND ($1 IS NULL OR %s(l.model, $1) > 0)"
        " AND ($2 IS NULL OR l.backend = $2) AND ($3 IS NULL OR l.device = $3)))";
    static const char sql_order[] = ") ORDER BY r.id DESC LIMIT $4";
    char sql[sizeof(sql_slots) + sizeof(sql_llm) + sizeof(sql_order) + 64];
    int k = snprintf(sql, sizeof(sql), sql_slots, h->drv->instr);
    if (h->version >= 4)
        k += snprintf(sql + k, sizeof(sql) - (size_t)k, sql_llm, h->drv->instr);
    snprintf(sql + k, sizeof(sql) - (size_t)k, "%s", sql_order);
    enum eb_status st = EB_OK;
    struct eb_history__rows *r = NULL;
    int64_t *ids = NULL;
    size_t n = 0, cap = 0;
    if (h->conn == NULL)
        return eb_diag_fail(diag, EB_ERR_IO, "history database %s cannot be reached", h->where);
    struct eb_history_run *rec = calloc(1, sizeof(*rec));
    if (rec == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "history: out of memory");
    struct params p = {.n = 0};
    p_text(&p, filter->model);
    p_text(&p, filter->backend);
    p_text(&p, filter->device);
    p_int(&p, filter->limit > 0 ? filter->limit : INT64_MAX);
    p_text(&p, filter->host);
    /* The ids first: the runs are read with other statements. */
    r = query(h, sql, &p, "cannot list the runs", diag);
    if (r == NULL) {
        st = EB_ERR_IO;
        goto done;
    }
    int rc;
    while ((rc = h->drv->next(r)) == 1) {
        if (n == cap) {
            size_t ncap = cap ? 2 * cap : 64;
            int64_t *grown = realloc(ids, ncap * sizeof(*ids));
            if (grown == NULL) {
                st = eb_diag_fail(diag, EB_ERR_NOMEM, "history: out of memory");
                goto done;
            }
            ids = grown;
            cap = ncap;
        }
        ids[n++] = h->drv->i64(r, 0);
    }
    if (rc != 0) {
        st = db_fail(h, diag, EB_ERR_IO, "cannot list the runs");
        goto done;
    }
    h->drv->rows_close(r);
    r = NULL;
    for (size_t j = 0; j < n && st == EB_OK; j++) {
        st = eb_history_get(h, ids[j], rec, diag);
        if (st != EB_OK)
            break;
        struct eb_history_row row = {.id = rec->id,
                                     .started_at = rec->started_at,
                                     .kind = rec->kind,
                                     .mode = rec->mode,
                                     .run_verdict = rec->verdict,
                                     .host = rec->hostname,
                                     .uuid = rec->uuid};
        if (eb_history_run_is_llm(rec) && llm_matches(&rec->llm, filter)) {
            row.llm = &rec->llm;
            fn(ctx, &row);
        }
        for (int i = 0; i < EB_NUM_SLOTS && !eb_history_run_is_llm(rec); i++) {
            if (!slot_matches(&rec->slots[i], filter))
                continue;
            row.slot = &rec->slots[i];
            fn(ctx, &row);
        }
        eb_history_run_fini(rec);
    }
done:
    h->drv->rows_close(r);
    free(ids);
    eb_history_run_fini(rec);
    free(rec);
    return st;
}
