/*
 * The run history database (history.h): SQLite, through prepared statements only (values are
 * bound, never formatted into SQL). The schema is created in one transaction with its version
 * in `meta`; a later edgebench that changes it adds a migration from each older version here.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "eb/json.h"
#include "eb/path.h"
#include "harness/results/history.h"
#include "harness/results/sha256.h"

struct eb_history {
    sqlite3 *db;
    char path[4096];
    long version; /* the database's schema version */
};

/* Version 3 (2 lacked slots.model_precision and compute_precision; 1 also map50_95 and map50);
 * version 4 adds k_schema_llm. Times are ISO 8601 UTC text, latencies ms, memory bytes, energy
 * mJ; NULL = not known (a NaN is stored as NULL). `stats` has a row per measured stage of a slot
 * that ran. */
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

/* The columns of a latency summary in `stats` and `llm_stats`, in the order bind_summary binds
 * and col_summary reads them. */
#define SUMMARY_COLS                                                                               \
    "n, mean, std, cov, min, p50, p90, p95, p99, max, p50_ci_lo, p50_ci_hi, p50_ci_rank_lo,"       \
    " p50_ci_rank_hi, p50_ci_coverage, p99_ci_lo, p99_ci_hi, p99_ci_rank_lo, p99_ci_rank_hi,"      \
    " p99_ci_coverage"
#define SUMMARY_N_COLS 20
#define SUMMARY_PARAMS "?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?"
_Static_assert(sizeof(SUMMARY_PARAMS) == 2 * SUMMARY_N_COLS, "one parameter per summary column");

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

/* ---- paths ------------------------------------------------------------------------------- */

int eb_history_path(const char *db, char *buf, size_t size, struct eb_diag *diag)
{
    buf[0] = '\0';
    if (db != NULL && strcmp(db, "none") == 0)
        return 0;
    int n;
    if (db != NULL) {
        n = snprintf(buf, size, "%s", db);
    } else {
        const char *xdg = getenv("XDG_DATA_HOME");
        const char *home = getenv("HOME");
        /* The XDG base directory spec: a relative $XDG_DATA_HOME is invalid and ignored. */
        if (xdg != NULL && xdg[0] == '/')
            n = snprintf(buf, size, "%s/edgebench/history.db", xdg);
        else if (home != NULL && home[0] != '\0')
            n = snprintf(buf, size, "%s/.local/share/edgebench/history.db", home);
        else {
            eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                         "history: no default database ($XDG_DATA_HOME and $HOME are unset); "
                         "give --db PATH or --db none");
            return -1;
        }
    }
    if (n < 0 || (size_t)n >= size) {
        buf[0] = '\0';
        eb_diag_fail(diag, EB_ERR_INVALID_ARG, "history: the database path is too long");
        return -1;
    }
    return 1;
}

/* Creates the folders of `path`'s parent. */
static enum eb_status mkdir_parents(const char *path, struct eb_diag *diag)
{
    char dir[4096], failed[4096];
    if (strlen(path) >= sizeof(dir))
        return eb_diag_fail(diag, EB_ERR_IO, "history: the database path is too long");
    eb_path_dir(path, dir, sizeof(dir));
    const int err = eb_path_mkdir_p(dir, failed, sizeof(failed));
    if (err != 0)
        return eb_diag_fail(diag, EB_ERR_IO, "history: cannot create folder %s: %s", failed,
                            strerror(err));
    return EB_OK;
}

/* ---- database ---------------------------------------------------------------------------- */

static enum eb_status db_fail(struct eb_history *h, struct eb_diag *diag, enum eb_status st,
                              const char *what)
{
    return eb_diag_fail(diag, st, "history database %s: %s: %s", h->path, what,
                        sqlite3_errmsg(h->db));
}

/* Runs SQL without results. */
static enum eb_status exec(struct eb_history *h, const char *sql, struct eb_diag *diag)
{
    char *err = NULL;
    if (sqlite3_exec(h->db, sql, NULL, NULL, &err) == SQLITE_OK)
        return EB_OK;
    enum eb_status st =
        eb_diag_fail(diag, EB_ERR_IO, "history database %s: %s", h->path, err ? err : "error");
    sqlite3_free(err);
    return st;
}

/* Ends a failed transaction; the failure that led here is the one reported (an uncommitted
 * transaction is discarded by SQLite even when the rollback itself fails). */
static void rollback(struct eb_history *h)
{
    sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
}

/*
 * The schema version in meta: 1 and *version_out, or 0 when the database has no table at all
 * (empty), or a status when it is not a history database.
 */
