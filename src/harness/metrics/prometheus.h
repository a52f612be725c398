/*
 * The live Prometheus endpoint (`--prometheus ADDR:PORT`): a minimal HTTP/1.x server of our own
 * on one thread with poll() that serves GET /metrics in the Prometheus text exposition format
 * 0.0.4 while a run goes.
 *
 * Data crosses from the measuring threads through one snapshot (struct eb_prom_snapshot) under
 * a mutex: a slot thread adds its frame to the snapshot after the frame's timed stages
 * (eb_prom_frame), the sampler thread copies its latest sample in (eb_prom_system), and the
 * server thread copies the whole snapshot out under the mutex and formats it outside it. Nobody
 * holds the mutex across a system call, so a slow or stuck client never blocks a measurement.
 *
 * The server: GET only (any other method 405, with Allow: GET), /metrics only (any other path
 * 404), requests up to EB_PROM_MAX_REQUEST bytes (a longer header 431), a per-connection
 * deadline for reading the request and writing the answer (a client that is too slow is
 * dropped), at most `max_conns` connections at once (one more is answered 503 at once and
 * closed), Connection: close on every answer.
 *
 * Why not libmicrohttpd: the endpoint serves one page; a poll() loop over at most a few
 * sockets is about 300 lines here with every bound visible, against a library with its own
 * thread models and options to get right, and one more package on every board.
 */
#ifndef EB_PROMETHEUS_H
#define EB_PROMETHEUS_H

#include <stddef.h>
#include <stdint.h>

#include "eb/diag.h"
#include "harness/metrics/sampler.h"

/** Slots the snapshot holds (the run's two). */
#define EB_PROM_MAX_SLOTS 2
/** Stages timed per frame: read, preprocess, inference, postprocess, end-to-end (this order). */
#define EB_PROM_STAGES 5
/** Finite upper bounds of the latency histograms (the +Inf bucket comes on top). */
#define EB_PROM_BUCKETS 16
/** Cores, zones, GPUs and tegrastats rails kept of a system sample. */
#define EB_PROM_MAX_CORES 256
#define EB_PROM_MAX_RAILS EB_TEGRA_MAX_RAILS
/** The longest request (request line and headers) read; a longer one is answered 431. */
#define EB_PROM_MAX_REQUEST 4096
/** The largest page rendered. */
#define EB_PROM_MAX_PAGE (4u << 20)

/** The histograms' finite upper bounds in seconds (EB_PROM_BUCKETS of them, ascending). */
const double *eb_prom_bucket_bounds(void);
/** The `stage` label value of stage `i` ("read", "preprocess", ...). */
const char *eb_prom_stage_name(int i);

/** One slot as the endpoint shows it. */
struct eb_prom_slot {
    int used;                                            /* 0: not shown */
    char slot[16], model[4096], backend[32], device[32]; /* model: a path as given */
    double fps_target;                                   /* paced: the arrival rate; 0 unpaced */
    uint64_t frames;                                     /* measured frames of the pass so far */
    double elapsed_s; /* from the pass's start to the end of the last frame */
    /* Per stage: frames whose time fell in bucket b (not cumulative; the last entry counts
     * those above every bound), and the sum of the times in seconds. */
    uint64_t bucket[EB_PROM_STAGES][EB_PROM_BUCKETS + 1];
    double sum_s[EB_PROM_STAGES];
    uint64_t dropped, deadline_misses; /* paced */
    uint64_t mem_bytes, mem_peak_bytes, violations;
};

/** The latest system sample (what the sampler read; NaN where it read nothing). */
struct eb_prom_system {
    int have; /* 0 until the first sample */
    double cpu_pct;
    int n_cores;
    double core_pct[EB_PROM_MAX_CORES];
    double ram_used_bytes, ram_total_bytes, swap_used_bytes, rss_bytes;
    int n_zones;
    char zone[EB_SAMPLER_MAX_ZONES][40];
    double zone_c[EB_SAMPLER_MAX_ZONES];
    int n_gpus;
    struct {
        int index;
        char name[96];
        double util_pct, mem_used_bytes, mem_total_bytes, power_w, temp_c, sm_hz, mem_hz;
        int have_reasons;
        uint64_t reasons;
    } gpu[EB_SAMPLER_MAX_GPUS];
    int tegra; /* 1: the fields below come from a tegrastats line */
    double tegra_gpu_pct, tegra_gpu_hz, tegra_emc_pct, tegra_power_w;
    int n_rails;
    char rail[EB_PROM_MAX_RAILS][EB_TEGRA_NAME_MAX];
    double rail_w[EB_PROM_MAX_RAILS];
};

