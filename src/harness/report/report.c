/*
 * Writing report files into the output folder. Each file is written under a temporary name in
 * the same folder, flushed to disk, then renamed over the final name: rename() within one
 * filesystem is atomic, so a crash leaves either the old file, the new file, or a stray
 * temporary — never a half-written report.json that a consumer would choke on.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness/report/report.h"
#include "harness/report/report_html.h"

enum eb_status eb_report__write_atomic(const char *dir, const char *name, eb_report_body_fn body,
                                       const void *ctx, struct eb_diag *diag)
{
    enum eb_status st = EB_ERR_IO;
    char path[4352], tmp[4400];
    FILE *fp = NULL;
    int tmp_made = 0;

    if (dir == NULL || dir[0] == '\0')
        dir = ".";
    int n = snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof(path)) {
        st = eb_diag_fail(diag, EB_ERR_IO,
                          "failed to write %s: output folder path too long (%zu bytes)", name,
                          strlen(dir));
        goto fail;
    }
    n = snprintf(tmp, sizeof(tmp), "%s/.%s.tmp.%ld", dir, name, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof(tmp)) {
        st = eb_diag_fail(diag, EB_ERR_IO,
                          "failed to write %s: output folder path too long (%zu bytes)", name,
                          strlen(dir));
        goto fail;
    }

    fp = fopen(tmp, "w");
    if (fp == NULL) {
        st = eb_diag_fail(diag, EB_ERR_IO,
                          "failed to write %s: %s; check that the folder %s exists and is "
                          "writable",
                          path, strerror(errno), dir);
        goto fail;
    }
    tmp_made = 1;
    errno = 0;
    if (body(fp, ctx) != 0 || fflush(fp) != 0 || ferror(fp)) {
        st = eb_diag_fail(diag, EB_ERR_IO, "failed to write %s: %s; check free space in %s", path,
                          errno != 0 ? strerror(errno) : "write failed", dir);
        goto fail;
    }
    /* The data must be on disk before the rename makes it visible under the final name. */
    if (fsync(fileno(fp)) != 0 && errno != EINVAL && errno != EROFS) {
        st = eb_diag_fail(diag, EB_ERR_IO, "failed to write %s: fsync: %s", path, strerror(errno));
        goto fail;
    }
    int rc = fclose(fp);
    fp = NULL;
    if (rc != 0) {
        st = eb_diag_fail(diag, EB_ERR_IO, "failed to write %s: %s; check free space in %s", path,
                          strerror(errno), dir);
        goto fail;
    }
    if (rename(tmp, path) != 0) {
        st = eb_diag_fail(diag, EB_ERR_IO, "failed to write %s: rename from temporary file: %s",
                          path, strerror(errno));
        goto fail;
    }
    tmp_made = 0;
    st = EB_OK;

fail:
    if (fp != NULL)
        fclose(fp);
    if (tmp_made)
        unlink(tmp);
    return st;
}

static int json_body(FILE *fp, const void *ctx)
{
    struct eb_json_writer w;
    eb_json_writer_init_file(&w, fp, 1);
    eb_report_write_json(ctx, &w);
    if (eb_json_writer_error(&w))
        return -1;
    return fputc('\n', fp) == EOF ? -1 : 0;
}

static int md_body(FILE *fp, const void *ctx)
{
    eb_report_write_md(ctx, fp);
    return ferror(fp) ? -1 : 0;
}

static int summary_body(FILE *fp, const void *ctx)
{
    eb_report_write_summary(ctx, fp);
    return ferror(fp) ? -1 : 0;
}

const char *eb_report_file_name(enum eb_report_file f)
{
    static const char *const names[EB_REPORT_FILE_COUNT] = {
        [EB_REPORT_FILE_MD] = "report.md",       [EB_REPORT_FILE_HTML] = "report.html",
        [EB_REPORT_FILE_INPUTS] = "inputs.json", [EB_REPORT_FILE_ASSUMPTIONS] = "assumptions.md",
        [EB_REPORT_FILE_SUMMARY] = "summary.md", [EB_REPORT_FILE_JSON] = "report.json",
    };
    return (unsigned)f < EB_REPORT_FILE_COUNT ? names[f] : "report";
}

enum eb_status eb_report_write_file(const struct eb_run_result *r, const char *dir,
                                    enum eb_report_file f, struct eb_diag *diag)
{
    switch (f) {
    case EB_REPORT_FILE_MD: return eb_report__write_atomic(dir, "report.md", md_body, r, diag);
    case EB_REPORT_FILE_HTML: return eb_report_write_html_file(r, dir, diag);
    case EB_REPORT_FILE_INPUTS: return eb_report__write_inputs(r, dir, diag);
    case EB_REPORT_FILE_ASSUMPTIONS: return eb_report__write_assumptions(r, dir, diag);
    case EB_REPORT_FILE_SUMMARY:
        return eb_report__write_atomic(dir, "summary.md", summary_body, r, diag);
    case EB_REPORT_FILE_JSON:
        return eb_report__write_atomic(dir, "report.json", json_body, r, diag);
    case EB_REPORT_FILE_COUNT: break;
    }
    return eb_diag_fail(diag, EB_ERR_INVALID_ARG, "no report file %d", (int)f);
}

