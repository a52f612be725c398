/*
 * The history's two stores behind one small interface (internal to harness/results): history.c
 * holds the schema, the records and every statement once, written in the SQL that SQLite and
 * PostgreSQL share; a driver (history_sqlite.c, history_pg.c) connects, runs statements with
 * typed parameters `$1`, `$2`, ... and hands back rows. What differs between the two is data
 * in the driver (how a write transaction starts, how the tables are counted, the substring
 * function) or done inside it (PostgreSQL's column types: see history_pg.c). Callers outside
 * this module see only history.h.
 *
 *     void *conn = NULL;
 *     if (drv->open(target, where, 1, &conn, diag) == EB_OK) {
 *         struct eb_history__val p[1] = {{.kind = EB_HISTORY__TEXT, .s = "ok"}};
 *         struct eb_history__rows *r = drv->query(conn, "SELECT id FROM runs WHERE verdict = $1",
 *                                                 p, 1);
 *         while (r != NULL && drv->next(r) == 1)
 *             printf("%lld\n", (long long)drv->i64(r, 0));
 *         drv->rows_close(r);
 *         drv->close(conn);
 *     }
 *
 * A connection is used by one thread at a time.
 */
#ifndef EB_HISTORY_STORE_H
#define EB_HISTORY_STORE_H

#include <stdint.h>

#include "eb/diag.h"
#include "harness/results/history.h"

/** The type of a statement parameter. */
enum eb_history__kind {
    EB_HISTORY__INT,  /* i */
    EB_HISTORY__REAL, /* d */
    EB_HISTORY__TEXT, /* s (borrowed for the call) */
};

/** One parameter `$k` of a statement: a value of `kind`, or SQL NULL when `null`. */
struct eb_history__val {
    enum eb_history__kind kind;
    int null;
    int64_t i;
    double d;
    const char *s;
};

/** The most parameters a statement of history.c binds. */
#define EB_HISTORY__MAX_PARAMS 40

struct eb_history__rows; /* a driver's result: rows read one after the other */

struct eb_history__driver {
    const char *name; /* "SQLite", "PostgreSQL" */
    /* SQL that starts a transaction that will write (SQLite takes the write lock at once). */
    const char *begin_write;
    /* SQL run inside that transaction before the schema is checked or created, so that writers
     * starting together on an empty database create it once; "" = begin_write suffices. */
    const char *lock_schema;
    /* SQL giving one row: the number of edgebench's tables present (0 = an empty database). */
    const char *count_tables;
    /* The function (haystack, needle) -> 1-based position of needle, 0 when absent. */
    const char *instr;

    /**
     * Required. Connects to `target` (a file path or a connection string); `where` is how
     * messages name it (no password). Without `create` a database that does not exist is
     * EB_ERR_IO. A server that cannot be reached is EB_ERR_IO with "cannot connect"; a build
     * without this store EB_ERR_UNSUPPORTED. On EB_OK *conn_out is the connection.
     */
    enum eb_status (*open)(const char *target, const char *where, int create, void **conn_out,
                           struct eb_diag *diag);
    /** Required; NULL is a no-op. */
    void (*close)(void *conn);
    /** Required. Runs `;`-separated statements without parameters; 0, or -1 (errmsg). */
    int (*exec)(void *conn, const char *sql);
    /**
     * Required. Runs one statement with parameters p[0..n) as $1..$n. Returns its rows (none
     * for a statement without results), or NULL on failure (errmsg says why).
     */
    struct eb_history__rows *(*query)(void *conn, const char *sql, const struct eb_history__val *p,
                                      int n);
    /** Required. 1: the next row is current; 0: no more rows; -1: failed (errmsg). */
    int (*next)(struct eb_history__rows *r);
    /** Required. Column `i` of the current row. text is NULL for SQL NULL. */
    int (*is_null)(struct eb_history__rows *r, int i);
    int64_t (*i64)(struct eb_history__rows *r, int i);
    double (*dbl)(struct eb_history__rows *r, int i);
    const char *(*text)(struct eb_history__rows *r, int i);
    /** Required; NULL is a no-op. */
    void (*rows_close)(struct eb_history__rows *r);
    /** Required. The last failure of `conn`, one line. */
    const char *(*errmsg)(void *conn);
    /** Required. Whether the connection to the server is gone (always 0 for a file). */
    int (*lost)(void *conn);
};

extern const struct eb_history__driver eb_history__sqlite;
/* Without EB_POSTGRES its open refuses with "this edgebench was built without PostgreSQL". */
extern const struct eb_history__driver eb_history__pg;

/* ---- the handle (history.h's struct eb_history), shared by history.c and history_sync.c ---- */

struct eb_history {
    const struct eb_history__driver *drv;
    void *conn;               /* NULL while a PostgreSQL writer spools */
    char target[4096];        /* as given: a connection string may hold a password */
    char where[4096];         /* as messages show it (eb_history_redact) */
    long version;             /* the database's schema version */
    struct eb_history *spool; /* a PostgreSQL writer's spool, once needed; owned */
    int last_spooled;         /* the last append went to the spool */
    char note[1024];          /* eb_history_take_note's line, "" none */
};

/**
 * eb_history_open, with `spool_fallback` = 0 for `edgebench sync`: a PostgreSQL server that
 * cannot be reached is an error, and nothing pending is uploaded on the way.
 */
EB_NODISCARD enum eb_status eb_history__open(const char *target, int create, int spool_fallback,
                                             struct eb_history **out, struct eb_diag *diag);

/**
 * Inserts `run` with key `uuid` in one transaction unless a run with that uuid is there
 * (*existed_out = 1, may be NULL; *id_out is then that run's id). With `pending_target` (the
 * spool) the run is also marked pending for that target, in the same transaction.
 */
EB_NODISCARD enum eb_status eb_history__insert(struct eb_history *h,
                                               const struct eb_history_run *run, const char *uuid,
                                               const char *pending_target, int64_t *id_out,
                                               int *existed_out, struct eb_diag *diag);

/**
 * The PostgreSQL writer `h` cannot reach its server (`reason`): opens the spool as h->spool and
 * sets h->note. EB_ERR_IO with both reasons when the spool cannot be written either.
 */
EB_NODISCARD enum eb_status eb_history__spool_start(struct eb_history *h, const char *reason,
                                                    struct eb_diag *diag);

/** Uploads the runs pending in the spool for h's target, if any; h->note says how many went.
 * A failure leaves them pending and is only noted. */
void eb_history__upload_spooled(struct eb_history *h);

#endif