static enum eb_status read_version(struct eb_history *h, int *empty_out, long *version_out,
                                   struct eb_diag *diag)
{
    sqlite3_stmt *q = NULL;
    enum eb_status st = EB_ERR_FORMAT;
    *empty_out = 0;
    if (sqlite3_prepare_v2(h->db, "SELECT count(*) FROM sqlite_master", -1, &q, NULL) !=
            SQLITE_OK ||
        sqlite3_step(q) != SQLITE_ROW) {
        st = db_fail(h, diag, EB_ERR_FORMAT, "not readable as SQLite (use another --db)");
        goto done;
    }
    if (sqlite3_column_int64(q, 0) == 0) {
        *empty_out = 1;
        st = EB_OK;
        goto done;
    }
    sqlite3_finalize(q);
    q = NULL;
    if (sqlite3_prepare_v2(h->db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &q,
                           NULL) != SQLITE_OK ||
        sqlite3_step(q) != SQLITE_ROW) {
        st = eb_diag_fail(diag, EB_ERR_FORMAT,
                          "%s is not an edgebench history database (no schema_version in a meta "
                          "table); give another --db",
                          h->path);
        goto done;
    }
    const char *v = (const char *)sqlite3_column_text(q, 0);
    char *end = NULL;
    long version = v != NULL ? strtol(v, &end, 10) : 0;
    if (v == NULL || end == v || *end != '\0' || version < 1) {
        st = eb_diag_fail(diag, EB_ERR_FORMAT,
                          "%s: bad schema_version '%s' in the meta table; give another --db",
                          h->path, v != NULL ? v : "");
        goto done;
    }
    if (version > EB_HISTORY_SCHEMA_VERSION) {
        st = eb_diag_fail(diag, EB_ERR_FORMAT,
                          "%s has history schema %ld, newer than this edgebench's %d; use a newer "
                          "edgebench or another --db",
                          h->path, version, EB_HISTORY_SCHEMA_VERSION);
        goto done;
    }
    *version_out = version;
    st = EB_OK;
done:
    sqlite3_finalize(q);
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
        st = exec(h, meta, diag);
    return st;
}

enum eb_status eb_history_open(const char *path, int create, struct eb_history **out,
                               struct eb_diag *diag)
{
    enum eb_status st = EB_ERR_NOMEM;
    struct eb_history *h = calloc(1, sizeof(*h));
    if (h == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "history: out of memory");
    if (snprintf(h->path, sizeof(h->path), "%s", path) >= (int)sizeof(h->path)) {
        st = eb_diag_fail(diag, EB_ERR_INVALID_ARG, "history: the database path is too long");
        goto fail;
    }
    if (!create && access(path, F_OK) != 0) {
        st = eb_diag_fail(diag, EB_ERR_IO,
                          "no history database at %s; edgebench run records every run there, or "
                          "give --db PATH",
                          path);
        goto fail;
    }
    /* SQLite reads a folder as "disk I/O error" and blocks in open() on a FIFO. */
    struct stat sb;
    const int exists = stat(path, &sb) == 0;
    if (exists && S_ISDIR(sb.st_mode)) {
        st = eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                          "history database %s is a folder; give --db a file in it, e.g. "
                          "%s/history.db",
                          path, path);
        goto fail;
    }
    if (exists && !S_ISREG(sb.st_mode)) {
        st = eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                          "history database %s is not a regular file (a device, FIFO or "
                          "socket); give --db the path of a file",
                          path);
        goto fail;
    }
    if (create && (st = mkdir_parents(path, diag)) != EB_OK)
        goto fail;
    int flags = create ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
    if (sqlite3_open_v2(path, &h->db, flags, NULL) != SQLITE_OK) {
        st = eb_diag_fail(diag, EB_ERR_IO, "cannot open history database %s: %s", path,
                          h->db != NULL ? sqlite3_errmsg(h->db) : "out of memory");
        goto fail;
    }
    sqlite3_busy_timeout(h->db, EB_HISTORY_BUSY_MS);
    /* Creating the schema and checking it happen in one write transaction, so two runs that
     * start on a new database at once create it once. */
    if (create && (st = exec(h, "BEGIN IMMEDIATE", diag)) != EB_OK)
        goto fail;
    int empty = 0;
    long version = 0;
    st = read_version(h, &empty, &version, diag);
    if (st == EB_OK && empty) {
        if (!create)
            st = eb_diag_fail(diag, EB_ERR_FORMAT,
                              "%s is an empty database, not an edgebench history; give another "
                              "--db",
                              path);
        else
            st = create_schema(h, diag);
        version = EB_HISTORY_SCHEMA_VERSION;
    }
    /* Upgrades in place, one version after the other; columns are only appended. */
    if (st == EB_OK && create && version == 1) { /* the accuracy columns */
        st = exec(h,
                  "ALTER TABLE slots ADD COLUMN map50_95 REAL;"
                  "ALTER TABLE slots ADD COLUMN map50 REAL;"
                  "UPDATE meta SET value = '2' WHERE key = 'schema_version';",
                  diag);
        version = 2;
    }
    if (st == EB_OK && create && version == 2) { /* the precisions beside --precision */
        st = exec(h,
                  "ALTER TABLE slots ADD COLUMN model_precision TEXT;"
                  "ALTER TABLE slots ADD COLUMN compute_precision TEXT;"
                  "UPDATE meta SET value = '3' WHERE key = 'schema_version';",
                  diag);
        version = 3;
    }
    if (st == EB_OK && create && version == 3) { /* runs of kind llm */
        st = exec(h, k_schema_llm, diag);
        if (st == EB_OK)
            st = exec(h, "UPDATE meta SET value = '4' WHERE key = 'schema_version';", diag);
        version = 4;
    }
    h->version = version;
    if (create && st == EB_OK)
        st = exec(h, "COMMIT", diag);
    else if (create)
        rollback(h);
    if (st != EB_OK)
        goto fail;
    *out = h;
    return EB_OK;
