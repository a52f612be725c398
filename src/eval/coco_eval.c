/*
 * COCO bbox evaluation (pycocotools COCOeval semantics; see coco_eval.h for the rules).
 *
 * Layout: ground truth and detections are bucketed by (category, image rank) where the rank
 * orders images by ascending image_id, as COCOeval's sorted imgIds. Each category is then
 * evaluated image by image (IoU matrix once, matching once per area range and IoU threshold)
 * into flat per-category arrays, which the accumulation step sorts and integrates for each
 * maxDets value.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb/file.h"
#include "eval/coco_eval.h"

#define NT EB_COCO_NUM_IOU
#define NR EB_COCO_NUM_REC
#define NA EB_COCO_NUM_AREA
#define NM 3 /* maxDets 1, 10, 100 */

static const int max_dets[NM] = {1, 10, EB_COCO_MAX_DETS};
static const double area_lo[NA] = {0.0, 0.0, 32.0 * 32.0, 96.0 * 96.0};
static const double area_hi[NA] = {1e5 * 1e5, 32.0 * 32.0, 96.0 * 96.0, 1e5 * 1e5};

struct eval {
    const struct eb_dataset *ds;
    const struct eb_coco_det *dets;
    size_t K, I;
    int64_t *cats;      /* K sorted category ids */
    size_t *rank;       /* image index -> rank */
    size_t *gt_off;     /* K*I+1 bucket offsets into gt_idx */
    size_t *gt_idx;     /* annotation indices, bucketed, in dataset order */
    size_t *dt_off;     /* K*I+1 bucket offsets into dt_idx */
    size_t *dt_idx;     /* detection indices, bucketed, sorted by score (stable) */
    double iou_thr[NT]; /* numpy linspace(.5, .95, 10) */
    double rec_thr[NR]; /* numpy linspace(0, 1, 101) */
};

/* Per-category working arrays (capacity = detections kept for the category). */
struct cat_work {
    double *score; /* n kept detections, in image-rank then score order */
    int *pos;      /* the detection's rank within its image and category (0 = best) */
    uint8_t *tp;   /* [NA][NT][n]: matched to a gt */
    uint8_t *ig;   /* [NA][NT][n]: ignored */
    size_t n, cap;
    size_t npig[NA]; /* non-ignored gt per area range */
    size_t *sel;     /* scratch: selected positions for one maxDets */
    double *rc, *pr; /* scratch: recall / precision per rank */
    double *ious;    /* scratch: D x G of one image */
    size_t ious_cap;
    size_t *gord; /* scratch: gt order of one image */
    uint8_t *gig, *gmatched, *gcrowd;
    size_t g_cap;
};

