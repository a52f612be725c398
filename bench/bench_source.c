/*
 * bench_source: what reading a synthetic frame costs, next to what drawing it costs.
 * The synthetic source renders a ring of frames when it opens (eb_source_options
 * .synth_ring_frames); a read is then a copy into the caller's buffer (eb_source_set_output, as
 * the pipeline does with a GPU engine's frame buffer) or a pointer into the ring. The peer,
 * measured in the same run, is the same source drawing every frame when it is read
 * (synth_ring_frames = -1), which is what a read cost before the ring.
 * Usage: bench_source [reads=300]. Prints a Markdown table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eb/clock.h"
#include "harness/metrics/stats.h"
#include "harness/pipeline/source.h"

/* Frames drawn by the peer: drawing is slow, fewer reads give a stable p50 already. */
#define PEER_READS 60
/* The 1280x720 rows' target for a read into the caller's buffer. */
#define TARGET_720_MS 0.3

struct read_stats {
    double open_ms, open_cpu_ms, p50, p99;
    int64_t ring_frames;
    int ok;
};

/* CPU time of this thread: the open's cost apart from waiting for a busy machine's cores. */
static double thread_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Opens `text` (style, ring option), reads `reads` frames into `buf` (NULL = the source's own
 * buffer) and summarizes the read times. */
static struct read_stats measure(const char *text, enum eb_synth_style style, int ring, int reads,
                                 uint8_t *buf, size_t cap)
{
    struct read_stats r = {0};
    struct eb_source_spec spec;
    struct eb_diag diag = {0};
    struct eb_source *src = NULL;
    const struct eb_source_options opts = {
        .max_frames = reads, .synth_style = style, .seed = 1, .synth_ring_frames = ring};
    double *ms = malloc((size_t)reads * sizeof(*ms));
    if (ms == NULL || eb_source_spec_parse(text, &spec, &diag) != EB_OK) {
        fprintf(stderr, "%s: %s\n", text, ms == NULL ? "out of memory" : diag.msg);
        free(ms);
        return r;
    }
    const uint64_t t0 = eb_clock_ns();
    const double c0 = thread_cpu_ms();
    if (eb_source_open(&spec, &opts, &src, &diag) != EB_OK) {
        fprintf(stderr, "%s: %s\n", text, diag.msg);
        free(ms);
        return r;
    }
    r.open_ms = (double)(eb_clock_ns() - t0) / 1e6;
    r.open_cpu_ms = thread_cpu_ms() - c0;
    r.ring_frames = eb_source_synth_ring_frames(src);
    eb_source_set_output(src, buf, cap);
    struct eb_frame f;
    volatile unsigned sink = 0; /* a byte of each frame is read, as a consumer would */
    int n = 0;
    for (; n < reads; n++) {
        const uint64_t a = eb_clock_ns();
        const enum eb_status st = eb_source_next(src, &f, &diag);
        ms[n] = (double)(eb_clock_ns() - a) / 1e6;
        if (st != EB_OK)
            break;
        sink += f.rgb[(size_t)n * 997 % ((size_t)f.width * 3)];
    }
    if (n == reads) {
        struct eb_stat_summary s;
        eb_stat_summarize_ms(ms, (size_t)n, &s);
        r.p50 = s.p50;
        r.p99 = s.p99;
        r.ok = 1;
    } else {
        fprintf(stderr, "%s: frame %d: %s\n", text, n, diag.msg);
    }
    eb_source_destroy(src);
    free(ms);
    return r;
}

int main(int argc, char **argv)
{
    const long reads = argc > 1 ? strtol(argv[1], NULL, 10) : 300;
    if (reads < 10 || reads > 100000) {
        fprintf(stderr, "usage: bench_source [reads: 10..100000]\n");
        return 2;
    }
    static const struct {
        const char *text;
        enum eb_synth_style style;
    } cases[] = {
        {"synthetic=1280x720", EB_SYNTH_RGB},  {"synthetic=1280x720", EB_SYNTH_THERMAL},
        {"synthetic=640x512", EB_SYNTH_RGB},   {"synthetic=640x512", EB_SYNTH_THERMAL},
        {"synthetic=1920x1080", EB_SYNTH_RGB},
    };
    printf("## Synthetic source: ring rendered at open, %ld reads each; peer: drawing each frame "
           "at read time (%d reads), same run\n\n",
           reads, PEER_READS);
    printf("| source | style | ring | open ms (CPU ms) | read p50 / p99 ms, caller's buffer "
           "| read p50 / p99 ms, source's buffer | peer: draw per read p50 / p99 ms "
           "| peer / read p50 |\n|---|---|---|---:|---:|---:|---:|---:|\n");
    int fail = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct eb_source_spec spec;
        struct eb_diag diag = {0};
        if (eb_source_spec_parse(cases[i].text, &spec, &diag) != EB_OK)
            return 1;
        const size_t frame = (size_t)spec.synth_w * (size_t)spec.synth_h * 3, cap = frame + 64;
        uint8_t *buf = NULL;
        if (posix_memalign((void **)&buf, 64, cap) != 0)
            return 1;
        memset(buf, 0, cap); /* its pages are mapped before timing, as a frame buffer's are */
        const enum eb_synth_style style = cases[i].style;
        const struct read_stats into = measure(cases[i].text, style, 0, (int)reads, buf, cap);
        const struct read_stats own = measure(cases[i].text, style, 0, (int)reads, NULL, 0);
        const struct read_stats peer = measure(cases[i].text, style, -1, PEER_READS, buf, cap);
        free(buf);
        if (!into.ok || !own.ok || !peer.ok) {
            fail = 1;
            continue;
        }
        printf("| %s | %s | %lld frames, %.0f MiB | %.1f (%.1f) | %.3f / %.3f | %.4f / %.4f | %.3f "
               "/ %.3f "
               "| %.0fx |\n",
               cases[i].text, style == EB_SYNTH_THERMAL ? "thermal" : "rgb",
               (long long)into.ring_frames, (double)into.ring_frames * (double)frame / 1048576.0,
               into.open_ms, into.open_cpu_ms, into.p50, into.p99, own.p50, own.p99, peer.p50,
               peer.p99, into.p50 > 0 ? peer.p50 / into.p50 : 0.0);
        if (spec.synth_w == 1280 && spec.synth_h == 720)
            fail |= into.p50 > TARGET_720_MS;
    }
    printf("\ntarget: read p50 into the caller's buffer <= %.1f ms at 1280x720: %s\n",
           TARGET_720_MS, fail ? "FAIL" : "pass");
    return 0;
}