fail:
    eb_history_close(h);
    return st;
}

void eb_history_close(struct eb_history *h)
{
    if (h == NULL)
        return;
    sqlite3_close(h->db);
    free(h);
}

/* ---- binding and reading ----------------------------------------------------------------- */

static int bind_text(sqlite3_stmt *q, int i, const char *s)
{
    if (s == NULL || s[0] == '\0')
        return sqlite3_bind_null(q, i);
    return sqlite3_bind_text(q, i, s, -1, SQLITE_TRANSIENT);
}

static int bind_dbl(sqlite3_stmt *q, int i, double v)
{
    return isfinite(v) ? sqlite3_bind_double(q, i, v) : sqlite3_bind_null(q, i);
}

static int bind_u64(sqlite3_stmt *q, int i, uint64_t v)
{
    return sqlite3_bind_int64(q, i, v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v);
}

static void col_text(sqlite3_stmt *q, int i, char *dst, size_t size)
{
    const unsigned char *s = sqlite3_column_text(q, i);
    copy_str(dst, size, (const char *)s);
}

static double col_dbl(sqlite3_stmt *q, int i)
{
    return sqlite3_column_type(q, i) == SQLITE_NULL ? NAN : sqlite3_column_double(q, i);
}

static uint64_t col_u64(sqlite3_stmt *q, int i)
{
    int64_t v = sqlite3_column_int64(q, i);
    return v > 0 ? (uint64_t)v : 0;
}

/* Binds every value through `ok`; stops at the first failure. */
#define BIND(call)                                                                                 \
    do {                                                                                           \
        if (rc == SQLITE_OK)                                                                       \
            rc = (call);                                                                           \
    } while (0)

/* Binds the SUMMARY_N_COLS values of `x` from parameter *i + 1 on (SUMMARY_COLS). */
static int bind_summary(sqlite3_stmt *q, int *i, const struct eb_stat_summary *x)
{
    int rc = SQLITE_OK;
    BIND(bind_u64(q, ++*i, x->count));
    BIND(bind_dbl(q, ++*i, x->mean));
    BIND(bind_dbl(q, ++*i, x->std));
    BIND(bind_dbl(q, ++*i, x->cov));
    BIND(bind_dbl(q, ++*i, x->min));
    BIND(bind_dbl(q, ++*i, x->p50));
    BIND(bind_dbl(q, ++*i, x->p90));
    BIND(bind_dbl(q, ++*i, x->p95));
    BIND(bind_dbl(q, ++*i, x->p99));
    BIND(bind_dbl(q, ++*i, x->max));
    const struct eb_stat_ci *cis[2] = {&x->p50_ci, &x->p99_ci};
    for (int c = 0; c < 2; c++) {
        const struct eb_stat_ci *ci = cis[c];
        BIND(bind_dbl(q, ++*i, ci->available ? ci->lo : NAN));
        BIND(bind_dbl(q, ++*i, ci->available ? ci->hi : NAN));
        BIND(ci->available ? bind_u64(q, ++*i, ci->rank_lo) : sqlite3_bind_null(q, ++*i));
        BIND(ci->available ? bind_u64(q, ++*i, ci->rank_hi) : sqlite3_bind_null(q, ++*i));
        BIND(bind_dbl(q, ++*i, ci->available ? ci->coverage : NAN));
    }
    return rc;
}

