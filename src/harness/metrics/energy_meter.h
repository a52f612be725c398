/*
 * Energy from power readings at irregular times (NVML samples, tegrastats lines), over the whole
 * span of the readings and between two marks (the measured window's start and end), without
 * keeping the series: a running integral, the first reading and a ring of the latest ones.
 *
 * Power between two readings is taken as linear (the trapezoid), before the first reading the
 * first one's and after the latest the latest one's (held). E(t) below is the energy from the
 * first reading to time t (negative before it). A mark at time t is resolved when a reading at
 * or after t comes (interpolated between the two around it), or, when it is given late, from the
 * ring if t is not older than the ring's oldest reading (else it is lost: RING readings, at the
 * sampler's 10 ms minimum interval 0.64 s, against a caller that gives it within milliseconds);
 * one still pending at the end is resolved with the latest power held.
 *
 * Not thread-safe: its owner serialises the calls (the sampler's mutex, the tegrastats
 * reader's).
 */
#ifndef EB_ENERGY_METER_H
#define EB_ENERGY_METER_H

#include <stdint.h>

#define EB_ENERGY_RING 64

enum eb_energy_mark { EB_ENERGY_MARK_BEGIN, EB_ENERGY_MARK_END, EB_ENERGY_MARKS };

/* Where a mark stands. */
enum eb_energy_mark_state {
    EB_ENERGY_MARK_UNSET,
    EB_ENERGY_MARK_PENDING, /* after every reading so far */
    EB_ENERGY_MARK_RESOLVED,
    EB_ENERGY_MARK_LOST /* given later than the ring reaches */
};

struct eb_energy_reading {
    uint64_t t_ns; /* eb_clock_ns */
    double p_mw;
    double e_mj; /* E(t_ns) */
};

struct eb_energy_meter {
    uint64_t n; /* readings so far */
    struct eb_energy_reading first;
    struct eb_energy_reading ring[EB_ENERGY_RING]; /* ring[(n - 1) % RING] is the latest */
    enum eb_energy_mark_state mark_state[EB_ENERGY_MARKS];
    uint64_t mark_t[EB_ENERGY_MARKS];
    double mark_e[EB_ENERGY_MARKS]; /* E(mark_t) once resolved */
};

/** Empties `m`: no reading, no mark. */
void eb_energy_init(struct eb_energy_meter *m);
/** A reading of p_mw (finite, >= 0; others are ignored) at t_ns (not before the latest). */
void eb_energy_add(struct eb_energy_meter *m, uint64_t t_ns, double p_mw);
/** Sets mark `which` at t_ns (again: replaces it). */
void eb_energy_mark(struct eb_energy_meter *m, enum eb_energy_mark which, uint64_t t_ns);
/**
 * E(b_ns) - E(a_ns) for a_ns at or before the first reading and b_ns at or after the latest
 * (the span the readings were taken in, held at both ends; a later a or an earlier b counts as
 * the first reading's or the latest's time). NaN without a reading.
 */
double eb_energy_span_mj(const struct eb_energy_meter *m, uint64_t a_ns, uint64_t b_ns);
/** E(latest) - E(first): the trapezoid over the readings alone; NaN below two readings. */
double eb_energy_readings_mj(const struct eb_energy_meter *m);
/** E(end mark) - E(begin mark); NaN without a reading, with a mark unset or lost, or end < begin. */
double eb_energy_between_marks_mj(const struct eb_energy_meter *m);

#endif
