/*
 * The spool of a PostgreSQL writer that cannot reach its server, and `edgebench sync`. The spool
 * is a SQLite history database of its own (EB_HISTORY_SPOOL_NAME beside the default database,
 * readable with `edgebench history --db`) plus the table `pending(uuid, target)`: which runs
 * wait for which server. An upload inserts each run in one transaction on the server, only
 * when its uuid is absent there, and then removes it from the spool in one transaction: a crash
 * between the two leaves a run that the next upload finds already there, never a duplicate.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/results/history.h"
#include "harness/results/history_store.h"

#define EXIT_OK      0
#define EXIT_PENDING 1
#define EXIT_USAGE   2

static const char k_pending[] =
    "CREATE TABLE IF NOT EXISTS pending(uuid TEXT PRIMARY KEY, target TEXT NOT NULL)";

/* The user's line (h->note); a long one is cut. */
static void set_note(struct eb_history *h, const char *fmt, ...) EB_PRINTF(2, 3);
static void set_note(struct eb_history *h, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h->note, sizeof(h->note), fmt, ap);
    va_end(ap);
}

static void copy_str(char *dst, size_t size, const char *src)
{
    if (snprintf(dst, size, "%s", src != NULL ? src : "") < 0)
        dst[0] = '\0';
}

/* Opens (creating) the spool; its path into `path`. The file is the user's alone: a pending
 * run's target may carry a password. */
static enum eb_status open_spool(struct eb_history **out, char *path, size_t size,
                                 struct eb_diag *diag)
{
    if (eb_history_spool_path(path, size, diag) != 0)
        return EB_ERR_INVALID_ARG;
    struct eb_history *s = NULL;
    enum eb_status st = eb_history__open(path, 1, 0, &s, diag);
    if (st == EB_OK && s->drv->exec(s->conn, k_pending) != 0)
        st = eb_diag_fail(diag, EB_ERR_IO, "history spool %s: %s", path, s->drv->errmsg(s->conn));
    if (st == EB_OK)
        (void)chmod(path, S_IRUSR | S_IWUSR);
    if (st != EB_OK) {
        eb_history_close(s);
        return st;
    }
    *out = s;
    return EB_OK;
}

enum eb_status eb_history__spool_start(struct eb_history *h, const char *reason,
                                       struct eb_diag *diag)
{
    char path[4096];
    struct eb_diag d = {0};
    if (h->spool == NULL && open_spool(&h->spool, path, sizeof(path), &d) != EB_OK)
        return eb_diag_fail(diag, EB_ERR_IO, "%s; and the local spool cannot be written: %s",
                            reason, d.msg);
    set_note(h,
             "%s; the runs are kept in the local spool %s until `edgebench sync` or the next run "
             "that reaches it uploads them",
             reason, h->spool->where);
    return EB_OK;
}

/* Runs one statement of the spool to its end: 0, or -1. */
static int spool_run(struct eb_history *s, const char *sql, const struct eb_history__val *p, int n)
{
    struct eb_history__rows *r = s->drv->query(s->conn, sql, p, n);
    int rc = r != NULL ? 1 : -1;
    while (rc == 1)
        rc = s->drv->next(r);
    s->drv->rows_close(r);
    return rc;
}

/* Removes run `id` (key `uuid`) and its pending mark from the spool, in one transaction. */
static enum eb_status spool_remove(struct eb_history *s, int64_t id, const char *uuid,
                                   struct eb_diag *diag)
{
    static const char *const k_deletes[] = {
        "DELETE FROM stats WHERE run_id = $1",     "DELETE FROM slots WHERE run_id = $1",
        "DELETE FROM llm_stats WHERE run_id = $1", "DELETE FROM llm WHERE run_id = $1",
        "DELETE FROM runs WHERE id = $1",          "DELETE FROM pending WHERE uuid = $2",
    };
    const struct eb_history__val p[2] = {{.kind = EB_HISTORY__INT, .i = id},
                                         {.kind = EB_HISTORY__TEXT, .s = uuid}};
    int rc = s->drv->exec(s->conn, s->drv->begin_write);
    for (size_t k = 0; k < sizeof(k_deletes) / sizeof(k_deletes[0]) && rc == 0; k++)
        rc = spool_run(s, k_deletes[k], p, 2);
    if (rc == 0)
        rc = s->drv->exec(s->conn, "COMMIT");
    if (rc == 0)
        return EB_OK;
    const enum eb_status st =
        eb_diag_fail(diag, EB_ERR_IO, "history spool %s: %s", s->where, s->drv->errmsg(s->conn));
    (void)s->drv->exec(s->conn, "ROLLBACK");
    return st;
}

/* Uploads the runs of spool `s` pending for dst->target, oldest first; counts into *uploaded
 * and *present (there already). Stops at the first failure. */
