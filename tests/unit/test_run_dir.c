/* Run folders (eb_run_make_dir): <YYYYmmdd-HHMMSS>.<mmm>-<suffix>, sorting (strcmp, hence `ls`
 * and `edgebench history`'s readers) in the order they were made, even within one second and
 * whatever their suffixes. */
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "eb_test.h"
#include "harness/cmd/run.h"

/* The folder name of `path` (after the last '/'). */
static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s != NULL ? s + 1 : path;
}

/* Asserts that `path`'s folder name is YYYYmmdd-HHMMSS.mmm-<suffix> and that it exists. */
static void assert_run_name(const char *path, const char *suffix)
{
    const char *b = base_name(path);
    ASSERT_TRUE(strlen(b) == 20 + strlen(suffix));
    for (int i = 0; i < 19; i++)
        ASSERT_TRUE(i == 8 ? b[i] == '-' : i == 15 ? b[i] == '.' : b[i] >= '0' && b[i] <= '9');
    ASSERT_TRUE(b[19] == '-');
    ASSERT_STREQ(b + 20, suffix);
    struct stat st;
    ASSERT_TRUE(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
}

EB_TEST(folders_made_in_one_second_sort_in_creation_order)
{
    char parent[600];
    snprintf(parent, sizeof(parent), "%s/runs/nested", eb_test_tmpdir());
    /* the suffixes in reverse byte order, and one twice: only the time field may order them */
    static const char *const suffixes[] = {"val", "dual", "dual", "compare"};
    char dirs[4][700];
    struct eb_diag d = {0};
    for (int i = 0; i < 4; i++) {
        ASSERT_OK(eb_run_make_dir(parent, suffixes[i], "--output", dirs[i], sizeof(dirs[i]), &d));
        assert_run_name(dirs[i], suffixes[i]);
    }
    for (int i = 1; i < 4; i++) {
        if (strcmp(dirs[i - 1], dirs[i]) >= 0)
            EB_FAIL("%s sorts before %s, made earlier", dirs[i], dirs[i - 1]);
    }
}

EB_TEST(new_folder_sorts_after_a_later_one_of_the_same_second)
{
    char parent[600];
    snprintf(parent, sizeof(parent), "%s/runs", eb_test_tmpdir());
    struct eb_diag d = {0};
    char first[700];
    /* a first folder early enough in its second to leave room for the two below */
    for (;;) {
        ASSERT_OK(eb_run_make_dir(parent, "dual", "--output", first, sizeof(first), &d));
        if (base_name(first)[16] != '9' || base_name(first)[17] != '9')
            break;
        nanosleep(&(struct timespec){.tv_nsec = 20 * 1000 * 1000}, NULL);
    }
    /* another command's folder, a few milliseconds later in that second */
    const char *b = base_name(first);
    int ms = (b[16] - '0') * 100 + (b[17] - '0') * 10 + (b[18] - '0') + 5;
    char later[700];
    snprintf(later, sizeof(later), "%s/%.15s.%03d-zzz", parent, b, ms);
    ASSERT_TRUE(mkdir(later, 0755) == 0);
    /* a folder made now sorts after both, though its suffix sorts first */
    char next[700];
    ASSERT_OK(eb_run_make_dir(parent, "a", "--output", next, sizeof(next), &d));
    assert_run_name(next, "a");
    if (strcmp(later, next) >= 0 || strcmp(first, next) >= 0)
        EB_FAIL("%s sorts before %s or %s, made earlier", next, first, later);
}

EB_TEST(unwritable_parent_is_one_line_naming_it_and_the_flag)
{
    char file[600], parent[700], dir[800];
    snprintf(file, sizeof(file), "%s/plain-file", eb_test_tmpdir());
    FILE *f = fopen(file, "w");
    ASSERT_TRUE(f != NULL && fclose(f) == 0);
    snprintf(parent, sizeof(parent), "%s/sub", file);
    struct eb_diag d = {0};
    ASSERT_TRUE(eb_run_make_dir(parent, "dual", "--output", dir, sizeof(dir), &d) != EB_OK);
    ASSERT_CONTAINS(d.msg, "plain-file");
    ASSERT_CONTAINS(d.msg, "--output");
    ASSERT_TRUE(strchr(d.msg, '\n') == NULL);
}
