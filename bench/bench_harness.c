/*
 * bench_harness: what the harness itself costs, measured in one run.
 *   1. The sampler thread's CPU use at a 500 ms interval, next to `top -b -d 0.5` (a common way
 *      to watch the same figures) run for the same time.
 *   2. The share of a frame spent outside `infer` on the synthesized yolov8n-640 through the real
 *      slot pipeline (synthetic 1920x1080 source → letterbox → ONNX Runtime → decode + NMS).
 * Usage: bench_harness [seconds=10] [frames=60]. Prints Markdown tables.
 */
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "eb/clock.h"
#include "harness/metrics/sampler.h"
#include "harness/pipeline/pipeline.h"
#include "harness/pipeline/slot.h"
#include "model/model.h"

extern char **environ;

static double cpu_seconds_self(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU percent of one core used by our sampler over `secs` seconds. */
static double bench_sampler(double secs, const char *dir)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/metrics.jsonl", dir);
    struct eb_sampler_config cfg = {.interval_ns = 500000000ull, .metrics_path = path};
    struct eb_sampler *s = NULL;
    struct eb_diag diag = {0};
    double c0 = cpu_seconds_self();
    uint64_t t0 = eb_clock_ns();
    if (eb_sampler_start(&cfg, &s, &diag) != EB_OK) {
        fprintf(stderr, "sampler: %s\n", diag.msg);
        return -1;
    }
    eb_clock_sleep_ns((uint64_t)(secs * 1e9));
    struct eb_system_summary sum;
    eb_sampler_stop(s, &sum);
    double wall = (double)(eb_clock_ns() - t0) / 1e9;
    return 100.0 * (cpu_seconds_self() - c0) / wall;
}

/* CPU percent of one core used by `top -b -d 0.5` over `secs` seconds. */
static double bench_top(double secs)
{
    char iters[32];
    snprintf(iters, sizeof(iters), "%d", (int)(secs / 0.5) + 1);
    char *argv[] = {"top", "-b", "-d", "0.5", "-n", iters, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 1, 0);
    pid_t pid;
    uint64_t t0 = eb_clock_ns();
    int rc = posix_spawnp(&pid, "top", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return -1;
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0)
        return -1;
    double wall = (double)(eb_clock_ns() - t0) / 1e9;
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    return 100.0 * cpu / wall;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? strtod(argv[1], NULL) : 10.0;
    long frames = argc > 2 ? strtol(argv[2], NULL, 10) : 60;
    if (secs <= 0 || frames <= 0) {
        fprintf(stderr, "usage: bench_harness [seconds] [frames]\n");
        return 2;
    }
    char dir[] = "/tmp/bench_harness.XXXXXX";
    if (mkdtemp(dir) == NULL)
        return 1;

    double ours = bench_sampler(secs, dir);
    double top = bench_top(secs);
    printf("## Sampler CPU use at a 500 ms interval (%.0f s each, same run)\n\n", secs);
    printf("| sampler | CPU %% of one core | target |\n|---|---:|---|\n");
    printf("| edgebench sampler thread (procfs + metrics.jsonl) | %.3f | <= 1%% %s |\n", ours,
           ours <= 1.0 ? "(pass)" : "(FAIL)");
    if (top >= 0)
        printf("| peer: top -b -d 0.5 | %.3f | |\n", top);
    else
        printf("| peer: top -b -d 0.5 | not available | |\n");

    struct eb_synth_options so = {
        .arch = EB_SYNTH_YOLOV8, .scale = 'n', .imgsz = 640, .num_classes = 80, .seed = 0};
    uint8_t *bytes = NULL;
    size_t len = 0;
    struct eb_diag diag = {0};
    if (eb_model_synth(&so, &bytes, &len, &diag) != EB_OK) {
        fprintf(stderr, "synth: %s\n", diag.msg);
        return 1;
    }
    atomic_int stop = 0;
    struct eb_slot_setup su = {
        .model_bytes = bytes,
        .model_len = len,
        .model_label = "embedded:yolov8n-640",
        .source_text = "synthetic=1920x1080",
        .synth_style = EB_SYNTH_RGB,
        .backend = eb_backend_find("ort"),
        .backend_cfg = {.device = EB_DEVICE_CPU, .mem_limit_bytes = 8000000000ull},
        .conf = 0.25f,
        .iou = 0.7f,
        .frames = frames,
        .warmup = 5,
        .loop = 1,
        .stop = &stop};
    struct eb_slot slot;
    eb_slot_init(&slot, 0, &su);
    struct eb_slot *one = &slot;
    if (su.backend != NULL && eb_slot_prepare(&slot) == EB_OK)
        eb_pipeline_run(&one, 1, &stop, NULL);
    if (su.backend == NULL || slot.status != EB_SLOT_OK) {
        fprintf(stderr, "pipeline: %s\n", slot.diag.msg);
        eb_slot_fini(&slot);
        free(bytes);
        return 1;
    }
    struct eb_slot_result r;
    memset(&r, 0, sizeof(r));
    eb_slot_summarize(&slot, &r);
    double e2e = r.stages[EB_STAGE_E2E].mean, inf = r.stages[EB_STAGE_INFER].mean;
    printf("\n## Share of a frame outside infer: synthesized yolov8n-640, synthetic 1920x1080, "
           "ONNX Runtime CPU, %llu frames\n\n",
           (unsigned long long)r.frames_measured);
    printf("| stage | mean ms | p50 ms | share of end-to-end |\n|---|---:|---:|---:|\n");
    for (int st = 0; st < EB_STAGE_COUNT; st++)
        printf("| %s | %.3f | %.3f | %.1f%% |\n", eb_stage_name((enum eb_stage)st),
               r.stages[st].mean, r.stages[st].p50, e2e > 0 ? 100.0 * r.stages[st].mean / e2e : 0);
    printf("| outside infer (end-to-end - inference) | %.3f | | %.1f%% |\n", e2e - inf,
           e2e > 0 ? 100.0 * (e2e - inf) / e2e : 0);
    printf("\ndetections per frame: %.2f\n", r.dets_per_frame_mean);
    free(r.classes);
    free(r.records);
    eb_slot_fini(&slot);
    free(bytes);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "%s/metrics.jsonl", dir);
    unlink(cmd);
    rmdir(dir);
    return 0;
}
