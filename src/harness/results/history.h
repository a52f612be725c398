/*
 * The run history: every `edgebench run` (kind "run"), every row of `edgebench compare` (kind
 * "sweep") and every `edgebench llm` (kind "llm") is appended to a SQLite database, and
 * `edgebench history` / `edgebench diff` read it back (history_cmd.c). One record per run: the
 * command line, the configuration, an environment fingerprint, the verdict, and
 *   - for "run" and "sweep": per slot the model (path, SHA-256, size), backend, device,
 *     precision, input size, frames, FPS, memory peak, energy per frame, verdict and every
 *     latency statistic with its confidence intervals (struct eb_history_slot);
 *   - for "llm": the model (path, SHA-256, size, arch, size label, parameters, dtype), the
 *     workload (prompt, gen, reps, ctx, seed), where it ran, TTFT, prefill and decode per-token
 *     latency statistics with their CIs, prefill and decode tokens/s (mean and std over the
 *     repetitions), MFU and memory-bandwidth utilisation, weight / KV-cache / peak bytes, and
 *     the verdict (struct eb_history_llm). Such a run has no slot rows.
 *
 *     struct eb_history *h = NULL;
 *     if (eb_history_open(path, 1, &h, &diag) == EB_OK &&
 *         eb_history_append(h, rec, &id, &diag) == EB_OK)
 *         printf("run %lld\n", (long long)id);
 *     eb_history_close(h);
 *
 * Two stores, one schema: a SQLite file (the default, EB_HISTORY_DEFAULT_TEXT) or a PostgreSQL
 * database shared by a fleet of boards (`--db postgresql://USER@HOST/DB`, any libpq connection
 * string; eb_history_is_postgres). Every run has a uuid, its key across databases. A writer that
 * cannot reach its PostgreSQL server keeps the run in the local spool (eb_history_spool_path, a
 * SQLite history of its own) and says so (eb_history_take_note); `edgebench sync`, or the next
 * writer that reaches that server, uploads what is pending, inserting a run only when its uuid
 * is absent, and removes from the spool only what the server committed.
 *
 * Schema (versioned by the `meta` row schema_version = EB_HISTORY_SCHEMA_VERSION; a database of
 * a newer version is refused, never altered; an older one is read as it is, and upgraded in
 * place when opened for writing): tables `meta(key, value)`, `runs` (one row per run), `slots`
 * (two rows per run or sweep), `stats` (one row per slot and latency stage), `llm` (one row per
 * llm run) and `llm_stats` (one row per llm run and latency: "ttft", "prefill", "decode"). The
 * columns are listed in history.c (k_schema, k_schema_llm) and README.md.
 *
 * Not thread-safe: one handle per thread. Every append is one transaction. Concurrent processes
 * are serialised by SQLite's locking (a writer waits up to EB_HISTORY_BUSY_MS) or run side by
 * side on PostgreSQL.
 */
#ifndef EB_HISTORY_H
#define EB_HISTORY_H

#include <stdint.h>
#include <stdio.h>

#include "eb/diag.h"
#include "harness/metrics/stats.h"
#include "harness/results/result.h"

/* 2: slots.map50_95 and map50 (run --data); 3: slots.model_precision and compute_precision;
 * 4: tables llm and llm_stats (runs of kind "llm"); 5: runs.uuid (unique) and an index on
 * runs.hostname */
#define EB_HISTORY_SCHEMA_VERSION 5
#define EB_HISTORY_BUSY_MS        5000
/** How --help and the README state the default database. */
#define EB_HISTORY_DEFAULT_TEXT "${XDG_DATA_HOME:-~/.local/share}/edgebench/history.db"
/** The spool's file name, in the default database's folder. */
#define EB_HISTORY_SPOOL_NAME "spool.db"
/** Room for a run's uuid: 36 characters and the NUL. */
#define EB_HISTORY_UUID_SIZE 37

/** One slot of a recorded run. Strings are "" when unknown. */
/* The history's stages: enum eb_stage's, then "pipeline" (preprocess + inference +
 * postprocess: everything but the source). */
#define EB_HISTORY_PIPELINE EB_STAGE_COUNT
#define EB_HISTORY_STAGES   (EB_STAGE_COUNT + 1)