static enum eb_status insert_run(struct eb_history *h, const struct eb_history_run *run,
                                 int64_t *id_out, struct eb_diag *diag)
{
    static const char sql[] =
        "INSERT INTO runs(started_at, kind, mode, command_line, config_json, duration_s,"
        " exit_code, interrupted, verdict, reasons, output_dir, energy_per_frame_mj,"
        " edgebench_version, ort_version, hostname, os, kernel, cpu_model, n_cpus, gpu_name,"
        " gpu_driver, l4t_release, power_mode, fingerprint)"
        " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(h->db, sql, -1, &q, NULL);
    int i = 0;
    BIND(sqlite3_bind_text(q, ++i, run->started_at[0] ? run->started_at : "unknown", -1,
                           SQLITE_TRANSIENT));
    BIND(sqlite3_bind_text(q, ++i, run->kind[0] ? run->kind : "run", -1, SQLITE_TRANSIENT));
    BIND(bind_text(q, ++i, run->mode));
    BIND(bind_text(q, ++i, run->command_line));
    BIND(bind_text(q, ++i, run->config_json));
    BIND(bind_dbl(q, ++i, run->duration_s));
    BIND(sqlite3_bind_int(q, ++i, run->exit_code));
    BIND(sqlite3_bind_int(q, ++i, run->interrupted));
    BIND(bind_text(q, ++i, run->verdict));
    BIND(bind_text(q, ++i, run->reasons));
    BIND(bind_text(q, ++i, run->output_dir));
    BIND(bind_dbl(q, ++i, run->energy_per_frame_mj));
    BIND(bind_text(q, ++i, run->edgebench_version));
    BIND(bind_text(q, ++i, run->ort_version));
    BIND(bind_text(q, ++i, run->hostname));
    BIND(bind_text(q, ++i, run->os));
    BIND(bind_text(q, ++i, run->kernel));
    BIND(bind_text(q, ++i, run->cpu_model));
    BIND(sqlite3_bind_int(q, ++i, run->n_cpus));
    BIND(bind_text(q, ++i, run->gpu_name));
    BIND(bind_text(q, ++i, run->gpu_driver));
    BIND(bind_text(q, ++i, run->l4t_release));
    BIND(bind_text(q, ++i, run->power_mode));
    BIND(bind_text(q, ++i, run->fingerprint));
    if (rc == SQLITE_OK)
        rc = sqlite3_step(q) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    enum eb_status st = rc == SQLITE_OK ? EB_OK : db_fail(h, diag, EB_ERR_IO, "cannot add the run");
    if (st == EB_OK)
        *id_out = sqlite3_last_insert_rowid(h->db);
    sqlite3_finalize(q);
    return st;
}

static enum eb_status insert_slot(struct eb_history *h, int64_t id, const struct eb_history_slot *s,
                                  struct eb_diag *diag)
{
    static const char sql[] =
        "INSERT INTO slots(run_id, slot, name, status, message, model, model_sha256, model_size,"
        " backend, backend_version, device, provider, precision, input_w, input_h, frames,"
        " warmup_frames, wall_s, fps, mem_peak_bytes, energy_per_frame_mj, verdict, reasons,"
        " map50_95, map50, model_precision, compute_precision)"
        " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(h->db, sql, -1, &q, NULL);
    int i = 0;
    BIND(sqlite3_bind_int64(q, ++i, id));
    BIND(sqlite3_bind_int(q, ++i, s->index));
    BIND(sqlite3_bind_text(q, ++i, s->name, -1, SQLITE_TRANSIENT));
    BIND(sqlite3_bind_text(q, ++i, s->status[0] ? s->status : "skipped", -1, SQLITE_TRANSIENT));
    BIND(bind_text(q, ++i, s->message));
    BIND(bind_text(q, ++i, s->model));
    BIND(bind_text(q, ++i, s->model_sha256));
    BIND(bind_u64(q, ++i, s->model_size));
    BIND(bind_text(q, ++i, s->backend));
    BIND(bind_text(q, ++i, s->backend_version));
    BIND(bind_text(q, ++i, s->device));
    BIND(bind_text(q, ++i, s->provider));
    BIND(bind_text(q, ++i, s->precision));
    BIND(sqlite3_bind_int(q, ++i, s->input_w));
    BIND(sqlite3_bind_int(q, ++i, s->input_h));
    BIND(bind_u64(q, ++i, s->frames));
    BIND(bind_u64(q, ++i, s->warmup_frames));
    BIND(bind_dbl(q, ++i, s->wall_s));
    BIND(bind_dbl(q, ++i, s->fps));
    BIND(bind_u64(q, ++i, s->mem_peak_bytes));
    BIND(bind_dbl(q, ++i, s->energy_per_frame_mj));
    BIND(bind_text(q, ++i, s->verdict));
    BIND(bind_text(q, ++i, s->reasons));
    BIND(bind_dbl(q, ++i, s->map50_95));
    BIND(bind_dbl(q, ++i, s->map50));
    BIND(bind_text(q, ++i, s->model_precision));
    BIND(bind_text(q, ++i, s->compute_precision));
    if (rc == SQLITE_OK)
        rc = sqlite3_step(q) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    sqlite3_finalize(q);
    if (rc != SQLITE_OK)
        return db_fail(h, diag, EB_ERR_IO, "cannot add a slot");
    for (int st = 0; st < EB_HISTORY_STAGES; st++) {
        const struct eb_stat_summary *x = &s->stages[st];
        if (x->count == 0)
            continue;
        static const char sql_stat[] = "INSERT INTO stats(run_id, slot, stage, " SUMMARY_COLS
                                       ") VALUES(?,?,?," SUMMARY_PARAMS ")";
        rc = sqlite3_prepare_v2(h->db, sql_stat, -1, &q, NULL);
        i = 0;
        BIND(sqlite3_bind_int64(q, ++i, id));
        BIND(sqlite3_bind_int(q, ++i, s->index));
        BIND(sqlite3_bind_text(q, ++i, eb_history_stage_name(st), -1, SQLITE_STATIC));
        BIND(bind_summary(q, &i, x));
        if (rc == SQLITE_OK)
            rc = sqlite3_step(q) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
        sqlite3_finalize(q);
        if (rc != SQLITE_OK)
            return db_fail(h, diag, EB_ERR_IO, "cannot add a statistic");
    }
    return EB_OK;
}

