/*
 * A finished run as a record of the run history (harness/results/history.h).
 */
#ifndef EB_RECORD_H
#define EB_RECORD_H

#include "harness/results/history.h"

struct eb_config;     /* harness/cmd/config.h */
struct eb_env_facts;  /* harness/report/report.h */
struct eb_llm_result; /* harness/results/llm_result.h */

/**
 * Fills `out` (zeroed first) from a finished run: `r` after eb_report_finish, `cfg` its
 * configuration (NULL: no config_json), `env` the environment facts, `version` and
 * `ort_version` (NULL when unknown). EB_ERR_NOMEM when the configuration echo cannot be built.
 */
EB_NODISCARD enum eb_status
eb_history_from_result(const struct eb_run_result *r, const struct eb_config *cfg,
                       const struct eb_env_facts *env, const char *version, const char *ort_version,
                       struct eb_history_run *out, struct eb_diag *diag);

/**
 * Fills `out` (zeroed first) from a finished `edgebench llm` run: kind llm, its `llm` part, the
 * slots skipped; as eb_history_from_result otherwise (`cfg` the run options it parsed).
 */
EB_NODISCARD enum eb_status eb_history_from_llm(const struct eb_llm_result *r,
                                                const struct eb_config *cfg,
                                                const struct eb_env_facts *env, const char *version,
                                                const char *ort_version, struct eb_history_run *out,
                                                struct eb_diag *diag);

/** Where eb_history_store put a run. */
struct eb_history_receipt {
    int64_t id;       /* the run's id in `where` */
    int spooled;      /* 1: its PostgreSQL server could not be reached; kept in the local spool */
    char where[4096]; /* the database as messages show it (no password), or the spool's path */
    char note[1024];  /* one line for the user, "" none: why it was spooled, or that runs
                       * pending in the spool were uploaded */
    char uuid[EB_HISTORY_UUID_SIZE]; /* the run's key in every database it reaches */
};

/**
 * Opens the database `path` (a file, made when missing, or a PostgreSQL connection string),
 * appends `rec` (its uuid made first when it has none), closes; where it went, and the uuid, in
 * *out.
 */
EB_NODISCARD enum eb_status eb_history_store(const char *path, struct eb_history_run *rec,
                                             struct eb_history_receipt *out, struct eb_diag *diag);

struct eb_log; /* eb/log.h */

/** Fills a history record of a finished run (eb_history_from_result, eb_history_from_llm with
 * the caller's `ctx`); `env` the environment facts. */
typedef enum eb_status (*eb_history_fill_fn)(const void *ctx, const struct eb_env_facts *env,
                                             struct eb_history_run *out, struct eb_diag *diag);

/**
 * Appends a finished run to the history database `db` (--db: a file, a connection string, or
 * "none"/unset as eb_history_path reads it): `fill` makes the record, eb_history_store appends
 * it, and `log` says where (or why it went to the spool). Never fails the run: 0 when recorded
 * (*out says where; out->where "" when the history is off), -1 when not, with the reason in
 * `why` (`why_size` bytes), also logged as a warning, for the caller's report warnings.
 */
int eb_history_record(const char *db, eb_history_fill_fn fill, const void *ctx,
                      const struct eb_log *log, struct eb_history_receipt *out, char *why,
                      size_t why_size);

#endif