/** The stored name of history stage `k`: eb_stage_name, or "pipeline". */
const char *eb_history_stage_name(int k);

struct eb_history_slot {
    int index;
    char name[16];   /* "rgb", "thermal" */
    char status[16]; /* "ok", "failed", "skipped" */
    char message[EB_DIAG_MSG_MAX];
    char model[4096];
    char model_sha256[65];
    uint64_t model_size;
    char backend[32];
    char backend_version[64];
    char device[16];
    char provider[64];
    char precision[16];        /* --precision */
    char model_precision[16];  /* read from the model's graph ("int8-qdq"...); "" unknown */
    char compute_precision[8]; /* what the backend computed in ("fp32", "fp16", "int8") */
    int input_w, input_h;
    uint64_t frames, warmup_frames;
    double wall_s, fps;         /* measured phase; fps = frames / wall_s */
    uint64_t mem_peak_bytes;    /* the slot's peak of the monitored memory figure */
    double energy_per_frame_mj; /* the run's figure when this slot alone measured; NAN else */
    double map50_95, map50;     /* COCO accuracy of the measured frames (--data); NAN else */
    char verdict[16];           /* "VALID", "INVALID", "" not judged */
    char reasons[2048];         /* "; "-joined */
    /* Per stage (enum eb_stage), then the pipeline apart from the source at
     * EB_HISTORY_PIPELINE (eb_history_stage_name); count 0 = not measured. */
    struct eb_stat_summary stages[EB_HISTORY_STAGES];
};

/** The kind of a run of `edgebench llm`: its figures are in eb_history_run.llm. */
#define EB_HISTORY_KIND_LLM "llm"

/**
 * A run of `edgebench llm`: per repetition a prefill of `prompt` tokens, then greedy decode of
 * `gen` tokens with a KV cache. Strings are "" when unknown; doubles NAN when not measured; a
 * latency summary with count 0 was not measured.
 */
struct eb_history_llm {
    /* the model */
    char model[4096];
    char model_sha256[65];
    uint64_t model_size; /* bytes */
    char arch[16];       /* "llama", "qwen2"; "" for a model without edgebench's metadata */
    char size[8];        /* "tiny", "0.5b", "1b"; "" likewise */
    uint64_t params;     /* 0 unknown */
    char dtype[8];       /* "fp32", "fp16" */
    /* the workload */
    int prompt, gen, reps; /* tokens, tokens, repetitions */
    int ctx;               /* the context length the model was run with */
    uint64_t seed;         /* stored bit for bit (as a signed 64-bit integer) */
    /* where it ran */
    char backend[32];
    char backend_version[64];
    char device[16];
    char provider[64];
    char precision[16];
    int threads;
    /* the figures */
    struct eb_stat_summary ttft;    /* time to first token, ms, one sample per repetition */
    struct eb_stat_summary prefill; /* prefill time, ms */
    struct eb_stat_summary decode;  /* decode latency per token, ms */
    double prefill_tok_s, prefill_tok_s_std; /* mean and std over the repetitions */
    double decode_tok_s, decode_tok_s_std;
    double prefill_mfu; /* fraction 0..1 of the device's dense peak; NAN unknown */
    double decode_mbu;  /* fraction 0..1 of the device's memory bandwidth; NAN unknown */
    uint64_t weight_bytes;
    uint64_t kv_bytes; /* the KV cache at the final length (prompt + gen) */
    uint64_t peak_mem_bytes;
    char verdict[16];   /* "VALID", "INVALID", "" not judged */
    char reasons[2048]; /* "; "-joined */
};