/* The seed, a uint64, in SQLite's signed 64-bit integer bit for bit (and back). */
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
        " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(h->db, sql, -1, &q, NULL);
    int i = 0;
    BIND(sqlite3_bind_int64(q, ++i, id));
    BIND(bind_text(q, ++i, l->model));
    BIND(bind_text(q, ++i, l->model_sha256));
    BIND(bind_u64(q, ++i, l->model_size));
    BIND(bind_text(q, ++i, l->arch));
    BIND(bind_text(q, ++i, l->size));
    BIND(bind_u64(q, ++i, l->params));
    BIND(bind_text(q, ++i, l->dtype));
    BIND(sqlite3_bind_int(q, ++i, l->prompt));
    BIND(sqlite3_bind_int(q, ++i, l->gen));
    BIND(sqlite3_bind_int(q, ++i, l->reps));
    BIND(sqlite3_bind_int(q, ++i, l->ctx));
    BIND(sqlite3_bind_int64(q, ++i, seed_to_db(l->seed)));
    BIND(bind_text(q, ++i, l->backend));
    BIND(bind_text(q, ++i, l->backend_version));
    BIND(bind_text(q, ++i, l->device));
    BIND(bind_text(q, ++i, l->provider));
    BIND(bind_text(q, ++i, l->precision));
    BIND(sqlite3_bind_int(q, ++i, l->threads));
    BIND(bind_dbl(q, ++i, l->prefill_tok_s));
    BIND(bind_dbl(q, ++i, l->prefill_tok_s_std));
    BIND(bind_dbl(q, ++i, l->decode_tok_s));
    BIND(bind_dbl(q, ++i, l->decode_tok_s_std));
    BIND(bind_dbl(q, ++i, l->prefill_mfu));
    BIND(bind_dbl(q, ++i, l->decode_mbu));
    BIND(bind_u64(q, ++i, l->weight_bytes));
    BIND(bind_u64(q, ++i, l->kv_bytes));
    BIND(bind_u64(q, ++i, l->peak_mem_bytes));
    BIND(bind_text(q, ++i, l->verdict));
    BIND(bind_text(q, ++i, l->reasons));
    if (rc == SQLITE_OK)
        rc = sqlite3_step(q) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    sqlite3_finalize(q);
    if (rc != SQLITE_OK)
        return db_fail(h, diag, EB_ERR_IO, "cannot add the llm run");
    for (size_t k = 0; k < EB_ARRAY_LEN(k_llm_stages); k++) {
        const struct eb_stat_summary *x =
            (const struct eb_stat_summary *)((const char *)l + k_llm_stages[k].offset);
        if (x->count == 0)
            continue;
        static const char sql_stat[] =
            "INSERT INTO llm_stats(run_id, stage, " SUMMARY_COLS ") VALUES(?,?," SUMMARY_PARAMS ")";
        rc = sqlite3_prepare_v2(h->db, sql_stat, -1, &q, NULL);
        i = 0;
        BIND(sqlite3_bind_int64(q, ++i, id));
        BIND(sqlite3_bind_text(q, ++i, k_llm_stages[k].stage, -1, SQLITE_STATIC));
        BIND(bind_summary(q, &i, x));
        if (rc == SQLITE_OK)
            rc = sqlite3_step(q) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
        sqlite3_finalize(q);
        if (rc != SQLITE_OK)
            return db_fail(h, diag, EB_ERR_IO, "cannot add an llm statistic");
    }
    return EB_OK;
}

enum eb_status eb_history_append(struct eb_history *h, const struct eb_history_run *run,
                                 int64_t *id_out, struct eb_diag *diag)
{
    enum eb_status st = exec(h, "BEGIN IMMEDIATE", diag);
    if (st != EB_OK)
        return st;
    int64_t id = 0;
    st = insert_run(h, run, &id, diag);
    if (st == EB_OK && eb_history_run_is_llm(run))
        st = insert_llm(h, id, &run->llm, diag);
    for (int i = 0; i < EB_NUM_SLOTS && st == EB_OK && !eb_history_run_is_llm(run); i++)
        st = insert_slot(h, id, &run->slots[i], diag);
    if (st == EB_OK)
        st = exec(h, "COMMIT", diag);
    if (st != EB_OK) {
        rollback(h);
        return st;
    }
    *id_out = id;
    return EB_OK;
}

/* ---- reading ----------------------------------------------------------------------------- */

