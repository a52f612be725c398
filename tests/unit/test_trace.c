/* profile --trace / --nsys parts that need no GPU: nsys's kernel summary CSV into the top-kernels
 * table, the ranking, and CUPTI's loader refusing what is not a usable CUPTI. */
#include <string.h>

#include "eb_test.h"
#include "harness/cmd/nsys.h"
#include "harness/metrics/cupti.h"
#include "harness/results/result.h"

/* As `nsys stats --report cuda_gpu_kern_sum --format csv --output -` prints it (2025.x). */
static const char kern_sum[] =
    "\n"
    "Processing [/tmp/r/nsys.sqlite] with [/opt/nsys/reports/cuda_gpu_kern_sum.py]... \n"
    "\n"
    " ** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):\n"
    "\n"
    "\"Time (%)\",\"Total Time (ns)\",\"Instances\",\"Avg (ns)\",\"Med (ns)\",\"Min (ns)\","
    "\"Max (ns)\",\"StdDev (ns)\",\"Name\"\r\n"
    "10.0,200000,4,50000.0,50000.0,40000,60000,8000.0,\"k_add\"\r\n"
    "60.0,1200000,8,150000.0,150000.0,140000,160000,5000.0,\"void conv<float, 3>(const float *, "
    "\"\"p\"\")\"\r\n"
    "30.0,600000,8,75000.0,75000.0,70000,80000,3000.0,k_silu\r\n";

EB_TEST(nsys_kern_sum_ranks_by_total_time)
{
    struct eb_kernel_stat top[EB_TRACE_TOP_KERNELS];
    size_t n = 99;
    struct eb_diag d = {0};
    ASSERT_OK(
        eb_nsys_kern_sum_parse(kern_sum, strlen(kern_sum), top, EB_TRACE_TOP_KERNELS, &n, &d));
    ASSERT_EQ_INT(n, 3);
    ASSERT_STREQ(top[0].name, "void conv<float, 3>(const float *, \"p\")");
    ASSERT_EQ_INT(top[0].calls, 8);
    ASSERT_NEAR(top[0].total_ms, 1.2, 1e-12);
    ASSERT_NEAR(top[0].share_pct, 60.0, 1e-9);
    ASSERT_STREQ(top[1].name, "k_silu");
    ASSERT_NEAR(top[1].share_pct, 30.0, 1e-9);
    ASSERT_STREQ(top[2].name, "k_add");
    ASSERT_EQ_INT(top[2].calls, 4);
    ASSERT_NEAR(top[2].total_ms, 0.2, 1e-12);
}

EB_TEST(nsys_kern_sum_keeps_the_top_only)
{
    struct eb_kernel_stat top[1];
    size_t n = 0;
    struct eb_diag d = {0};
    ASSERT_OK(eb_nsys_kern_sum_parse(kern_sum, strlen(kern_sum), top, 1, &n, &d));
    ASSERT_EQ_INT(n, 1);
    ASSERT_NEAR(top[0].share_pct, 60.0, 1e-9); /* a share of all rows, not of those kept */
}

EB_TEST(nsys_kern_sum_header_only_is_no_kernel)
{
    const char csv[] = "\"Time (%)\",\"Total Time (ns)\",\"Instances\",\"Name\"\n";
    struct eb_kernel_stat top[EB_TRACE_TOP_KERNELS];
    size_t n = 99;
    struct eb_diag d = {0};
    ASSERT_OK(eb_nsys_kern_sum_parse(csv, strlen(csv), top, EB_TRACE_TOP_KERNELS, &n, &d));
    ASSERT_EQ_INT(n, 0);
}

EB_TEST(nsys_kern_sum_malformed_is_refused_by_line)
{
    struct eb_kernel_stat top[EB_TRACE_TOP_KERNELS];
    size_t n = 0;
    struct eb_diag d = {0};
    const char no_header[] = "SKIPPED: /tmp/r/nsys.sqlite does not contain CUDA kernel data.\n";
    ASSERT_EQ_INT(eb_nsys_kern_sum_parse(no_header, strlen(no_header), top, 3, &n, &d),
                  EB_ERR_FORMAT);
    ASSERT_CONTAINS(d.msg, "no header");
    const char bad_row[] = "\"Total Time (ns)\",\"Instances\",\"Name\"\n12,3,k\nx,3,k\n";
    struct eb_diag d2 = {0};
    ASSERT_EQ_INT(eb_nsys_kern_sum_parse(bad_row, strlen(bad_row), top, 3, &n, &d2), EB_ERR_FORMAT);
    ASSERT_CONTAINS(d2.msg, "line 3");
    const char short_row[] = "\"Total Time (ns)\",\"Instances\",\"Name\"\n12,3\n";
    struct eb_diag d3 = {0};
    ASSERT_EQ_INT(eb_nsys_kern_sum_parse(short_row, strlen(short_row), top, 3, &n, &d3),
                  EB_ERR_FORMAT);
    ASSERT_CONTAINS(d3.msg, "line 2");
}

EB_TEST(kernel_stats_rank_ties_by_name)
{
    struct eb_kernel_stat all[3] = {
        {.name = "b", .calls = 1, .total_ms = 1.0},
        {.name = "a", .calls = 2, .total_ms = 1.0},
        {.name = "c", .calls = 1, .total_ms = 2.0},
    };
    struct eb_kernel_stat top[3];
    size_t n = 0;
    eb_kernel_stats_rank(all, 3, top, 3, &n);
    ASSERT_EQ_INT(n, 3);
    ASSERT_STREQ(top[0].name, "c");
    ASSERT_STREQ(top[1].name, "a");
    ASSERT_STREQ(top[2].name, "b");
    ASSERT_NEAR(top[0].share_pct + top[1].share_pct + top[2].share_pct, 100.0, 1e-9);
}

EB_TEST(cupti_absent_is_one_clear_line)
{
    const char *const paths[] = {"/nonexistent/libcupti.so", NULL};
    struct eb_cupti *c = NULL;
    struct eb_diag d = {0};
    ASSERT_EQ_INT(eb_cupti_start(paths, &c, &d), EB_ERR_UNSUPPORTED);
    ASSERT_TRUE(c == NULL);
    ASSERT_CONTAINS(d.msg, "CUPTI (libcupti.so) not found");
    ASSERT_CONTAINS(d.msg, "LD_LIBRARY_PATH");
    ASSERT_TRUE(strchr(d.msg, '\n') == NULL);
}

EB_TEST(cupti_refuses_a_library_that_is_not_cupti)
{
    const char *const paths[] = {"libm.so.6", NULL};
    struct eb_cupti *c = NULL;
    struct eb_diag d = {0};
    ASSERT_EQ_INT(eb_cupti_start(paths, &c, &d), EB_ERR_UNSUPPORTED);
    ASSERT_TRUE(c == NULL);
    ASSERT_CONTAINS(d.msg, "libm.so.6 lacks cuptiGetVersion: not a CUPTI library");
    eb_cupti_destroy(NULL);
}
