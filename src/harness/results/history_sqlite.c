/*
 * The history's SQLite store (history_store.h): a file, created with its folders when asked,
 * else opened read-only; concurrent processes are serialised by SQLite's locking (a writer
 * waits up to EB_HISTORY_BUSY_MS). Parameters `$k` are bound by name, so a statement may use
 * one several times and in any order.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "eb/path.h"
#include "harness/results/history.h"
#include "harness/results/history_store.h"

struct eb_history__rows {
    sqlite3_stmt *q;
};

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

static enum eb_status lite_open(const char *path, const char *where, int create, void **conn_out,
                                struct eb_diag *diag)
{
    (void)where; /* a path is its own name */
    if (!create && access(path, F_OK) != 0)
        return eb_diag_fail(diag, EB_ERR_IO,
                            "no history database at %s; edgebench run records every run there, "
                            "or give --db PATH",
                            path);
    /* SQLite reads a folder as "disk I/O error" and blocks in open() on a FIFO. */
    struct stat sb;
    const int exists = stat(path, &sb) == 0;
    if (exists && S_ISDIR(sb.st_mode))
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "history database %s is a folder; give --db a file in it, e.g. "
                            "%s/history.db",
                            path, path);
    if (exists && !S_ISREG(sb.st_mode))
        return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                            "history database %s is not a regular file (a device, FIFO or "
                            "socket); give --db the path of a file",
                            path);
    enum eb_status st = EB_OK;
    if (create && (st = mkdir_parents(path, diag)) != EB_OK)
        return st;
    sqlite3 *db = NULL;
    const int flags = create ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
    if (sqlite3_open_v2(path, &db, flags, NULL) != SQLITE_OK) {
        st = eb_diag_fail(diag, EB_ERR_IO, "cannot open history database %s: %s", path,
                          db != NULL ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return st;
    }
    sqlite3_busy_timeout(db, EB_HISTORY_BUSY_MS);
    *conn_out = db;
    return EB_OK;
}

static void lite_close(void *conn)
{
    sqlite3_close(conn);
}

static int lite_exec(void *conn, const char *sql)
{
    return sqlite3_exec(conn, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

static struct eb_history__rows *lite_query(void *conn, const char *sql,
                                           const struct eb_history__val *p, int n)
{
    struct eb_history__rows *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return NULL;
    int rc = sqlite3_prepare_v2(conn, sql, -1, &r->q, NULL);
    for (int k = 0; k < n && rc == SQLITE_OK; k++) {
        char name[16];
        snprintf(name, sizeof(name), "$%d", k + 1);
        const int i = sqlite3_bind_parameter_index(r->q, name);
        if (i == 0)
            continue; /* a parameter the statement does not use */
        if (p[k].null)
            rc = sqlite3_bind_null(r->q, i);
        else if (p[k].kind == EB_HISTORY__INT)
            rc = sqlite3_bind_int64(r->q, i, p[k].i);
        else if (p[k].kind == EB_HISTORY__REAL)
            rc = sqlite3_bind_double(r->q, i, p[k].d);
        else
            rc = sqlite3_bind_text(r->q, i, p[k].s, -1, SQLITE_TRANSIENT);
    }
    if (rc != SQLITE_OK) {
        sqlite3_finalize(r->q);
        free(r);
        return NULL;
    }
    return r;
}

static int lite_next(struct eb_history__rows *r)
{
    const int rc = sqlite3_step(r->q);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

static int lite_is_null(struct eb_history__rows *r, int i)
{
    return sqlite3_column_type(r->q, i) == SQLITE_NULL;
}

static int64_t lite_i64(struct eb_history__rows *r, int i)
{
    return sqlite3_column_int64(r->q, i);
}

static double lite_dbl(struct eb_history__rows *r, int i)
{
    return sqlite3_column_double(r->q, i);
}

static const char *lite_text(struct eb_history__rows *r, int i)
{
    return (const char *)sqlite3_column_text(r->q, i);
}

static void lite_rows_close(struct eb_history__rows *r)
{
    if (r == NULL)
        return;
    sqlite3_finalize(r->q);
    free(r);
}

static const char *lite_errmsg(void *conn)
{
    return sqlite3_errmsg(conn);
}

static int lite_lost(void *conn)
{
    (void)conn;
    return 0;
}

const struct eb_history__driver eb_history__sqlite = {
    .name = "SQLite",
    .begin_write = "BEGIN IMMEDIATE",
    .lock_schema = "",
    .count_tables = "SELECT count(*) FROM sqlite_master",
    .instr = "instr",
    .open = lite_open,
    .close = lite_close,
    .exec = lite_exec,
    .query = lite_query,
    .next = lite_next,
    .is_null = lite_is_null,
    .i64 = lite_i64,
    .dbl = lite_dbl,
    .text = lite_text,
    .rows_close = lite_rows_close,
    .errmsg = lite_errmsg,
    .lost = lite_lost,
};
