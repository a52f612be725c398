/*
 * Class-aware greedy NMS (torchvision batched_nms semantics, as Ultralytics calls it) and the
 * post-processing entry point.
 *
 * Candidates are ordered by one 64-bit key per box (score descending, then index ascending),
 * sorted with a bottom-up merge sort in the scratch (stable, no allocation). The greedy pass
 * walks that order; a kept box suppresses later boxes of its own class with IoU > threshold.
 * Boxes of different classes are simply never compared, which gives exactly the per-class
 * result without the coordinate-offset trick (whose float offsets can change IoUs).
 */
#include <string.h>

#include "yolo/yolo.h"

static float box_area(const struct eb_detection *d)
{
    return (d->x2 - d->x1) * (d->y2 - d->y1);
}

/* One IoU formula for eb_yolo_iou and the NMS loop, so both give bit-identical values. */
static float iou_with_areas(const struct eb_detection *a, float area_a,
                            const struct eb_detection *b, float area_b)
{
    if (!(area_a > 0.0f) || !(area_b > 0.0f))
        return 0.0f;
    float ix1 = a->x1 > b->x1 ? a->x1 : b->x1;
    float iy1 = a->y1 > b->y1 ? a->y1 : b->y1;
    float ix2 = a->x2 < b->x2 ? a->x2 : b->x2;
    float iy2 = a->y2 < b->y2 ? a->y2 : b->y2;
    float iw = ix2 - ix1, ih = iy2 - iy1;
    if (!(iw > 0.0f) || !(ih > 0.0f))
        return 0.0f;
    float inter = iw * ih;
    float uni = area_a + area_b - inter;
    return uni > 0.0f ? inter / uni : 0.0f;
}

float eb_yolo_iou(const struct eb_detection *a, const struct eb_detection *b)
{
    return iou_with_areas(a, box_area(a), b, box_area(b));
}

/* Maps a float to a uint32 that sorts in descending float order (NaN never gets here). */
static uint32_t desc_key(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u = (u & 0x80000000u) ? ~u : (u | 0x80000000u); /* ascending */
    return ~u;
}

static void sort_u64(uint64_t *a, uint64_t *tmp, size_t n)
{
    /* Insertion sort on runs of 16, then bottom-up merges, ping-ponging between the buffers. */
    const size_t run = 16;
    for (size_t lo = 0; lo < n; lo += run) {
        size_t hi = lo + run < n ? lo + run : n;
        for (size_t i = lo + 1; i < hi; i++) {
            uint64_t v = a[i];
            size_t j = i;
            while (j > lo && a[j - 1] > v) {
                a[j] = a[j - 1];
                j--;
            }
            a[j] = v;
        }
    }
    uint64_t *from = a, *to = tmp;
    for (size_t width = run; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n;
            size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                to[k++] = from[j] < from[i] ? from[j++] : from[i++];
            while (i < mid)
                to[k++] = from[i++];
            while (j < hi)
                to[k++] = from[j++];
        }
        uint64_t *t = from;
        from = to;
        to = t;
    }
    if (from != a)
        memcpy(a, from, n * sizeof *a);
}

void eb_yolo_nms(struct eb_yolo_scratch *s, size_t n, const struct eb_yolo_params *p,
                 struct eb_detections *out)
{
    EB_ASSERT(s != NULL && p != NULL && out != NULL && n <= s->capacity);
    out->count = 0;
    size_t limit = p->max_det > 0 ? (size_t)p->max_det : 0;
    if (limit > out->capacity)
        limit = out->capacity;
    if (n == 0 || limit == 0)
        return;

    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        float sc = s->cand[i].score;
        if (sc != sc)
            continue; /* NaN scores never compare, so never survive (torch sorts them last) */
        s->keys[m++] = ((uint64_t)desc_key(sc) << 32) | (uint64_t)i;
    }
    sort_u64(s->keys, s->keys + s->capacity, m);
    if (m > EB_YOLO_MAX_NMS)
        m = EB_YOLO_MAX_NMS;
    for (size_t i = 0; i < m; i++) {
        s->order[i] = (int32_t)(uint32_t)(s->keys[i] & 0xffffffffu);
        s->area[i] = box_area(&s->cand[s->order[i]]);
    }
    memset(s->suppressed, 0, m);

    const float thr = p->iou;
    const int agnostic = p->class_agnostic != 0;
    size_t kept = 0;
    for (size_t i = 0; i < m; i++) {
        if (s->suppressed[i])
            continue;
        const struct eb_detection *bi = &s->cand[s->order[i]];
        out->items[kept++] = *bi;
        if (kept == limit)
            break;
        const float ai = s->area[i];
        for (size_t j = i + 1; j < m; j++) {
            if (s->suppressed[j])
                continue;
            const struct eb_detection *bj = &s->cand[s->order[j]];
            if (!agnostic && bj->cls != bi->cls)
                continue;
            if (iou_with_areas(bi, ai, bj, s->area[j]) > thr)
                s->suppressed[j] = 1;
        }
    }
    out->count = kept;
}

void eb_yolo_postprocess(const struct eb_yolo_layout_info *info, const float *data,
                         const struct eb_letterbox *lb, const struct eb_yolo_params *p,
                         struct eb_yolo_scratch *s, struct eb_detections *out)
{
    EB_ASSERT(info != NULL && lb != NULL && p != NULL && s != NULL && out != NULL);
    size_t n = eb_yolo_decode(info, data, p, s);
    if (info->layout == EB_YOLO_LAYOUT_END2END) {
        /* NMS was done in the model; keep the first max_det rows (Ultralytics end2end). */
        size_t limit = p->max_det > 0 ? (size_t)p->max_det : 0;
        if (limit > out->capacity)
            limit = out->capacity;
        if (n > limit)
            n = limit;
        if (n > 0)
            memcpy(out->items, s->cand, n * sizeof *s->cand);
        out->count = n;
    } else {
        eb_yolo_nms(s, n, p, out);
    }
    for (size_t i = 0; i < out->count; i++)
        eb_letterbox_unmap(lb, &out->items[i]);
}
