/* Energy from power readings at irregular times: energy_meter.h says how. */
#include "harness/metrics/energy_meter.h"

#include <math.h>
#include <string.h>

static const struct eb_energy_reading *latest(const struct eb_energy_meter *m)
{
    return &m->ring[(m->n - 1) % EB_ENERGY_RING];
}

/* E(t) for r0.t <= t <= r1.t: the trapezoid from r0 to t under the line from r0's power to
 * r1's. */
static double between(const struct eb_energy_reading *r0, const struct eb_energy_reading *r1,
                      uint64_t t)
{
    const double span = (double)(r1->t_ns - r0->t_ns), dt = (double)(t - r0->t_ns);
    const double p = span > 0 ? r0->p_mw + (r1->p_mw - r0->p_mw) * (dt / span) : r1->p_mw;
    return r0->e_mj + 0.5 * (r0->p_mw + p) * dt / 1e9;
}

/* E(t) for t at or before the first reading: its power held back to t. */
static double before_first(const struct eb_energy_meter *m, uint64_t t)
{
    return t >= m->first.t_ns ? 0.0 : -m->first.p_mw * (double)(m->first.t_ns - t) / 1e9;
}

/* E(t) for t at or after the latest reading: its power held on to t. */
static double after_latest(const struct eb_energy_meter *m, uint64_t t)
{
    const struct eb_energy_reading *r = latest(m);
    return t <= r->t_ns ? r->e_mj : r->e_mj + r->p_mw * (double)(t - r->t_ns) / 1e9;
}

void eb_energy_init(struct eb_energy_meter *m)
{
    memset(m, 0, sizeof(*m));
}

void eb_energy_add(struct eb_energy_meter *m, uint64_t t_ns, double p_mw)
{
    if (!isfinite(p_mw) || p_mw < 0 || (m->n > 0 && t_ns < latest(m)->t_ns))
        return;
    struct eb_energy_reading r = {.t_ns = t_ns, .p_mw = p_mw, .e_mj = 0.0};
    if (m->n > 0) {
        const struct eb_energy_reading *l = latest(m);
        r.e_mj = l->e_mj + 0.5 * (l->p_mw + p_mw) * (double)(t_ns - l->t_ns) / 1e9;
    } else {
        m->first = r;
    }
    /* The pending marks this reading closes: between the latest and it, or before the first. */
    for (int k = 0; k < EB_ENERGY_MARKS; k++) {
        if (m->mark_state[k] != EB_ENERGY_MARK_PENDING || m->mark_t[k] > t_ns)
            continue;
        m->mark_e[k] =
            m->n > 0 ? between(latest(m), &r, m->mark_t[k]) : before_first(m, m->mark_t[k]);
        m->mark_state[k] = EB_ENERGY_MARK_RESOLVED;
    }
    m->ring[m->n % EB_ENERGY_RING] = r;
    m->n++;
}

void eb_energy_mark(struct eb_energy_meter *m, enum eb_energy_mark which, uint64_t t_ns)
{
    if ((unsigned)which >= EB_ENERGY_MARKS)
        return;
    m->mark_t[which] = t_ns;
    m->mark_state[which] = EB_ENERGY_MARK_PENDING;
    if (m->n == 0 || t_ns >= latest(m)->t_ns)
        return; /* pending: the next reading (or the end) resolves it */
    if (t_ns <= m->first.t_ns) {
        m->mark_e[which] = before_first(m, t_ns);
        m->mark_state[which] = EB_ENERGY_MARK_RESOLVED;
        return;
    }
    /* Given late: the two readings around it, if the ring still holds them. */
    const uint64_t kept = m->n < EB_ENERGY_RING ? m->n : EB_ENERGY_RING;
    for (uint64_t i = m->n - 1; i > m->n - kept; i--) {
        const struct eb_energy_reading *r1 = &m->ring[i % EB_ENERGY_RING];
        const struct eb_energy_reading *r0 = &m->ring[(i - 1) % EB_ENERGY_RING];
        if (r0->t_ns <= t_ns && t_ns <= r1->t_ns) {
            m->mark_e[which] = between(r0, r1, t_ns);
            m->mark_state[which] = EB_ENERGY_MARK_RESOLVED;
            return;
        }
    }
    m->mark_state[which] = EB_ENERGY_MARK_LOST;
}

double eb_energy_span_mj(const struct eb_energy_meter *m, uint64_t a_ns, uint64_t b_ns)
{
    if (m->n == 0)
        return NAN;
    return after_latest(m, b_ns) - before_first(m, a_ns);
}

double eb_energy_readings_mj(const struct eb_energy_meter *m)
{
    return m->n < 2 ? NAN : latest(m)->e_mj;
}

double eb_energy_between_marks_mj(const struct eb_energy_meter *m)
{
    double e[EB_ENERGY_MARKS];
    if (m->n == 0)
        return NAN;
    for (int k = 0; k < EB_ENERGY_MARKS; k++) {
        if (m->mark_state[k] == EB_ENERGY_MARK_RESOLVED)
            e[k] = m->mark_e[k];
        else if (m->mark_state[k] == EB_ENERGY_MARK_PENDING) /* after every reading */
            e[k] = after_latest(m, m->mark_t[k]);
        else
            return NAN;
    }
    if (m->mark_t[EB_ENERGY_MARK_END] < m->mark_t[EB_ENERGY_MARK_BEGIN])
        return NAN;
    return e[EB_ENERGY_MARK_END] - e[EB_ENERGY_MARK_BEGIN];
}