/** Everything one scrape shows. Plain data: copied whole under the mutex. */
struct eb_prom_snapshot {
    char host[256];
    uint64_t mem_limit_bytes; /* 0: not shown */
    struct eb_prom_slot slots[EB_PROM_MAX_SLOTS];
    struct eb_prom_system sys;
};

/**
 * Adds one frame's stage times (`stage_ns`, EB_PROM_STAGES entries) to slot `s`: the buckets,
 * sums and the frame count; `end_ns` is the frame's end since the pass started. Pure.
 */
void eb_prom_slot_add(struct eb_prom_slot *s, const uint64_t *stage_ns, uint64_t end_ns);

/** Copies a sampler reading into `out` (bytes, ratios in %, watts, hertz as above). Pure. */
void eb_prom_system_from(const struct eb_sampler_live *live, struct eb_prom_system *out);

/**
 * Renders `snap` in the text exposition format 0.0.4 into `buf` (`size` bytes, NUL-terminated).
 * Returns the length it needs without the NUL (as snprintf: larger than size-1 = cut). Every
 * metric family comes from one table (prometheus.c `families`): its HELP and TYPE lines once,
 * then its samples; a family without a sample is left out. Pure.
 */
size_t eb_prom_render(const struct eb_prom_snapshot *snap, char *buf, size_t size);

/** The number of metric families the endpoint knows (the table in prometheus.c). */
size_t eb_prom_family_count(void);
/** Family `i`'s name and base unit ("" for counts and ratios); NULL past the end. */
const char *eb_prom_family_name(size_t i, const char **unit_out);

/**
 * Writes `v` escaped as a label value (backslash, double quote, newline) into `buf` (`size`
 * bytes, NUL-terminated); returns the length needed, as snprintf.
 */
size_t eb_prom_escape_label(const char *v, char *buf, size_t size);

/**
 * Parses `--prometheus` text: "ADDR:PORT", ":PORT" or "PORT" (ADDR then 127.0.0.1); ADDR is a
 * dotted IPv4 address, "localhost", or "[IPv6]". Port 0 = any free port. EB_ERR_INVALID_ARG with
 * one line naming the text otherwise. `host_out` gets the address (no brackets).
 */
EB_NODISCARD enum eb_status eb_prom_parse_addr(const char *text, char *host_out, size_t host_size,
                                               int *port_out, struct eb_diag *diag);

struct eb_prom_config {
    const char *addr;       /* as eb_prom_parse_addr takes it; borrowed */
    int max_conns;          /* connections at once; 0 = 8 */
    uint64_t timeout_ns;    /* per connection, request read to answer written; 0 = 5 s */
    const char *host_label; /* the `host` label; NULL = gethostname() */
};

struct eb_prom;

/**
 * Binds, listens and starts the server thread. Caller owns `*p_out` and ends it with
 * eb_prom_stop. A bad address is EB_ERR_INVALID_ARG, a port in use or an address not of this
 * machine EB_ERR_IO, with one line naming the address ("failed to listen on
 * 127.0.0.1:9100: Address already in use").
 */
EB_NODISCARD enum eb_status eb_prom_start(const struct eb_prom_config *cfg, struct eb_prom **p_out,
                                          struct eb_diag *diag);
/** The address it listens on, "127.0.0.1:PORT" (the port chosen when 0 was asked). */
const char *eb_prom_address(const struct eb_prom *p);
/** Scrapes answered with a page so far (any thread). */
uint64_t eb_prom_scrapes(struct eb_prom *p);
/** Stops the thread, closes every socket, frees. NULL is a no-op. */
void eb_prom_stop(struct eb_prom *p);

/** The memory limit shown (any thread). */
void eb_prom_set_limit(struct eb_prom *p, uint64_t bytes);
/**
 * Shows slot `i` (< EB_PROM_MAX_SLOTS) with these labels (copied) and zero counts: call before
 * its measured pass. `fps_target` 0 = unpaced.
 */
void eb_prom_slot_begin(struct eb_prom *p, int i, const char *slot, const char *model,
                        const char *backend, const char *device, double fps_target);
/**
 * One measured frame of slot `i` (its thread, after the frame's timed stages): stage times,
 * its end since the pass started, whether it missed its deadline, and the slot's running
 * dropped count, memory figure, peak and violations. Holds the mutex for a copy's time.
 */
void eb_prom_frame(struct eb_prom *p, int i, const uint64_t *stage_ns, uint64_t end_ns, int missed,
                   uint64_t dropped, uint64_t mem_bytes, uint64_t mem_peak, uint64_t violations);
/** The sampler's hook (struct eb_sampler_config.on_sample): `ctx` is the struct eb_prom. */
void eb_prom_on_sample(void *ctx, const struct eb_sampler_live *live);

#endif