enum eb_status eb_report_write_files(const struct eb_run_result *r, const char *dir,
                                     struct eb_diag *diag)
{
    enum eb_status first = EB_OK;
    for (int f = 0; f < EB_REPORT_FILE_COUNT; f++) {
        enum eb_status st = eb_report_write_file(r, dir, (enum eb_report_file)f, diag);
        if (first == EB_OK)
            first = st;
    }
    return first;
}

double eb_report__energy_per_frame_mj(const struct eb_run_result *r,
                                      enum eb_report_energy_source *source_out)
{
    /* The energy of the measured window (the sampler's marks at its start and end), over the
     * frames counted in it: warm-up, a solo baseline and the frames after the window are left
     * out on both sides. */
    const struct eb_system_summary *sys = &r->sys;
    uint64_t frames = 0;
    for (int i = 0; i < EB_NUM_SLOTS; i++)
        frames += r->slots[i].frames_measured;
    /* (nvml_used or tegrastats_used: a result never filled by the sampler has zeros there) */
    const int have =
        isfinite(sys->window_energy_mj) && frames > 0 && (sys->nvml_used || sys->tegrastats_used);
    if (source_out != NULL)
        *source_out = !have            ? EB_REPORT_ENERGY_SOURCE_NONE
                      : sys->nvml_used ? EB_REPORT_ENERGY_SOURCE_NVML
                                       : EB_REPORT_ENERGY_SOURCE_TEGRASTATS;
    return have ? sys->window_energy_mj / (double)frames : NAN;
}

uint64_t eb_report__throttle_reasons(const struct eb_system_summary *s)
{
    uint64_t mask = 0;
    int n = s->n_gpus < 0 ? 0 : s->n_gpus > EB_SAMPLER_MAX_GPUS ? EB_SAMPLER_MAX_GPUS : s->n_gpus;
    for (int i = 0; s->nvml_used && i < n; i++)
        mask |= s->gpus[i].throttle_reasons;
    return mask & EB_SAMPLER_THROTTLE_SLOWDOWN;
}

int eb_report__warnings(const struct eb_run_result *r, const char **out, int max)
{
    const int cap = (int)(sizeof(r->warnings) / sizeof(r->warnings[0]));
    int n = 0;
    for (int i = 0; i < r->n_warnings && i < cap && n < max; i++)
        out[n++] = r->warnings[i];
    for (int i = 0; i < EB_NUM_SLOTS && n < max; i++)
        if (r->slots[i].profile_note[0] != '\0')
            out[n++] = r->slots[i].profile_note;
    return n;
}

const char *eb_report__fmtd(char *buf, size_t n, double v, int prec)
{
    if (!isfinite(v))
        snprintf(buf, n, "n/a");
    else
        snprintf(buf, n, "%.*f", prec, v);
    return buf;
}

const char *eb_report__fmt_ci(char *buf, size_t n, const struct eb_stat_ci *ci)
{
    if (!ci->available || !isfinite(ci->lo) || !isfinite(ci->hi))
        snprintf(buf, n, "n/a");
    else
        snprintf(buf, n, "[%.3f, %.3f]", ci->lo, ci->hi);
    return buf;
}

const char *eb_report__fmt_ap(char *buf, size_t n, double v)
{
    return eb_report__fmtd(buf, n, v >= 0 ? v : NAN, 4);
}

const char *eb_report__criteria(const struct eb_run_result *r, char *buf, size_t n)
{
    char b1[32], b2[32], b3[32], b4[32], b5[32], cov[64] = "";
    const struct eb_validity_criteria *c = &r->criteria;
    if (c->max_cov_pct > 0)
        snprintf(cov, sizeof(cov), "end-to-end CoV at most %s%%, ",
                 eb_report__fmtd(b4, sizeof(b4), c->max_cov_pct, 1));
    snprintf(buf, n,
             "at least %llu measured frames, at least %s s measured, a steady state (no fifth of "
             "the frames' median end-to-end time more than %s%% from the whole's), %spaced slots "
             "dropping at most %s%% of their frames, other processes using at most %s%% of the "
             "CPUs, no GPU throttling",
             (unsigned long long)c->min_frames,
             eb_report__fmtd(b1, sizeof(b1), c->min_duration_s, 1),
             eb_report__fmtd(b2, sizeof(b2), c->max_drift_pct, 1), cov,
             eb_report__fmtd(b3, sizeof(b3), c->max_drop_pct, 1),
             eb_report__fmtd(b5, sizeof(b5), c->max_others_cpu_pct, 1));
    return buf;
}