static void linspace_thresholds(struct eval *ev)
{
    /* As numpy.linspace: i * ((stop - start) / (num - 1)) + start, the last one exactly stop. */
    const double step_iou = (0.95 - 0.5) / (NT - 1);
    for (int i = 0; i < NT; i++)
        ev->iou_thr[i] = (double)i * step_iou + 0.5;
    ev->iou_thr[NT - 1] = 0.95;
    const double step_rec = (1.0 - 0.0) / (NR - 1);
    for (int i = 0; i < NR; i++)
        ev->rec_thr[i] = (double)i * step_rec + 0.0;
    ev->rec_thr[NR - 1] = 1.0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Index of `id` in ev->cats, or -1. */
static long cat_index(const struct eval *ev, int64_t id)
{
    size_t lo = 0, hi = ev->K;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ev->cats[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ev->K && ev->cats[lo] == id ? (long)lo : -1;
}

struct rank_key {
    int64_t id;
    size_t index;
};

static int cmp_rank_key(const void *a, const void *b)
{
    const struct rank_key *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Sorting detection indices by score, descending, ties by position (a stable sort). */
struct score_key {
    double score;
    size_t index;
};

static int cmp_score_key(const void *a, const void *b)
{
    const struct score_key *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static void eval_fini(struct eval *ev)
{
    free(ev->cats);
    free(ev->rank);
    free(ev->gt_off);
    free(ev->gt_idx);
    free(ev->dt_off);
    free(ev->dt_idx);
}

static int det_valid(const struct eval *ev, const struct eb_coco_det *d)
{
    return d->image < ev->I && isfinite(d->score) && isfinite(d->bbox[0]) && isfinite(d->bbox[1]) &&
           isfinite(d->bbox[2]) && isfinite(d->bbox[3]) && cat_index(ev, d->category_id) >= 0;
}

/* Builds categories, image ranks and the two bucket tables. */
static enum eb_status eval_init(struct eval *ev, const struct eb_dataset *ds,
                                const struct eb_coco_det *dets, size_t n_dets,
                                const int64_t *cat_ids, size_t n_cat_ids, struct eb_diag *diag)
{
    memset(ev, 0, sizeof(*ev));
    ev->ds = ds;
    ev->dets = dets;
    ev->I = ds->n_images;
    linspace_thresholds(ev);
    size_t nk = cat_ids != NULL ? n_cat_ids : ds->n_cats;
    ev->cats = malloc((nk ? nk : 1) * sizeof(*ev->cats));
    if (ev->cats == NULL)
        goto nomem;
    for (size_t i = 0; i < nk; i++) {
        int64_t id = cat_ids != NULL ? cat_ids[i] : ds->cats[i].id;
        if (eb_dataset_category_find(ds, id) == NULL)
            return eb_diag_fail(diag, EB_ERR_INVALID_ARG,
                                "failed to evaluate: category id %lld is not in the dataset",
                                (long long)id);
        ev->cats[i] = id;
    }
    qsort(ev->cats, nk, sizeof(*ev->cats), cmp_i64);
    for (size_t i = 0; i < nk; i++)
        if (ev->K == 0 || ev->cats[ev->K - 1] != ev->cats[i])
            ev->cats[ev->K++] = ev->cats[i];

    /* Image ranks: ascending image_id (ties, which a valid dataset has not, by index). */
    struct rank_key *rk = malloc((ev->I ? ev->I : 1) * sizeof(*rk));
    ev->rank = malloc((ev->I ? ev->I : 1) * sizeof(*ev->rank));
    if (rk == NULL || ev->rank == NULL) {
        free(rk);
        goto nomem;
    }
    for (size_t i = 0; i < ev->I; i++) {
        rk[i].id = ds->images[i].id;
        rk[i].index = i;
    }
    qsort(rk, ev->I, sizeof(*rk), cmp_rank_key);
    for (size_t r = 0; r < ev->I; r++)
        ev->rank[rk[r].index] = r;
    free(rk);

    /* Buckets (category, image rank): counting sort, stable. */
    size_t nb = ev->K * ev->I;
    if (ev->K != 0 && nb / ev->K != ev->I)
        goto nomem;
    ev->gt_off = calloc(nb + 1, sizeof(*ev->gt_off));
    ev->dt_off = calloc(nb + 1, sizeof(*ev->dt_off));
    ev->gt_idx = malloc((ds->n_anns ? ds->n_anns : 1) * sizeof(*ev->gt_idx));
    ev->dt_idx = malloc((n_dets ? n_dets : 1) * sizeof(*ev->dt_idx));
    if (ev->gt_off == NULL || ev->dt_off == NULL || ev->gt_idx == NULL || ev->dt_idx == NULL)
        goto nomem;
    for (size_t i = 0; i < ds->n_anns; i++) {
        long k = cat_index(ev, ds->anns[i].category_id);
        if (k >= 0 && ds->anns[i].image < ev->I)
            ev->gt_off[(size_t)k * ev->I + ev->rank[ds->anns[i].image] + 1]++;
    }
    for (size_t i = 0; i < n_dets; i++)
        if (det_valid(ev, &dets[i]))
            ev->dt_off[(size_t)cat_index(ev, dets[i].category_id) * ev->I +
                       ev->rank[dets[i].image] + 1]++;
    for (size_t b = 0; b < nb; b++) {
        ev->gt_off[b + 1] += ev->gt_off[b];
        ev->dt_off[b + 1] += ev->dt_off[b];
    }
    {
        size_t *fill = malloc((nb ? nb : 1) * sizeof(*fill));
        if (fill == NULL)
            goto nomem;
        memcpy(fill, ev->gt_off, nb * sizeof(*fill));
        for (size_t i = 0; i < ds->n_anns; i++) {
            long k = cat_index(ev, ds->anns[i].category_id);
            if (k >= 0 && ds->anns[i].image < ev->I)
                ev->gt_idx[fill[(size_t)k * ev->I + ev->rank[ds->anns[i].image]]++] = i;
        }
        memcpy(fill, ev->dt_off, nb * sizeof(*fill));
        for (size_t i = 0; i < n_dets; i++)
            if (det_valid(ev, &dets[i]))
                ev->dt_idx[fill[(size_t)cat_index(ev, dets[i].category_id) * ev->I +
                                ev->rank[dets[i].image]]++] = i;
        free(fill);
    }
    /* Detections of each bucket by score, descending, stable (numpy mergesort of -score). */
    size_t biggest = 0;
    for (size_t b = 0; b < nb; b++)
        if (ev->dt_off[b + 1] - ev->dt_off[b] > biggest)
            biggest = ev->dt_off[b + 1] - ev->dt_off[b];
    struct score_key *keys = malloc((biggest ? biggest : 1) * sizeof(*keys));
    if (keys == NULL)
        goto nomem;
    for (size_t b = 0; b < nb; b++) {
        size_t n = ev->dt_off[b + 1] - ev->dt_off[b];
        size_t *idx = ev->dt_idx + ev->dt_off[b];
        if (n < 2)
            continue;
        for (size_t i = 0; i < n; i++) {
            keys[i].score = dets[idx[i]].score;
            keys[i].index = idx[i];
        }
        qsort(keys, n, sizeof(*keys), cmp_score_key);
        for (size_t i = 0; i < n; i++)
            idx[i] = keys[i].index;
    }
    free(keys);
    return EB_OK;
nomem:
    return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to evaluate %zu detections: out of memory",
                        n_dets);
}

static void work_fini(struct cat_work *w)
{
    free(w->score);
    free(w->pos);
    free(w->tp);
    free(w->ig);
    free(w->sel);
    free(w->rc);
    free(w->pr);
    free(w->ious);
    free(w->gord);
    free(w->gig);
    free(w->gmatched);
    free(w->gcrowd);
}

/* Sizes the per-category arrays for n detections; 0 when out of memory. */
static int work_reserve(struct cat_work *w, size_t n)
{
    if (n <= w->cap && w->score != NULL)
        return 1;
    size_t c = n ? n : 1;
    free(w->score);
    free(w->pos);
    free(w->tp);
    free(w->ig);
    free(w->sel);
    free(w->rc);
    free(w->pr);
    w->score = malloc(c * sizeof(*w->score));
    w->pos = malloc(c * sizeof(*w->pos));
    w->tp = malloc(c * NA * NT);
    w->ig = malloc(c * NA * NT);
    w->sel = malloc(c * sizeof(*w->sel));
    w->rc = malloc(c * sizeof(*w->rc));
    w->pr = malloc(c * sizeof(*w->pr));
    w->cap = c;
    return w->score && w->pos && w->tp && w->ig && w->sel && w->rc && w->pr;
}

/* Sizes the per-image scratch for D detections and G gt; 0 when out of memory. */
static int work_reserve_image(struct cat_work *w, size_t D, size_t G)
{
    if (D * G > w->ious_cap) {
        free(w->ious);
        w->ious = malloc(D * G * sizeof(*w->ious));
        w->ious_cap = w->ious ? D * G : 0;
        if (w->ious == NULL)
            return 0;
    }
    if (G > w->g_cap) {
        free(w->gord);
        free(w->gig);
        free(w->gmatched);
        free(w->gcrowd);
        w->gord = malloc(G * sizeof(*w->gord));
        w->gig = malloc(G);
        w->gmatched = malloc(G);
        w->gcrowd = malloc(G);
        w->g_cap = w->gord && w->gig && w->gmatched && w->gcrowd ? G : 0;
        if (w->g_cap == 0)
            return 0;
    }
    return 1;
}

/* maskApi bbIou: intersection over union, or over the detection's area for a crowd gt. */
static double box_iou(const double *d, const double *g, int crowd)
{
    double w = fmin(d[2] + d[0], g[2] + g[0]) - fmax(d[0], g[0]);
    if (w <= 0)
        return 0;
    double h = fmin(d[3] + d[1], g[3] + g[1]) - fmax(d[1], g[1]);
    if (h <= 0)
        return 0;
    double i = w * h;
    double da = d[2] * d[3], ga = g[2] * g[3];
    double u = crowd ? da : da + ga - i;
    return i / u;
}

/*
 * One image of category k (evaluateImg for every area range at maxDets 100): appends its kept
 * detections to `w` and counts its non-ignored gt.
 */
static int eval_image(const struct eval *ev, size_t k, size_t r, struct cat_work *w)
{
    const size_t b = k * ev->I + r;
    const size_t *gi = ev->gt_idx + ev->gt_off[b];
    const size_t *di = ev->dt_idx + ev->dt_off[b];
    size_t G = ev->gt_off[b + 1] - ev->gt_off[b];
    size_t D = ev->dt_off[b + 1] - ev->dt_off[b];
    if (D > EB_COCO_MAX_DETS)
        D = EB_COCO_MAX_DETS;
    if (G == 0 && D == 0)
        return 1;
    if (!work_reserve_image(w, D, G))
        return 0;
    const struct eb_dataset_ann *anns = ev->ds->anns;
    for (size_t d = 0; d < D; d++)
        for (size_t g = 0; g < G; g++)
            w->ious[d * G + g] =
                box_iou(ev->dets[di[d]].bbox, anns[gi[g]].bbox, anns[gi[g]].iscrowd);
    const size_t base = w->n;
    for (size_t d = 0; d < D; d++) {
        w->score[base + d] = ev->dets[di[d]].score;
        w->pos[base + d] = (int)d;
    }
    for (int a = 0; a < NA; a++) {
        /* gt: ignored = crowd or outside the area range; non-ignored first, stable. */
        size_t ng = 0;
        for (size_t g = 0; g < G; g++) {
            const struct eb_dataset_ann *an = &anns[gi[g]];
            w->gcrowd[g] = an->iscrowd != 0;
            w->gig[g] = an->iscrowd || an->area < area_lo[a] || an->area > area_hi[a];
            if (!w->gig[g])
                w->gord[ng++] = g;
        }
        w->npig[a] += ng;
        for (size_t g = 0, m = ng; g < G; g++)
            if (w->gig[g])
                w->gord[m++] = g;
        for (int t = 0; t < NT; t++) {
            uint8_t *tp = w->tp + ((size_t)a * NT + (size_t)t) * w->cap + base;
            uint8_t *ig = w->ig + ((size_t)a * NT + (size_t)t) * w->cap + base;
            if (G > 0)
                memset(w->gmatched, 0, G);
            for (size_t d = 0; d < D; d++) {
                double best = fmin(ev->iou_thr[t], 1 - 1e-10);
                long m = -1;
                for (size_t j = 0; j < G; j++) {
                    size_t g = w->gord[j];
                    if (w->gmatched[j] && !w->gcrowd[g])
                        continue;
                    if (m > -1 && !w->gig[w->gord[m]] && w->gig[g])
                        break;
                    if (w->ious[d * G + g] < best)
                        continue;
                    best = w->ious[d * G + g];
                    m = (long)j;
                }
                tp[d] = 0;
                ig[d] = 0;
                if (m >= 0) {
                    tp[d] = 1;
                    ig[d] = w->gig[w->gord[m]];
                    w->gmatched[m] = 1;
                }
            }
            /* Unmatched detections outside the area range are ignored. */
            for (size_t d = 0; d < D; d++) {
                const double *bb = ev->dets[di[d]].bbox;
                double area = bb[2] * bb[3];
                if (!tp[d] && (area < area_lo[a] || area > area_hi[a]))
                    ig[d] = 1;
            }
        }
    }
    w->n += D;
    return 1;
}

/* What accumulate() keeps of one category. */
struct cat_acc {
    int valid[NA];             /* npig > 0 */
    double prec_sum[NA][NT];   /* sum over the 101 recall points, maxDets 100 */
    double recall[NA][NM][NT]; /* final recall */
    double pr50[NR];           /* interpolated precision at IoU .50, area all, maxDets 100 */
};

/* The curves of the best-F1 search: NC confidences 0, 1/(NC-1), ..., 1. */
#define NC EB_COCO_NUM_CONF

/*
 * Ultralytics' ap_per_class curves of one category: `n` non-ignored detections by score
 * (descending) with cumulative precision `prec` and recall `rec`; at each grid confidence x,
 * np.interp(-x, -score, v, left) (precision: left 1; recall: left 0), i.e. linear between the
 * two detections around x, the last detection's value below the lowest score.
 */
static void conf_curves(const double *score, const double *prec, const double *rec, size_t n,
                        double *p_out, double *r_out)
{
    for (int j = 0; j < NC; j++) {
        const double x = (double)j / (NC - 1);
        if (n == 0) {
            p_out[j] = r_out[j] = 0.0; /* Ultralytics leaves a class without predictions 0 */
            continue;
        }
        if (x > score[0]) {
            p_out[j] = 1.0;
            r_out[j] = 0.0;
            continue;
        }
        /* k: the last detection with score >= x (scores descend). */
        size_t lo = 0, hi = n;
        while (hi - lo > 1) {
            size_t mid = (lo + hi) / 2;
            if (score[mid] >= x)
                lo = mid;
            else
                hi = mid;
        }
        const size_t k = lo;
        if (k + 1 == n) {
            p_out[j] = prec[k];
            r_out[j] = rec[k];
            continue;
        }
        const double f = (score[k] - x) / (score[k] - score[k + 1]);
        p_out[j] = prec[k] + f * (prec[k + 1] - prec[k]);
        r_out[j] = rec[k] + f * (rec[k + 1] - rec[k]);
    }
}

/* The first maximum of `y` (NC values) smoothed by a 101-point box filter, edges repeated
 * (Ultralytics' smooth(y, 0.1): np.convolve of the padded curve, 'valid'). */
static int smoothed_argmax(const double *y)
{
    const int half = 50; /* round(NC * 0.1 * 2) // 2 + 1 = 101 points */
    int best = 0;
    double best_v = -1.0;
    for (int i = 0; i < NC; i++) {
        double sum = 0;
        for (int k = i - half; k <= i + half; k++)
            sum += y[k < 0 ? 0 : k >= NC ? NC - 1 : k];
        const double v = sum / (2 * half + 1);
        if (v > best_v) {
            best_v = v;
            best = i;
        }
    }
    return best;
}

static int cmp_sel(const void *a, const void *b, const double *score)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (score[x] != score[y])
        return score[x] > score[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* Stable merge sort of positions by score, descending (numpy's mergesort of -score). */
static void sort_by_score(size_t *v, size_t n, size_t *tmp, const double *score)
{
    if (n < 2)
        return;
    size_t h = n / 2;
    sort_by_score(v, h, tmp, score);
    sort_by_score(v + h, n - h, tmp, score);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = cmp_sel(&v[j], &v[i], score) < 0 ? v[j++] : v[i++];
    while (i < h)
        tmp[k++] = v[i++];
    while (j < n)
        tmp[k++] = v[j++];
    memcpy(v, tmp, n * sizeof(*v));
}

/* accumulate() for one category from its per-image results in w; at IoU index t50 (area all,
 * maxDets 100) also its precision and recall over the confidence grid (p_curve, r_curve: NC
 * values each) and its interpolated precision curve. */
static int accumulate(const struct eval *ev, struct cat_work *w, int t50, double *p_curve,
                      double *r_curve, struct cat_acc *acc)
{
    size_t *tmp = malloc((w->n ? w->n : 1) * sizeof(*tmp));
    double *cv = malloc((w->n ? w->n : 1) * 3 * sizeof(*cv));
    if (tmp == NULL || cv == NULL) {
        free(tmp);
        free(cv);
        return 0;
    }
    for (int a = 0; a < NA; a++) {
        acc->valid[a] = w->npig[a] > 0;
        if (!acc->valid[a])
            continue;
        const double npig = (double)w->npig[a];
        for (int mi = 0; mi < NM; mi++) {
            size_t nd = 0;
            for (size_t i = 0; i < w->n; i++)
                if (w->pos[i] < max_dets[mi])
                    w->sel[nd++] = i;
            /* Positions are already in image order, so the stable sort keeps image order and
               then within-image order for equal scores, as np.concatenate + mergesort. */
            sort_by_score(w->sel, nd, tmp, w->score);
            for (int t = 0; t < NT; t++) {
                const uint8_t *tpf = w->tp + ((size_t)a * NT + (size_t)t) * w->cap;
                const uint8_t *igf = w->ig + ((size_t)a * NT + (size_t)t) * w->cap;
                double tp = 0, fp = 0;
                for (size_t i = 0; i < nd; i++) {
                    size_t s = w->sel[i];
                    if (!igf[s]) {
                        if (tpf[s])
                            tp += 1;
                        else
                            fp += 1;
                    }
                    w->rc[i] = tp / npig;
                    w->pr[i] = tp / (fp + tp + DBL_EPSILON);
                }
                acc->recall[a][mi][t] = nd ? w->rc[nd - 1] : 0.0;
                if (mi != NM - 1)
                    continue;
                const int curves = a == 0 && t == t50;
                if (curves) {
                    /* Ignored detections neither count nor make a point of the curves. */
                    double *sc = cv, *pc = cv + w->n, *rc = cv + 2 * w->n;
                    size_t m = 0;
                    for (size_t i = 0; i < nd; i++)
                        if (!igf[w->sel[i]]) {
                            sc[m] = w->score[w->sel[i]];
                            pc[m] = w->pr[i];
                            rc[m] = w->rc[i];
                            m++;
                        }
                    conf_curves(sc, pc, rc, m, p_curve, r_curve);
                }
                for (size_t i = nd; i-- > 1;)
                    if (w->pr[i] > w->pr[i - 1])
                        w->pr[i - 1] = w->pr[i];
                double sum = 0;
                size_t i = 0;
                for (int ri = 0; ri < NR; ri++) {
                    while (i < nd && w->rc[i] < ev->rec_thr[ri])
                        i++;
                    if (i == nd)
                        break; /* this and every higher recall point stay 0 */
                    sum += w->pr[i];
                    if (curves)
                        acc->pr50[ri] = w->pr[i];
                }
                acc->prec_sum[a][t] = sum;
            }
        }
    }
    free(tmp);
    free(cv);
    return 1;
}

void eb_coco_result_fini(struct eb_coco_result *r)
{
    if (r == NULL)
        return;
    free(r->classes);
    memset(r, 0, sizeof(*r));
}

/* Means over valid categories: AP over IoU index range [t0, t1) at area a; AR at (a, m). */
static double mean_ap(const struct cat_acc *acc, size_t K, int a, int t0, int t1)
{
    double sum = 0;
    size_t n = 0;
    for (size_t k = 0; k < K; k++) {
        if (!acc[k].valid[a])
            continue;
        for (int t = t0; t < t1; t++)
            sum += acc[k].prec_sum[a][t];
        n += (size_t)(t1 - t0) * NR;
    }
    return n ? sum / (double)n : -1.0;
}

static double mean_ar(const struct cat_acc *acc, size_t K, int a, int m)
{
    double sum = 0;
    size_t n = 0;
    for (size_t k = 0; k < K; k++) {
        if (!acc[k].valid[a])
            continue;
        for (int t = 0; t < NT; t++)
            sum += acc[k].recall[a][m][t];
        n += NT;
    }
    return n ? sum / (double)n : -1.0;
}

/* The index of IoU threshold `v` (as COCOeval's np.where(iouThr == p.iouThrs)). */
static int iou_index(const struct eval *ev, double v, int fallback)
{
    for (int t = 0; t < NT; t++)
        if (ev->iou_thr[t] == v)
            return t;
    return fallback;
}

enum eb_status eb_coco_evaluate(const struct eb_dataset *ds, const struct eb_coco_det *dets,
                                size_t n_dets, const int64_t *cat_ids, size_t n_cat_ids,
                                struct eb_coco_result *out, struct eb_diag *diag)
{
    struct eval ev;
    struct cat_work w;
    struct cat_acc *acc = NULL;
    double *pcur = NULL, *rcur = NULL, *f1 = NULL;
    struct eb_coco_result res;
    memset(&w, 0, sizeof(w));
    memset(&res, 0, sizeof(res));
    enum eb_status st = eval_init(&ev, ds, dets, n_dets, cat_ids, n_cat_ids, diag);
    if (st != EB_OK)
        goto done;
    st = EB_ERR_NOMEM;
    acc = calloc(ev.K ? ev.K : 1, sizeof(*acc));
    res.classes = calloc(ev.K ? ev.K : 1, sizeof(*res.classes));
    pcur = calloc((ev.K ? ev.K : 1) * NC, sizeof(*pcur));
    rcur = calloc((ev.K ? ev.K : 1) * NC, sizeof(*rcur));
    f1 = calloc(NC, sizeof(*f1));
    if (acc == NULL || res.classes == NULL || pcur == NULL || rcur == NULL || f1 == NULL)
        goto nomem;
    res.n_classes = ev.K;
    res.n_images = ev.I;
    const int t50 = iou_index(&ev, 0.5, 0), t75 = iou_index(&ev, 0.75, 5);
    for (size_t k = 0; k < ev.K; k++) {
        struct eb_coco_class_result *cr = &res.classes[k];
        cr->category_id = ev.cats[k];
        cr->name = eb_dataset_category_find(ds, ev.cats[k])->name;
        size_t kept = 0;
        for (size_t r = 0; r < ev.I; r++) {
            size_t b = k * ev.I + r;
            size_t nd = ev.dt_off[b + 1] - ev.dt_off[b];
            size_t g0 = ev.gt_off[b], g1 = ev.gt_off[b + 1];
            int has = 0;
            for (size_t g = g0; g < g1; g++) {
                if (ds->anns[ev.gt_idx[g]].iscrowd) {
                    cr->crowd++;
                } else {
                    cr->gt++;
                    has = 1;
                }
            }
            cr->images += (size_t)has;
            cr->dets += nd;
            kept += nd < EB_COCO_MAX_DETS ? nd : EB_COCO_MAX_DETS;
        }
        res.n_gt += cr->gt;
        res.n_crowd += cr->crowd;
        res.n_dets += cr->dets;
        res.n_dets_kept += kept;
        w.n = 0;
        memset(w.npig, 0, sizeof(w.npig));
        if (!work_reserve(&w, kept))
            goto nomem;
        for (size_t r = 0; r < ev.I; r++)
            if (!eval_image(&ev, k, r, &w))
                goto nomem;
        if (!accumulate(&ev, &w, t50, pcur + k * NC, rcur + k * NC, &acc[k]))
            goto nomem;
        if (acc[k].valid[0]) {
            double s = 0;
            for (int t = 0; t < NT; t++)
                s += acc[k].prec_sum[0][t];
            cr->ap = s / (NT * NR);
            cr->ap50 = acc[k].prec_sum[0][t50] / NR;
            cr->ap75 = acc[k].prec_sum[0][t75] / NR;
            double rs = 0;
            for (int t = 0; t < NT; t++)
                rs += acc[k].recall[0][NM - 1][t];
            cr->ar100 = rs / NT;
            memcpy(cr->pr50, acc[k].pr50, sizeof(cr->pr50));
            for (int j = 0; j < NC; j++) {
                const double p = pcur[k * NC + (size_t)j], r = rcur[k * NC + (size_t)j];
                f1[j] += 2 * p * r / (p + r + 1e-16);
            }
            res.n_classes_with_gt++;
        } else {
            cr->ap = cr->ap50 = cr->ap75 = cr->ar100 = -1.0;
            cr->p = cr->r = cr->f1 = -1.0;
            for (int i = 0; i < NR; i++)
                cr->pr50[i] = -1.0;
        }
    }
    /* The best mean F1 (Ultralytics: over the classes with labels) and P, R there. */
    const int best = res.n_classes_with_gt ? smoothed_argmax(f1) : 0;
    res.best_conf = (double)best / (NC - 1);
    res.mp = res.mr = res.mf1 = -1.0;
    for (int i = 0; i < NR; i++)
        res.pr50[i] = -1.0;
    if (res.n_classes_with_gt > 0) {
        res.mp = res.mr = res.mf1 = 0.0;
        for (int i = 0; i < NR; i++)
            res.pr50[i] = 0.0;
    }
    for (size_t k = 0; k < ev.K; k++) {
        struct eb_coco_class_result *cr = &res.classes[k];
        if (!acc[k].valid[0])
            continue;
        cr->p = pcur[k * NC + (size_t)best];
        cr->r = rcur[k * NC + (size_t)best];
        cr->f1 = 2 * cr->p * cr->r / (cr->p + cr->r + 1e-16);
        const double n = (double)res.n_classes_with_gt;
        res.mp += cr->p / n;
        res.mr += cr->r / n;
        res.mf1 += cr->f1 / n;
        for (int i = 0; i < NR; i++)
            res.pr50[i] += cr->pr50[i] / n;
    }
    res.map = mean_ap(acc, ev.K, 0, 0, NT);
    res.map50 = mean_ap(acc, ev.K, 0, t50, t50 + 1);
    res.map75 = mean_ap(acc, ev.K, 0, t75, t75 + 1);
    res.map_small = mean_ap(acc, ev.K, 1, 0, NT);
    res.map_medium = mean_ap(acc, ev.K, 2, 0, NT);
    res.map_large = mean_ap(acc, ev.K, 3, 0, NT);
    res.ar1 = mean_ar(acc, ev.K, 0, 0);
    res.ar10 = mean_ar(acc, ev.K, 0, 1);
    res.ar100 = mean_ar(acc, ev.K, 0, 2);
    res.ar_small = mean_ar(acc, ev.K, 1, 2);
    res.ar_medium = mean_ar(acc, ev.K, 2, 2);
    res.ar_large = mean_ar(acc, ev.K, 3, 2);
    *out = res;
    memset(&res, 0, sizeof(res));
    st = EB_OK;
    goto done;
nomem:
    st = eb_diag_fail(diag, EB_ERR_NOMEM, "failed to evaluate %zu detections: out of memory",
                      n_dets);
done:
    eb_coco_result_fini(&res);
    free(acc);
    free(pcur);
    free(rcur);
    free(f1);
    work_fini(&w);
    eval_fini(&ev);
    return st;
}

/* ------------------------------------------------------------------ JSON */

/* "pr50": the 101 precisions (4 decimals: a chart's resolution), or null. */
static void write_pr50(struct eb_json_writer *w, const double *pr, int valid)
{
    eb_json_key(w, "pr50");
    if (!valid) {
        eb_json_null(w);
        return;
    }
    eb_json_arr_begin(w);
    for (int i = 0; i < NR; i++)
        eb_json_num(w, round(pr[i] * 1e4) / 1e4);
    eb_json_arr_end(w);
}

void eb_coco_result_write_json(const struct eb_coco_result *r, struct eb_json_writer *w)
{
    eb_json_obj_begin(w);
    eb_json_knum(w, "map", r->map);
    eb_json_knum(w, "map50", r->map50);
    eb_json_knum(w, "map75", r->map75);
    eb_json_knum(w, "map_small", r->map_small);
    eb_json_knum(w, "map_medium", r->map_medium);
    eb_json_knum(w, "map_large", r->map_large);
    eb_json_knum(w, "ar1", r->ar1);
    eb_json_knum(w, "ar10", r->ar10);
    eb_json_knum(w, "ar100", r->ar100);
    eb_json_knum(w, "ar_small", r->ar_small);
    eb_json_knum(w, "ar_medium", r->ar_medium);
    eb_json_knum(w, "ar_large", r->ar_large);
    eb_json_kint(w, "images", (int64_t)r->n_images);
    eb_json_kint(w, "gt_boxes", (int64_t)r->n_gt);
    eb_json_kint(w, "crowd_regions", (int64_t)r->n_crowd);
    eb_json_kint(w, "detections", (int64_t)r->n_dets);
    eb_json_kint(w, "detections_kept", (int64_t)r->n_dets_kept);
    eb_json_kint(w, "classes_evaluated", (int64_t)r->n_classes);
    eb_json_kint(w, "classes_with_gt", (int64_t)r->n_classes_with_gt);
    eb_json_knum(w, "best_conf", r->best_conf);
    eb_json_knum(w, "mp", r->mp);
    eb_json_knum(w, "mr", r->mr);
    eb_json_knum(w, "mf1", r->mf1);
    write_pr50(w, r->pr50, r->n_classes_with_gt > 0);
    eb_json_key(w, "classes");
    eb_json_arr_begin(w);
    for (size_t i = 0; i < r->n_classes; i++) {
        const struct eb_coco_class_result *c = &r->classes[i];
        eb_json_obj_begin(w);
        eb_json_kint(w, "category_id", c->category_id);
        eb_json_kstr(w, "name", c->name);
        eb_json_kint(w, "gt", (int64_t)c->gt);
        eb_json_kint(w, "crowd", (int64_t)c->crowd);
        eb_json_kint(w, "images", (int64_t)c->images);
        eb_json_kint(w, "dets", (int64_t)c->dets);
        eb_json_knum(w, "ap", c->ap);
        eb_json_knum(w, "ap50", c->ap50);
        eb_json_knum(w, "ap75", c->ap75);
        eb_json_knum(w, "ar100", c->ar100);
        eb_json_knum(w, "p", c->p);
        eb_json_knum(w, "r", c->r);
        eb_json_knum(w, "f1", c->f1);
        write_pr50(w, c->pr50, c->ap >= 0);
        eb_json_obj_end(w);
    }
    eb_json_arr_end(w);
    eb_json_obj_end(w);
}

void eb_coco_write_detections_json(const struct eb_dataset *ds, const struct eb_coco_det *dets,
                                   size_t n_dets, struct eb_json_writer *w)
{
    eb_json_arr_begin(w);
    for (size_t i = 0; i < n_dets; i++) {
        const struct eb_coco_det *d = &dets[i];
        eb_json_obj_begin(w);
        eb_json_kint(w, "image_id", d->image < ds->n_images ? ds->images[d->image].id : -1);
        eb_json_kint(w, "category_id", d->category_id);
        eb_json_key(w, "bbox");
        eb_json_arr_begin(w);
        for (int k = 0; k < 4; k++)
            eb_json_num(w, d->bbox[k]);
        eb_json_arr_end(w);
        eb_json_knum(w, "score", d->score);
        eb_json_obj_end(w);
    }
    eb_json_arr_end(w);
}

enum eb_status eb_coco_write_detections(const char *path, const struct eb_dataset *ds,
                                        const struct eb_coco_det *dets, size_t n_dets,
                                        struct eb_diag *diag)
{
    FILE *fp = fopen(path, "w");
    if (fp == NULL)
        return eb_diag_fail(diag, EB_ERR_IO, "failed to write %s: %s; choose another --out", path,
                            strerror(errno));
    struct eb_json_writer w;
    eb_json_writer_init_file(&w, fp, 0);
    eb_coco_write_detections_json(ds, dets, n_dets, &w);
    fputc('\n', fp); /* a failed write sets the stream's error flag, which eb_file_close reads */
    return eb_file_close(fp, path, diag);
}