static enum eb_status upload(struct eb_history *dst, struct eb_history *s, size_t *uploaded,
                             size_t *present, struct eb_diag *diag)
{
    const struct eb_history__val p[1] = {{.kind = EB_HISTORY__TEXT, .s = dst->target}};
    struct eb_history__rows *r = s->drv->query(
        s->conn,
        "SELECT r.id, p.uuid FROM pending p JOIN runs r ON r.uuid = p.uuid WHERE p.target = $1"
        " ORDER BY r.id",
        p, 1);
    enum eb_status st = EB_OK;
    int64_t *ids = NULL;
    char(*uuids)[EB_HISTORY_UUID_SIZE] = NULL;
    size_t n = 0, cap = 0;
    int rc = r != NULL ? 1 : -1;
    while (rc == 1 && (rc = s->drv->next(r)) == 1) {
        if (n == cap) {
            const size_t ncap = cap != 0 ? 2 * cap : 16;
            int64_t *gi = realloc(ids, ncap * sizeof(*ids));
            if (gi != NULL)
                ids = gi;
            char(*gu)[EB_HISTORY_UUID_SIZE] =
                gi != NULL ? realloc(uuids, ncap * sizeof(*uuids)) : NULL;
            if (gu == NULL) {
                st = eb_diag_fail(diag, EB_ERR_NOMEM, "history: out of memory");
                break;
            }
            uuids = gu;
            cap = ncap;
        }
        ids[n] = s->drv->i64(r, 0);
        copy_str(uuids[n], sizeof(uuids[n]), s->drv->text(r, 1));
        n++;
    }
    if (st == EB_OK && rc != 0)
        st = eb_diag_fail(diag, EB_ERR_IO, "history spool %s: cannot list the pending runs: %s",
                          s->where, s->drv->errmsg(s->conn));
    s->drv->rows_close(r);
    struct eb_history_run *run = st == EB_OK && n > 0 ? calloc(1, sizeof(*run)) : NULL;
    if (st == EB_OK && n > 0 && run == NULL)
        st = eb_diag_fail(diag, EB_ERR_NOMEM, "history: out of memory");
    for (size_t k = 0; k < n && st == EB_OK; k++) {
        int64_t id = 0;
        int existed = 0;
        st = eb_history_get(s, ids[k], run, diag);
        if (st == EB_OK)
            st = eb_history__insert(dst, run, uuids[k], NULL, &id, &existed, diag);
        eb_history_run_fini(run);
        /* Committed on the server: now it may leave the spool. */
        if (st == EB_OK)
            st = spool_remove(s, ids[k], uuids[k], diag);
        if (st == EB_OK)
            ++*(existed ? present : uploaded);
    }
    free(run);
    free(ids);
    free(uuids);
    return st;
}

void eb_history__upload_spooled(struct eb_history *h)
{
    char path[4096];
    struct eb_diag d = {0};
    struct eb_history *s = NULL;
    if (eb_history_spool_path(path, sizeof(path), &d) != 0 || access(path, F_OK) != 0)
        return; /* nothing was ever spooled */
    size_t uploaded = 0, present = 0;
    enum eb_status st = open_spool(&s, path, sizeof(path), &d);
    if (st == EB_OK)
        st = upload(h, s, &uploaded, &present, &d);
    if (st != EB_OK)
        set_note(h,
                 "runs kept in the local spool %s were not uploaded to %s: %s; `edgebench sync` "
                 "tries again",
                 path, h->where, d.msg);
    else if (uploaded + present > 0)
        set_note(h, "uploaded %zu run%s kept in the local spool %s to %s", uploaded + present,
                 uploaded + present == 1 ? "" : "s", path, h->where);
    eb_history_close(s);
}

/* ---- edgebench sync ---------------------------------------------------------------------- */

static void print_sync_help(FILE *fp)
{
    fprintf(fp,
            "usage: edgebench sync [--db TARGET]\n\n"
            "Uploads the runs that a PostgreSQL history could not take when they ended (the\n"
            "server was down or unreachable): they wait in the local spool\n"
            "${XDG_DATA_HOME:-~/.local/share}/edgebench/" EB_HISTORY_SPOOL_NAME ". Each run goes\n"
            "in one transaction and only when its uuid is not there yet, so a run is never\n"
            "uploaded twice; it leaves the spool once the server has committed it. The next\n"
            "run that reaches the server uploads them too.\n\n"
            "options:\n"
            "  --db TARGET    only the runs for this PostgreSQL database (a connection string,\n"
            "                 e.g. postgresql://USER@HOST/DB); default $EB_DB, else every\n"
            "                 server that runs are pending for\n\n"
            "exit codes: 0 nothing left pending; 1 a server could not take its runs (one line\n"
            "says why; they stay in the spool); 2 bad input.\n");
}

/* The targets with runs pending (only `only` when not NULL); a NULL-terminated array of
 * strings (caller frees each and the array), NULL on failure. */