/** One recorded run. */
struct eb_history_run {
    int64_t id;                      /* assigned by eb_history_append */
    char uuid[EB_HISTORY_UUID_SIZE]; /* the run's key; "" = eb_history_append makes one */
    char started_at[32];
    char kind[16]; /* "run", "sweep", EB_HISTORY_KIND_LLM */
    char mode[16];
    char command_line[4096];
    char *config_json; /* the configuration echo of report.json; owned (eb_history_run_fini) */
    double duration_s;
    int exit_code;
    int interrupted;
    char verdict[16];
    char reasons[4096];
    char output_dir[4096];
    double energy_per_frame_mj; /* NAN when not measured */
    /* environment fingerprint */
    char edgebench_version[32];
    char ort_version[64];
    char hostname[256]; /* the board's (`history --host`) */
    char os[256];
    char kernel[256];
    char cpu_model[256];
    int n_cpus;
    char gpu_name[256];
    char gpu_driver[64];
    char l4t_release[256];
    char power_mode[128];
    char fingerprint[17]; /* first 16 hex digits of the SHA-256 of the facts above */
    struct eb_history_slot slots[EB_NUM_SLOTS]; /* unused (all skipped) in an llm run */
    struct eb_history_llm llm;                  /* meaningful when kind is "llm" */
};

/** Whether `run` is of kind "llm". */
int eb_history_run_is_llm(const struct eb_history_run *run);

/** Frees what the record owns (config_json); the record can be filled again. */
void eb_history_run_fini(struct eb_history_run *run);

/* eb_history_from_result (a finished run as a record) is the commands': harness/cmd/record.h. */

/** Computes run->fingerprint from the environment fields. */
void eb_history_fingerprint(struct eb_history_run *run);

/**
 * The database for `--db` text `db` (a file path or a PostgreSQL connection string): NULL means
 * $EB_DB when set and not empty, else the default, EB_HISTORY_DEFAULT_TEXT ($XDG_DATA_HOME,
 * else $HOME/.local/share); "none" gives 0 with buf "" (no history). Returns 1 with the target
 * in buf; 0 with buf "" for none; -1 with the reason in `diag` when the default cannot be made
 * ($XDG_DATA_HOME and $HOME unset) or the text is too long.
 */
int eb_history_path(const char *db, char *buf, size_t size, struct eb_diag *diag);

/**
 * Whether `target` names a PostgreSQL database: a `postgresql://` or `postgres://` URI, or a
 * libpq `key=value` connection string that starts with one of libpq's keywords (host, dbname,
 * user, ...). Anything else is a file path.
 */
int eb_history_is_postgres(const char *target);

/** `target` as messages show it: a connection string without its password. */
void eb_history_redact(const char *target, char *buf, size_t size);

/**
 * The spool's path: EB_HISTORY_SPOOL_NAME beside the default database. 0, or -1 with the reason
 * in `diag` ($XDG_DATA_HOME and $HOME unset).
 */
int eb_history_spool_path(char *buf, size_t size, struct eb_diag *diag);

/** A new random (version 4) uuid, lower-case hex with dashes. EB_ERR_IO without /dev/urandom. */
EB_NODISCARD enum eb_status eb_history_uuid_new(char out[EB_HISTORY_UUID_SIZE],
                                                struct eb_diag *diag);

struct eb_history; /* an open database */

/**
 * Opens the database `path` (a file, or a PostgreSQL connection string). With `create` the file
 * and its folders are created when missing, and the schema is created in an empty database (an
 * older one upgraded in place); without it a missing file is EB_ERR_IO ("no history database at
 * PATH; ...") and the database is opened read-only. EB_ERR_FORMAT when it is not an edgebench
 * history database or has a newer schema. PostgreSQL with `create`: a server that cannot be
 * reached is not an error, the appends go to the spool (eb_history_take_note says so once); one
 * that can is first sent the runs pending in the spool for it. EB_ERR_UNSUPPORTED for a
 * PostgreSQL target in a build without it (-DEB_POSTGRES=OFF).
 */
EB_NODISCARD enum eb_status eb_history_open(const char *path, int create, struct eb_history **out,
                                            struct eb_diag *diag);
/** Closes; NULL is a no-op. */
void eb_history_close(struct eb_history *h);

/**
 * Appends `run` in one transaction (its uuid, or a new one); its id into *id_out. A run of kind
 * "llm" stores its `llm` record and no slots; another kind its slots and no `llm` record. On
 * PostgreSQL, a server that is gone (at open, or now) sends the run to the spool instead: then
 * eb_history_spooled is 1 and *id_out is the spool's id.
 */