static enum eb_status read_run_row(struct eb_history *h, int64_t id, struct eb_history_run *out,
                                   struct eb_diag *diag)
{
    static const char sql[] =
        "SELECT started_at, kind, mode, command_line, config_json, duration_s, exit_code,"
        " interrupted, verdict, reasons, output_dir, energy_per_frame_mj, edgebench_version,"
        " ort_version, hostname, os, kernel, cpu_model, n_cpus, gpu_name, gpu_driver,"
        " l4t_release, power_mode, fingerprint FROM runs WHERE id = ?";
    sqlite3_stmt *q = NULL;
    enum eb_status st = EB_OK;
    if (sqlite3_prepare_v2(h->db, sql, -1, &q, NULL) != SQLITE_OK ||
        sqlite3_bind_int64(q, 1, id) != SQLITE_OK) {
        st = db_fail(h, diag, EB_ERR_IO, "cannot read the runs");
        goto done;
    }
    int rc = sqlite3_step(q);
    if (rc == SQLITE_DONE) {
        st = eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                          "no run %lld in %s; edgebench history --db %s lists the runs",
                          (long long)id, h->path, h->path);
        goto done;
    }
    if (rc != SQLITE_ROW) {
        st = db_fail(h, diag, EB_ERR_IO, "cannot read the runs");
        goto done;
    }
    int i = 0;
    out->id = id;
    col_text(q, i++, out->started_at, sizeof(out->started_at));
    col_text(q, i++, out->kind, sizeof(out->kind));
    col_text(q, i++, out->mode, sizeof(out->mode));
    col_text(q, i++, out->command_line, sizeof(out->command_line));
    const unsigned char *cj = sqlite3_column_text(q, i++);
    if (cj != NULL && (out->config_json = strdup((const char *)cj)) == NULL) {
        st = eb_diag_fail(diag, EB_ERR_NOMEM, "history: out of memory");
        goto done;
    }
    out->duration_s = col_dbl(q, i++);
    out->exit_code = sqlite3_column_int(q, i++);
    out->interrupted = sqlite3_column_int(q, i++);
    col_text(q, i++, out->verdict, sizeof(out->verdict));
    col_text(q, i++, out->reasons, sizeof(out->reasons));
    col_text(q, i++, out->output_dir, sizeof(out->output_dir));
    out->energy_per_frame_mj = col_dbl(q, i++);
    col_text(q, i++, out->edgebench_version, sizeof(out->edgebench_version));
    col_text(q, i++, out->ort_version, sizeof(out->ort_version));
    col_text(q, i++, out->hostname, sizeof(out->hostname));
    col_text(q, i++, out->os, sizeof(out->os));
    col_text(q, i++, out->kernel, sizeof(out->kernel));
    col_text(q, i++, out->cpu_model, sizeof(out->cpu_model));
    out->n_cpus = sqlite3_column_int(q, i++);
    col_text(q, i++, out->gpu_name, sizeof(out->gpu_name));
    col_text(q, i++, out->gpu_driver, sizeof(out->gpu_driver));
    col_text(q, i++, out->l4t_release, sizeof(out->l4t_release));
    col_text(q, i++, out->power_mode, sizeof(out->power_mode));
    col_text(q, i++, out->fingerprint, sizeof(out->fingerprint));
done:
    sqlite3_finalize(q);
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
             " %s FROM slots WHERE run_id = ? ORDER BY slot",
             tails[h->version < 3 ? h->version : 3]);
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(h->db, sql, -1, &q, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(q, 1, out->id);
    while (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        rc = SQLITE_OK;
        int idx = sqlite3_column_int(q, 0);
        if (idx < 0 || idx >= EB_NUM_SLOTS)
            continue;
        struct eb_history_slot *s = &out->slots[idx];
        int i = 0;
        s->index = sqlite3_column_int(q, i++);
        col_text(q, i++, s->name, sizeof(s->name));
        col_text(q, i++, s->status, sizeof(s->status));
        col_text(q, i++, s->message, sizeof(s->message));
        col_text(q, i++, s->model, sizeof(s->model));
        col_text(q, i++, s->model_sha256, sizeof(s->model_sha256));
        s->model_size = col_u64(q, i++);
        col_text(q, i++, s->backend, sizeof(s->backend));
        col_text(q, i++, s->backend_version, sizeof(s->backend_version));
        col_text(q, i++, s->device, sizeof(s->device));
        col_text(q, i++, s->provider, sizeof(s->provider));
        col_text(q, i++, s->precision, sizeof(s->precision));
        s->input_w = sqlite3_column_int(q, i++);
        s->input_h = sqlite3_column_int(q, i++);
        s->frames = col_u64(q, i++);
        s->warmup_frames = col_u64(q, i++);
        s->wall_s = col_dbl(q, i++);
        s->fps = col_dbl(q, i++);
        s->mem_peak_bytes = col_u64(q, i++);
        s->energy_per_frame_mj = col_dbl(q, i++);
        col_text(q, i++, s->verdict, sizeof(s->verdict));
        col_text(q, i++, s->reasons, sizeof(s->reasons));
        s->map50_95 = col_dbl(q, i++);
        s->map50 = col_dbl(q, i++);
        col_text(q, i++, s->model_precision, sizeof(s->model_precision));
        col_text(q, i++, s->compute_precision, sizeof(s->compute_precision));
    }
    sqlite3_finalize(q);
    if (rc != SQLITE_DONE)
        return db_fail(h, diag, EB_ERR_IO, "cannot read the slots");
    return EB_OK;
}

