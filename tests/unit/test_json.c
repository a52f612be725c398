#include <math.h>

#include "eb/json.h"
#include "eb/utf8.h"
#include "eb_test.h"

EB_TEST(writer_output_parses_back)
{
    struct eb_json_writer w;
    eb_json_writer_init_mem(&w, 1);
    eb_json_obj_begin(&w);
    eb_json_kstr(&w, "name", "rgb \"cam\"\n\x01");
    eb_json_knum(&w, "p50", 12.25);
    eb_json_knum(&w, "nan", NAN);
    eb_json_kint(&w, "frames", -3);
    eb_json_key(&w, "list");
    eb_json_arr_begin(&w);
    eb_json_num(&w, 0.1);
    eb_json_bool(&w, 1);
    eb_json_null(&w);
    eb_json_obj_begin(&w);
    eb_json_obj_end(&w);
    eb_json_arr_end(&w);
    eb_json_obj_end(&w);
    size_t len = 0;
    char *text = eb_json_writer_take(&w, &len);
    ASSERT_TRUE(text != NULL);
    struct eb_json_value *root = NULL;
    struct eb_diag diag = {0};
    ASSERT_OK(eb_json_parse(text, len, &root, &diag));
    ASSERT_STREQ(eb_json_path(root, "name")->str, "rgb \"cam\"\n\x01");
    ASSERT_NEAR(eb_json_path(root, "p50")->num, 12.25, 0);
    ASSERT_EQ_INT(eb_json_path(root, "nan")->type, EB_JSON_NULL);
    ASSERT_NEAR(eb_json_path(root, "frames")->num, -3, 0);
    ASSERT_EQ_INT(eb_json_path(root, "list")->n, 4);
    ASSERT_NEAR(eb_json_path(root, "list/0")->num, 0.1, 0);
    ASSERT_EQ_INT(eb_json_path(root, "list/3")->type, EB_JSON_OBJECT);
    ASSERT_TRUE(eb_json_path(root, "list/4") == NULL);
    eb_json_free(root);
    free(text);
}

EB_TEST(parser_rejects_malformed)
{
    const char *bad[] = {"",      "{",   "{\"a\":}", "[1,]",           "{\"a\" 1}",
                         "\"abc", "tru", "[1] x",    "{\"a\":\"\\q\"}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct eb_json_value *root = NULL;
        struct eb_diag diag = {0};
        enum eb_status st = eb_json_parse(bad[i], strlen(bad[i]), &root, &diag);
        if (st != EB_ERR_FORMAT)
            EB_FAIL("accepted malformed JSON '%s'", bad[i]);
        ASSERT_CONTAINS(diag.msg, "malformed JSON");
    }
}

EB_TEST(invalid_utf8_is_replaced)
{
    struct eb_json_writer w;
    eb_json_writer_init_mem(&w, 0);
    eb_json_str(&w, "a\xff"
                    "b");
    char *text = eb_json_writer_take(&w, NULL);
    ASSERT_STREQ(text, "\"a\xEF\xBF\xBD"
                       "b\"");
    free(text);
}

/* The one UTF-8 rule every escaping writer uses (JSON, Markdown, SVG/HTML). */
EB_TEST(utf8_sequences_well_formed_or_refused)
{
    static const struct {
        const char *bytes;
        size_t want;
    } cases[] = {
        {"a", 1},
        {"\xC3\xA9", 2},         /* é */
        {"\xE2\x80\xA6", 3},     /* … */
        {"\xF0\x9F\x98\x80", 4}, /* U+1F600 */
        {"\xC0\xAF", 0},         /* overlong '/' */
        {"\xE0\x80\xAF", 0},     /* overlong */
        {"\xED\xA0\x80", 0},     /* a surrogate */
        {"\xF4\x90\x80\x80", 0}, /* above U+10FFFF */
        {"\x80", 0},             /* a stray continuation byte */
        {"\xE2\x80", 0},         /* cut by the end of the string */
        {"\xFF", 0},
    };
    for (size_t i = 0; i < EB_ARRAY_LEN(cases); i++)
        ASSERT_EQ_INT(eb_utf8_seq_len((const unsigned char *)cases[i].bytes), cases[i].want);
}