static char **pending_targets(struct eb_history *s, const char *only, struct eb_diag *diag)
{
    const struct eb_history__val p[1] = {{.kind = EB_HISTORY__TEXT, .s = only, .null = !only}};
    struct eb_history__rows *r = s->drv->query(
        s->conn,
        "SELECT DISTINCT target FROM pending WHERE ($1 IS NULL OR target = $1) ORDER BY target", p,
        1);
    char **list = calloc(1, sizeof(*list));
    size_t n = 0;
    int rc = r != NULL && list != NULL ? 1 : -1;
    while (rc == 1 && (rc = s->drv->next(r)) == 1) {
        char **grown = realloc(list, (n + 2) * sizeof(*list));
        const char *t = s->drv->text(r, 0);
        if (grown == NULL || (grown[n] = strdup(t != NULL ? t : "")) == NULL) {
            list = grown != NULL ? grown : list;
            rc = -2;
            break;
        }
        list = grown;
        list[++n] = NULL;
    }
    s->drv->rows_close(r);
    if (rc == 0)
        return list;
    eb_diag_fail(diag, EB_ERR_IO, "history spool %s: cannot list the pending runs: %s", s->where,
                 rc == -2 || list == NULL ? "out of memory" : s->drv->errmsg(s->conn));
    for (size_t k = 0; list != NULL && k < n; k++)
        free(list[k]);
    free(list);
    return NULL;
}

static int64_t count_pending(struct eb_history *s)
{
    struct eb_history__rows *r = s->drv->query(s->conn, "SELECT count(*) FROM pending", NULL, 0);
    const int64_t n = r != NULL && s->drv->next(r) == 1 ? s->drv->i64(r, 0) : -1;
    s->drv->rows_close(r);
    return n;
}

int eb_sync_main(int argc, char **argv, FILE *out, FILE *err)
{
    const char *db = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            print_sync_help(out);
            return EXIT_OK;
        }
        if (strncmp(argv[i], "--db=", 5) == 0) {
            db = argv[i] + 5;
        } else if (strcmp(argv[i], "--db") == 0 && i + 1 < argc) {
            db = argv[++i];
        } else {
            fprintf(err, "edgebench: error: %s '%s'; see edgebench sync --help\n",
                    strcmp(argv[i], "--db") == 0 ? "a value is missing after" : "unknown argument",
                    argv[i]);
            return EXIT_USAGE;
        }
    }
    if (db == NULL && getenv("EB_DB") != NULL && getenv("EB_DB")[0] != '\0')
        db = getenv("EB_DB");
    if (db != NULL && !eb_history_is_postgres(db)) {
        char where[4096];
        eb_history_redact(db, where, sizeof(where));
        fprintf(err,
                "edgebench: error: sync uploads runs kept for a PostgreSQL history, and %s is "
                "not a PostgreSQL connection string (postgresql://USER@HOST/DB)\n",
                where);
        return EXIT_USAGE;
    }
    char path[4096];
    struct eb_diag d = {0};
    if (eb_history_spool_path(path, sizeof(path), &d) != 0) {
        fprintf(err, "edgebench: error: %s\n", d.msg);
        return EXIT_USAGE;
    }
    if (access(path, F_OK) != 0) {
        fprintf(out, "nothing to upload: no spool at %s\n", path);
        return EXIT_OK;
    }
    struct eb_history *s = NULL;
    char **targets = NULL;
    int code = EXIT_OK;
    if (open_spool(&s, path, sizeof(path), &d) != EB_OK ||
        (targets = pending_targets(s, db, &d)) == NULL) {
        fprintf(err, "edgebench: error: %s\n", d.msg);
        code = EXIT_PENDING;
        goto done;
    }
    if (targets[0] == NULL)
        fprintf(out, "nothing to upload: no run pending in %s\n", path);
    for (size_t k = 0; targets[k] != NULL; k++) {
        struct eb_history *dst = NULL;
        struct eb_diag dd = {0};
        size_t uploaded = 0, present = 0;
        enum eb_status st = eb_history__open(targets[k], 1, 0, &dst, &dd);
        if (st == EB_OK)
            st = upload(dst, s, &uploaded, &present, &dd);
        if (uploaded + present > 0 || st == EB_OK) {
            char where[4096];
            eb_history_redact(targets[k], where, sizeof(where));
            fprintf(out, "uploaded %zu run%s to %s (%zu of them were there already)\n",
                    uploaded + present, uploaded + present == 1 ? "" : "s", where, present);
        }
        if (st != EB_OK) {
            fprintf(err, "edgebench: error: %s; the runs stay in the spool %s\n", dd.msg, path);
            code = EXIT_PENDING;
        }
        eb_history_close(dst);
    }
    const int64_t left = count_pending(s);
    if (left > 0)
        fprintf(out, "%lld run%s still pending in %s\n", (long long)left, left == 1 ? "" : "s",
                path);
done:
    for (size_t k = 0; targets != NULL && targets[k] != NULL; k++)
        free(targets[k]);
    free(targets);
    eb_history_close(s);
    return code;
}