EB_NODISCARD enum eb_status eb_history_append(struct eb_history *h,
                                              const struct eb_history_run *run, int64_t *id_out,
                                              struct eb_diag *diag);

/** Where the last append went, as messages show it: the database, or the spool's path. */
const char *eb_history_where(const struct eb_history *h);
/** Whether the last append went to the spool. */
int eb_history_spooled(const struct eb_history *h);
/**
 * One line for the user, once: the server cannot be reached and the runs are kept in the spool,
 * or runs from the spool were uploaded. Returns 1 with the line in buf and forgets it; 0 when
 * there is none.
 */
int eb_history_take_note(struct eb_history *h, char *buf, size_t size);

/**
 * Reads run `id` into `out` (zeroed first; eb_history_run_fini frees it). EB_ERR_INVALID_ARG
 * "no run ID in PATH" when there is none.
 */
EB_NODISCARD enum eb_status eb_history_get(struct eb_history *h, int64_t id,
                                           struct eb_history_run *out, struct eb_diag *diag);

/** Filters of eb_history_list (NULL = any). */
struct eb_history_filter {
    const char *model;   /* substring of the model path */
    const char *backend; /* exact */
    const char *device;  /* exact */
    const char *host;    /* the board's hostname, exact */
    int64_t limit;       /* most recent runs; 0 = all */
};

/** One line of the history list: a slot of a run or sweep, or an llm run. */
struct eb_history_row {
    int64_t id;
    const char *started_at, *kind, *mode, *run_verdict;
    const char *host, *uuid;            /* the run's board and key ("" unknown) */
    const struct eb_history_slot *slot; /* end_to_end is stages[EB_STAGE_E2E]; NULL for llm */
    const struct eb_history_llm *llm;   /* the llm run; NULL for a slot */
};

typedef void (*eb_history_row_fn)(void *ctx, const struct eb_history_row *row);

/**
 * Calls `fn` for every slot that ran or failed (skipped slots are left out) and every llm run
 * matching `filter` (model, backend and device are the slot's or the llm run's), newest run
 * first, slots in index order. Pointers in the row live for the call.
 */
EB_NODISCARD enum eb_status eb_history_list(struct eb_history *h,
                                            const struct eb_history_filter *filter,
                                            eb_history_row_fn fn, void *ctx, struct eb_diag *diag);

/**
 * Prints the comparison of run `a` (before) and `b` (after) to `out`: per slot that ran in both,
 * each latency statistic's p50 and p99 with their 95% CIs, FPS, memory peak and energy per
 * frame, the change A→B in %, and REGRESSION where both CIs exist, they do not overlap and B is
 * worse by more than `threshold_pct`. Two llm runs: TTFT p50/p99, prefill p50, decode per-token
 * p50/p99 with their CIs (judged as above), prefill and decode tokens/s as mean ± std (a
 * REGRESSION when the ±std intervals do not overlap and B is slower by more than the
 * threshold), MFU, bandwidth utilisation, peak memory and KV-cache bytes (shown). Returns the
 * number of regressions, or -1 (printing nothing) when the runs are of different kinds (one llm,
 * the other not: see eb_history_diff_kinds_differ), when no slot ran in both runs, or when
 * either llm run has no measured latency.
 */
int eb_history_diff(const struct eb_history_run *a, const struct eb_history_run *b,
                    double threshold_pct, FILE *out);

/** Whether one of `a` and `b` is an llm run and the other is not: they cannot be compared. */
int eb_history_diff_kinds_differ(const struct eb_history_run *a, const struct eb_history_run *b);

/** `edgebench history [options]`; returns the exit code (0, or 2 on bad input). */
int eb_history_main(int argc, char **argv, FILE *out, FILE *err);
/** `edgebench diff A B [options]`; returns 0, 4 on a regression, 2 on bad input. */
int eb_diff_main(int argc, char **argv, FILE *out, FILE *err);
/**
 * `edgebench sync [--db TARGET]`: uploads the spooled runs (of TARGET, else $EB_DB, else all);
 * returns 0 when none is left pending, 1 when a server could not take them (one line each
 * says why), 2 on bad input.
 */
int eb_sync_main(int argc, char **argv, FILE *out, FILE *err);

#endif
