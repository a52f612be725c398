/*
 * Checked int64 arithmetic for shape inference and graph passes. Every quantity derived from a
 * model file (dimensions, split sizes, pads, steps, groups) goes through these where a sum or a
 * product could leave int64; a caller turns the overflow into a load-time error naming the node
 * and op (eb_op_fail), never into a wrapped value or undefined behaviour.
 *
 * Products of one value's own dimensions need no check: eb_ir_value_set keeps every value's
 * extent (its dimensions multiplied, zeros skipped) within EB_IR_MAX_TENSOR_BYTES elements.
 */
#ifndef EB_ENGINE_IR_CHECKED_H
#define EB_ENGINE_IR_CHECKED_H

#include <stdint.h>

/** *sum_out = a + b; returns 1 (and leaves *sum_out unspecified) when that overflows int64. */
static inline int eb_checked_add(int64_t a, int64_t b, int64_t *sum_out)
{
    return __builtin_add_overflow(a, b, sum_out) ? 1 : 0;
}

/** *prod_out = a * b; returns 1 (and leaves *prod_out unspecified) when that overflows int64. */
static inline int eb_checked_mul(int64_t a, int64_t b, int64_t *prod_out)
{
    return __builtin_mul_overflow(a, b, prod_out) ? 1 : 0;
}

#endif