static void col_ci(sqlite3_stmt *q, int i, struct eb_stat_ci *ci)
{
    memset(ci, 0, sizeof(*ci));
    if (sqlite3_column_type(q, i) == SQLITE_NULL || sqlite3_column_type(q, i + 1) == SQLITE_NULL)
        return;
    ci->available = 1;
    ci->lo = sqlite3_column_double(q, i);
    ci->hi = sqlite3_column_double(q, i + 1);
    ci->rank_lo = col_u64(q, i + 2);
    ci->rank_hi = col_u64(q, i + 3);
    ci->coverage = col_dbl(q, i + 4);
}

/* Reads the SUMMARY_N_COLS columns from column `i` on (SUMMARY_COLS) into `x`. */
static void col_summary(sqlite3_stmt *q, int i, struct eb_stat_summary *x)
{
    x->count = col_u64(q, i);
    x->mean = col_dbl(q, i + 1);
    x->std = col_dbl(q, i + 2);
    x->cov = col_dbl(q, i + 3);
    x->min = col_dbl(q, i + 4);
    x->p50 = col_dbl(q, i + 5);
    x->p90 = col_dbl(q, i + 6);
    x->p95 = col_dbl(q, i + 7);
    x->p99 = col_dbl(q, i + 8);
    x->max = col_dbl(q, i + 9);
    x->fps = x->mean > 0 ? 1000.0 / x->mean : 0.0;
    col_ci(q, i + 10, &x->p50_ci);
    col_ci(q, i + 15, &x->p99_ci);
}

static enum eb_status read_stats(struct eb_history *h, struct eb_history_run *out,
                                 struct eb_diag *diag)
{
    static const char sql[] = "SELECT slot, stage, " SUMMARY_COLS " FROM stats WHERE run_id = ?";
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(h->db, sql, -1, &q, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(q, 1, out->id);
    while (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        rc = SQLITE_OK;
        int idx = sqlite3_column_int(q, 0);
        const char *stage = (const char *)sqlite3_column_text(q, 1);
        int st = -1;
        for (int k = 0; k < EB_HISTORY_STAGES && stage != NULL; k++)
            if (strcmp(stage, eb_history_stage_name(k)) == 0)
                st = k;
        if (idx < 0 || idx >= EB_NUM_SLOTS || st < 0)
            continue; /* a stage a later edgebench added */
        col_summary(q, 2, &out->slots[idx].stages[st]);
    }
    sqlite3_finalize(q);
    if (rc != SQLITE_DONE)
        return db_fail(h, diag, EB_ERR_IO, "cannot read the statistics");
    return EB_OK;
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
        " weight_bytes, kv_bytes, peak_mem_bytes, verdict, reasons FROM llm WHERE run_id = ?";
    struct eb_history_llm *l = &out->llm;
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(h->db, sql, -1, &q, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(q, 1, out->id);
    if (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        int i = 0;
        col_text(q, i++, l->model, sizeof(l->model));
        col_text(q, i++, l->model_sha256, sizeof(l->model_sha256));
        l->model_size = col_u64(q, i++);
        col_text(q, i++, l->arch, sizeof(l->arch));
        col_text(q, i++, l->size, sizeof(l->size));
        l->params = col_u64(q, i++);
        col_text(q, i++, l->dtype, sizeof(l->dtype));
        l->prompt = sqlite3_column_int(q, i++);
        l->gen = sqlite3_column_int(q, i++);
        l->reps = sqlite3_column_int(q, i++);
        l->ctx = sqlite3_column_int(q, i++);
        l->seed = seed_from_db(sqlite3_column_int64(q, i++));
        col_text(q, i++, l->backend, sizeof(l->backend));
        col_text(q, i++, l->backend_version, sizeof(l->backend_version));
        col_text(q, i++, l->device, sizeof(l->device));
        col_text(q, i++, l->provider, sizeof(l->provider));
        col_text(q, i++, l->precision, sizeof(l->precision));
        l->threads = sqlite3_column_int(q, i++);
        l->prefill_tok_s = col_dbl(q, i++);
        l->prefill_tok_s_std = col_dbl(q, i++);
        l->decode_tok_s = col_dbl(q, i++);
        l->decode_tok_s_std = col_dbl(q, i++);
        l->prefill_mfu = col_dbl(q, i++);
        l->decode_mbu = col_dbl(q, i++);
        l->weight_bytes = col_u64(q, i++);
        l->kv_bytes = col_u64(q, i++);
        l->peak_mem_bytes = col_u64(q, i++);
        col_text(q, i++, l->verdict, sizeof(l->verdict));
        col_text(q, i++, l->reasons, sizeof(l->reasons));
        rc = sqlite3_step(q); /* run_id is the key: no second row */
    }
    sqlite3_finalize(q);
    q = NULL;
    if (rc != SQLITE_DONE)
        return db_fail(h, diag, EB_ERR_IO, "cannot read the llm run");
    static const char sql_stat[] = "SELECT stage, " SUMMARY_COLS " FROM llm_stats WHERE run_id = ?";
    rc = sqlite3_prepare_v2(h->db, sql_stat, -1, &q, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(q, 1, out->id);
    while (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        rc = SQLITE_OK;
        const char *stage = (const char *)sqlite3_column_text(q, 0);
        for (size_t k = 0; k < EB_ARRAY_LEN(k_llm_stages) && stage != NULL; k++)
            if (strcmp(stage, k_llm_stages[k].stage) == 0) /* else a later edgebench's stage */
                col_summary(q, 1, (struct eb_stat_summary *)((char *)l + k_llm_stages[k].offset));
    }
    sqlite3_finalize(q);
    if (rc != SQLITE_DONE)
        return db_fail(h, diag, EB_ERR_IO, "cannot read the llm statistics");
    return EB_OK;
}

enum eb_status eb_history_get(struct eb_history *h, int64_t id, struct eb_history_run *out,
                              struct eb_diag *diag)
{
    memset(out, 0, sizeof(*out));
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
    /* The runs with a slot that matches, and (schema 4 on) the llm runs that match. */
    static const char sql_slots[] =
        "SELECT r.id FROM runs r WHERE EXISTS(SELECT 1 FROM slots s WHERE s.run_id = r.id"
        " AND s.status != 'skipped' AND (?1 IS NULL OR instr(s.model, ?1) > 0)"
        " AND (?2 IS NULL OR s.backend = ?2) AND (?3 IS NULL OR s.device = ?3))";
    static const char sql_llm[] =
        " OR (r.kind = '" EB_HISTORY_KIND_LLM "' AND EXISTS(SELECT 1 FROM llm l"
        " WHERE l.run_id = r.id AND (?1 IS NULL OR instr(l.model, ?1) > 0)"
        " AND (?2 IS NULL OR l.backend = ?2) AND (?3 IS NULL OR l.device = ?3)))";
    static const char sql_order[] = " ORDER BY r.id DESC LIMIT ?4";
    char sql[sizeof(sql_slots) + sizeof(sql_llm) + sizeof(sql_order)];
    snprintf(sql, sizeof(sql), "%s%s%s", sql_slots, h->version >= 4 ? sql_llm : "", sql_order);
    enum eb_status st = EB_OK;
    sqlite3_stmt *q = NULL;
    int64_t *ids = NULL;
    size_t n = 0, cap = 0;
    struct eb_history_run *run = calloc(1, sizeof(*run));
    if (run == NULL)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "history: out of memory");
    int rc = sqlite3_prepare_v2(h->db, sql, -1, &q, NULL);
    if (rc == SQLITE_OK)
        rc = filter->model != NULL ? sqlite3_bind_text(q, 1, filter->model, -1, SQLITE_STATIC)
                                   : sqlite3_bind_null(q, 1);
    if (rc == SQLITE_OK)
        rc = filter->backend != NULL ? sqlite3_bind_text(q, 2, filter->backend, -1, SQLITE_STATIC)
                                     : sqlite3_bind_null(q, 2);
    if (rc == SQLITE_OK)
        rc = filter->device != NULL ? sqlite3_bind_text(q, 3, filter->device, -1, SQLITE_STATIC)
                                    : sqlite3_bind_null(q, 3);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(q, 4, filter->limit > 0 ? filter->limit : -1);
    /* The ids first: the runs are read with other statements. */
    while (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        rc = SQLITE_OK;
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
        ids[n++] = sqlite3_column_int64(q, 0);
    }
    if (rc != SQLITE_DONE) {
        st = db_fail(h, diag, EB_ERR_IO, "cannot list the runs");
        goto done;
    }
    for (size_t k = 0; k < n && st == EB_OK; k++) {
        st = eb_history_get(h, ids[k], run, diag);
        if (st != EB_OK)
            break;
        if (eb_history_run_is_llm(run) && llm_matches(&run->llm, filter)) {
            struct eb_history_row row = {.id = run->id,
                                         .started_at = run->started_at,
                                         .kind = run->kind,
                                         .mode = run->mode,
                                         .run_verdict = run->verdict,
                                         .llm = &run->llm};
            fn(ctx, &row);
        }
        for (int i = 0; i < EB_NUM_SLOTS && !eb_history_run_is_llm(run); i++) {
            if (!slot_matches(&run->slots[i], filter))
                continue;
            struct eb_history_row row = {.id = run->id,
                                         .started_at = run->started_at,
                                         .kind = run->kind,
                                         .mode = run->mode,
                                         .run_verdict = run->verdict,
                                         .slot = &run->slots[i]};
            fn(ctx, &row);
        }
        eb_history_run_fini(run);
    }
done:
    sqlite3_finalize(q);
    free(ids);
    eb_history_run_fini(run);
    free(run);
    return st;
}
