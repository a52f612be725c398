/* Frame sources: spec parsing, image directories (JPEG/PNG/BMP), videos, synthetic scenes, AGC. */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <jpeglib.h>
#include <netinet/in.h>
#include <png.h>

#include "eb/clock.h"
#include "eb_test.h"
#include "harness/pipeline/source.h"

/* ------------------------------------------------------------------ helpers */

static void path_join(char *buf, size_t size, const char *a, const char *b)
{
    int n = snprintf(buf, size, "%s/%s", a, b);
    if (n < 0 || (size_t)n >= size)
        EB_FAIL("path too long: %s/%s", a, b);
}

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(data, 1, n, f) != n)
        EB_FAIL("cannot write %s", path);
    fclose(f);
}

static void copy_file(const char *from, const char *to, size_t max_bytes)
{
    size_t n = 0;
    char *b = eb_test_read_file(from, &n);
    if (b == NULL)
        EB_FAIL("cannot read %s", from);
    write_bytes(to, b, n < max_bytes ? n : max_bytes);
    free(b);
}

static uint64_t frame_hash(const struct eb_frame *f)
{
    uint64_t h = 1469598103934665603ull;
    for (int y = 0; y < f->height; y++) {
        const uint8_t *p = f->rgb + (size_t)y * f->stride;
        for (size_t i = 0; i < (size_t)f->width * 3; i++)
            h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

static int frame_is_gray(const struct eb_frame *f)
{
    for (int y = 0; y < f->height; y++) {
        const uint8_t *p = f->rgb + (size_t)y * f->stride;
        for (int x = 0; x < f->width; x++, p += 3)
            if (p[0] != p[1] || p[1] != p[2])
                return 0;
    }
    return 1;
}

static const char *shared_or_skip(void)
{
    const char *d = eb_test_shared_data();
    if (d == NULL)
        EB_SKIP("shared data folder not found (set EB_SHARED_DATA)");
    return d;
}

static void shared_path_or_skip(char *buf, size_t size, const char *rel)
{
    path_join(buf, size, shared_or_skip(), rel);
    struct stat sb;
    if (stat(buf, &sb) != 0)
        EB_SKIP("%s is not in the shared data", rel);
}

static struct eb_source *open_text(const char *text, const struct eb_source_options *opts)
{
    struct eb_diag diag = {0};
    struct eb_source_spec spec;
    struct eb_source *src = NULL;
    if (eb_source_spec_parse(text, &spec, &diag) != EB_OK)
        EB_FAIL("parse %s: %s", text, diag.msg);
    if (eb_source_open(&spec, opts, &src, &diag) != EB_OK)
        EB_FAIL("open %s: %s", text, diag.msg);
    return src;
}

struct log_capture {
    int warnings;
    char last[512];
};

static void capture_log(void *ctx, enum eb_log_level level, const char *msg)
{
    struct log_capture *c = ctx;
    if (level >= EB_LOG_WARN) {
        c->warnings++;
        snprintf(c->last, sizeof(c->last), "%s", msg);
    }
}

/* 16-bit or 8-bit gray PNG through libpng. */
static void write_gray_png(const char *path, int w, int h, int depth, const uint16_t *samples)
{
    FILE *f = fopen(path, "wb");
    ASSERT_TRUE(f != NULL);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    ASSERT_TRUE(png != NULL && info != NULL);
    if (setjmp(png_jmpbuf(png)))
        EB_FAIL("libpng failed writing %s", path);
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, depth, PNG_COLOR_TYPE_GRAY,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    size_t bpp = depth == 16 ? 2 : 1;
    png_bytep row = malloc((size_t)w * bpp);
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            uint16_t v = samples[(size_t)y * (size_t)w + (size_t)x];
            if (depth == 16) {
                row[2 * x] = (png_byte)(v >> 8); /* big-endian */
                row[2 * x + 1] = (png_byte)(v & 0xFF);
            } else {
                row[x] = (png_byte)v;
            }
        }
        png_write_row(png, row);
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(row);
    fclose(f);
}

static void put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* BMP with a 40-byte header; 24-bit (pix = RGB triplets) or 8-bit with a gray palette
   (pix = gray bytes). Rows are written bottom-up unless top_down. */
static void write_bmp(const char *path, int w, int h, int bpp, int top_down, const uint8_t *pix)
{
    size_t stride = (((size_t)w * (size_t)bpp + 31) / 32) * 4;
    size_t pal = bpp == 8 ? 256 * 4 : 0;
    size_t off = 14 + 40 + pal, size = off + stride * (size_t)h;
    uint8_t *b = calloc(1, size);
    b[0] = 'B';
    b[1] = 'M';
    put_le32(b + 2, (uint32_t)size);
    put_le32(b + 10, (uint32_t)off);
    put_le32(b + 14, 40);
    put_le32(b + 18, (uint32_t)w);
    put_le32(b + 22, (uint32_t)(top_down ? -h : h));
    b[26] = 1;
    b[28] = (uint8_t)bpp;
    for (size_t i = 0; i < pal / 4; i++)
        b[54 + 4 * i] = b[55 + 4 * i] = b[56 + 4 * i] = (uint8_t)i;
    for (int y = 0; y < h; y++) {
        uint8_t *row = b + off + stride * (size_t)(top_down ? y : h - 1 - y);
        for (int x = 0; x < w; x++) {
            if (bpp == 8) {
                row[x] = pix[(size_t)y * (size_t)w + (size_t)x];
            } else {
                const uint8_t *p = pix + ((size_t)y * (size_t)w + (size_t)x) * 3;
                row[3 * x] = p[2]; /* BGR */
                row[3 * x + 1] = p[1];
                row[3 * x + 2] = p[0];
            }
        }
    }
    write_bytes(path, b, size);
    free(b);
}

/* ------------------------------------------------------------------ spec parsing */

EB_TEST(spec_parse_keyed_forms)
{
    struct eb_diag diag = {0};
    struct eb_source_spec s;
    char buf[256];

    ASSERT_OK(eb_source_spec_parse("image_dir=data/imgs", &s, &diag));
    ASSERT_EQ_INT(s.kind, EB_SOURCE_IMAGE_DIR);
    ASSERT_STREQ(s.path, "data/imgs");
    eb_source_spec_format(&s, buf, sizeof(buf));
    ASSERT_STREQ(buf, "image_dir=data/imgs");

    ASSERT_OK(eb_source_spec_parse("video=clips/a=b.mp4", &s, &diag));
    ASSERT_EQ_INT(s.kind, EB_SOURCE_VIDEO);
    ASSERT_STREQ(s.path, "clips/a=b.mp4");
    eb_source_spec_format(&s, buf, sizeof(buf));
    ASSERT_STREQ(buf, "video=clips/a=b.mp4");

    ASSERT_OK(eb_source_spec_parse("camera=3", &s, &diag));
    ASSERT_EQ_INT(s.kind, EB_SOURCE_CAMERA);
    ASSERT_EQ_INT(s.camera_index, 3);
    ASSERT_STREQ(s.path, "/dev/video3");
    eb_source_spec_format(&s, buf, sizeof(buf));
    ASSERT_STREQ(buf, "camera=3");

    ASSERT_OK(eb_source_spec_parse("camera=63", &s, &diag));
    ASSERT_EQ_INT(s.camera_index, 63);

    ASSERT_OK(eb_source_spec_parse("synthetic=640x480@30", &s, &diag));
    ASSERT_EQ_INT(s.kind, EB_SOURCE_SYNTHETIC);
    ASSERT_EQ_INT(s.synth_w, 640);
    ASSERT_EQ_INT(s.synth_h, 480);
    ASSERT_NEAR(s.synth_fps, 30.0, 0);
    eb_source_spec_format(&s, buf, sizeof(buf));
    ASSERT_STREQ(buf, "synthetic=640x480@30");

    ASSERT_OK(eb_source_spec_parse("synthetic=16x8192", &s, &diag));
    ASSERT_EQ_INT(s.synth_w, 16);
    ASSERT_EQ_INT(s.synth_h, 8192);
    ASSERT_NEAR(s.synth_fps, 0.0, 0);
    eb_source_spec_format(&s, buf, sizeof(buf));
    ASSERT_STREQ(buf, "synthetic=16x8192");

    ASSERT_OK(eb_source_spec_parse("synthetic=320x240@12.5", &s, &diag));
    ASSERT_NEAR(s.synth_fps, 12.5, 0);
    eb_source_spec_format(&s, buf, sizeof(buf));
    ASSERT_STREQ(buf, "synthetic=320x240@12.5");
    ASSERT_EQ_INT(diag.status, EB_OK);

    ASSERT_STREQ(eb_source_kind_name(EB_SOURCE_IMAGE_DIR), "image_dir");
    ASSERT_STREQ(eb_source_kind_name(EB_SOURCE_VIDEO), "video");
    ASSERT_STREQ(eb_source_kind_name(EB_SOURCE_CAMERA), "camera");
    ASSERT_STREQ(eb_source_kind_name(EB_SOURCE_SYNTHETIC), "synthetic");
}

static void expect_parse_error(const char *text, enum eb_status want, const char *needle)
{
    struct eb_diag diag = {0};
    struct eb_source_spec s;
    memset(&s, 0x5A, sizeof(s));
    enum eb_status st = eb_source_spec_parse(text, &s, &diag);
    if (st != want)
        EB_FAIL("parse '%s': got %s, want %s (%s)", text, eb_status_name(st), eb_status_name(want),
                diag.msg);
    ASSERT_EQ_INT(diag.status, want);
    ASSERT_CONTAINS(diag.msg, "failed to ");
    ASSERT_CONTAINS(diag.msg, needle);
    ASSERT_TRUE(strchr(diag.msg, '\n') == NULL);
    ASSERT_EQ_INT(s.path[0], 0x5A); /* nothing written on failure */
}

EB_TEST(spec_parse_errors)
{
    expect_parse_error("foo=bar", EB_ERR_INVALID_ARG, "'foo'");
    expect_parse_error("foo=bar", EB_ERR_INVALID_ARG, "image_dir=PATH, video=PATH, camera=N");
    expect_parse_error("", EB_ERR_INVALID_ARG, "empty");
    expect_parse_error("image_dir=", EB_ERR_INVALID_ARG, "empty");
    expect_parse_error("video=", EB_ERR_INVALID_ARG, "empty");
    expect_parse_error("camera=64", EB_ERR_INVALID_ARG, "0..63");
    expect_parse_error("camera=-1", EB_ERR_INVALID_ARG, "0..63");
    expect_parse_error("camera=abc", EB_ERR_INVALID_ARG, "0..63");
    expect_parse_error("camera=1x", EB_ERR_INVALID_ARG, "0..63");
    expect_parse_error("camera=", EB_ERR_INVALID_ARG, "0..63");
    expect_parse_error("synthetic=8x480", EB_ERR_INVALID_ARG, "16..8192");
    expect_parse_error("synthetic=640x9000", EB_ERR_INVALID_ARG, "16..8192");
    expect_parse_error("synthetic=640x480@2000", EB_ERR_INVALID_ARG, "0 (unpaced) or 0.1..1000");
    /* Below a frame every 10 s: 0.001 (a typo for 1000?) would wait 1000 s for frame 1. */
    expect_parse_error("synthetic=640x480@0.001", EB_ERR_INVALID_ARG, "0 (unpaced) or 0.1..1000");
    expect_parse_error("synthetic=640x480@0.09", EB_ERR_INVALID_ARG, "0 (unpaced) or 0.1..1000");
    expect_parse_error("synthetic=640", EB_ERR_INVALID_ARG, "synthetic=WxH");
    expect_parse_error("synthetic=640x480@", EB_ERR_INVALID_ARG, "synthetic=WxH");
    expect_parse_error("synthetic=640x480@-1", EB_ERR_INVALID_ARG, "FPS -1 is out of range");
    expect_parse_error("synthetic=640x480@0x10", EB_ERR_INVALID_ARG, "synthetic=WxH");
    expect_parse_error("synthetic=640x480@1e999", EB_ERR_INVALID_ARG, "FPS 1e999 is out of range");
    expect_parse_error("synthetic=640x480@30fps", EB_ERR_INVALID_ARG, "synthetic=WxH");
    expect_parse_error("synthetic=-640x480", EB_ERR_INVALID_ARG, "synthetic=WxH");
    expect_parse_error("synthetic= 640x480", EB_ERR_INVALID_ARG, "synthetic=WxH");

    char *long_path = malloc(EB_SOURCE_PATH_MAX + 16);
    memcpy(long_path, "video=", 6);
    memset(long_path + 6, 'a', EB_SOURCE_PATH_MAX);
    long_path[6 + EB_SOURCE_PATH_MAX] = '\0';
    expect_parse_error(long_path, EB_ERR_INVALID_ARG, "longer than");
    free(long_path);
}

EB_TEST(spec_parse_bare_paths)
{
    const char *tmp = eb_test_tmpdir();
    char dir[600], vid[600], img[600], missing[600], want[1024];
    path_join(dir, sizeof(dir), tmp, "frames");
    ASSERT_EQ_INT(mkdir(dir, 0755), 0);
    path_join(vid, sizeof(vid), tmp, "clip.mp4");
    write_bytes(vid, "x", 1);
    path_join(img, sizeof(img), tmp, "Bus.JPG");
    write_bytes(img, "x", 1);
    path_join(missing, sizeof(missing), tmp, "nope");

    struct eb_diag diag = {0};
    struct eb_source_spec s;
    ASSERT_OK(eb_source_spec_parse(dir, &s, &diag));
    ASSERT_EQ_INT(s.kind, EB_SOURCE_IMAGE_DIR);
    ASSERT_STREQ(s.path, dir);

    ASSERT_OK(eb_source_spec_parse(vid, &s, &diag));
    ASSERT_EQ_INT(s.kind, EB_SOURCE_VIDEO);
    ASSERT_STREQ(s.path, vid);

    ASSERT_OK(eb_source_spec_parse(img, &s, &diag)); /* one image = one-image image_dir */
    ASSERT_EQ_INT(s.kind, EB_SOURCE_IMAGE_DIR);
    ASSERT_STREQ(s.path, img);

    /* A camera path is recognised by its name: the device need not exist to parse. */
    ASSERT_OK(eb_source_spec_parse("/dev/video5", &s, &diag));
    ASSERT_EQ_INT(s.kind, EB_SOURCE_CAMERA);
    ASSERT_EQ_INT(s.camera_index, 5);
    ASSERT_STREQ(s.path, "/dev/video5");

    /* A file literally named key=value is a bare path when it exists. */
    char odd[600];
    path_join(odd, sizeof(odd), tmp, "foo=bar");
    write_bytes(odd, "x", 1);
    ASSERT_OK(eb_source_spec_parse(odd, &s, &diag));
    ASSERT_EQ_INT(s.kind, EB_SOURCE_VIDEO);

    ASSERT_EQ_INT(eb_source_spec_parse(missing, &s, &diag), EB_ERR_IO);
    snprintf(want, sizeof(want),
             "failed to open source '%s': no such file or directory; give image_dir=PATH, "
             "video=PATH, camera=N or synthetic=WxH",
             missing);
    ASSERT_CONTAINS(diag.msg, want);
}

/* ------------------------------------------------------------------ AGC */

EB_TEST(agc_ramp_flat_and_outliers)
{
    uint32_t *hist = malloc(65536 * sizeof(uint32_t));
    uint16_t *in = malloc(65536 * sizeof(uint16_t));
    uint8_t *out = malloc(65536);
    for (int i = 0; i < 65536; i++)
        in[i] = (uint16_t)i;
    eb_agc_u16_to_u8(in, 65536, 1.0, 99.0, hist, out);
    for (int i = 1; i < 65536; i++)
        ASSERT_TRUE(out[i] >= out[i - 1]);
    ASSERT_EQ_INT(out[0], 0);
    ASSERT_EQ_INT(out[65535], 255);
    ASSERT_EQ_INT(out[32768], 128);
    ASSERT_EQ_INT(out[600], 0);     /* below the 1st percentile: clamped */
    ASSERT_EQ_INT(out[65000], 255); /* above the 99th */

    for (int i = 0; i < 1000; i++)
        in[i] = 30000;
    eb_agc_u16_to_u8(in, 1000, 1.0, 99.0, hist, out);
    for (int i = 0; i < 1000; i++)
        ASSERT_EQ_INT(out[i], 128); /* flat: mid-gray, no division by zero */

    in[0] = 0; /* one cold and one hot outlier on a flat field */
    in[1] = 65535;
    eb_agc_u16_to_u8(in, 1000, 1.0, 99.0, hist, out);
    ASSERT_EQ_INT(out[0], 0);
    ASSERT_EQ_INT(out[1], 255);
    ASSERT_EQ_INT(out[2], 128);
    free(hist);
    free(in);
    free(out);
}

/* ------------------------------------------------------------------ image directories */

static void find_coco(char *buf, size_t size)
{
    const char *shared = shared_or_skip();
    static const char *const subs[] = {"datasets/coco128/images/train2017",
                                       "datasets/coco128/images/val2017"};
    for (size_t i = 0; i < 2; i++) {
        path_join(buf, size, shared, subs[i]);
        struct stat sb;
        if (stat(buf, &sb) == 0 && S_ISDIR(sb.st_mode))
            return;
    }
    EB_SKIP("coco128 images not in the shared data");
}

static void jpeg_size(const char *path, int *w, int *h, int *comps)
{
    FILE *f = fopen(path, "rb");
    ASSERT_TRUE(f != NULL);
    struct jpeg_decompress_struct c;
    struct jpeg_error_mgr err;
    c.err = jpeg_std_error(&err);
    jpeg_create_decompress(&c);
    jpeg_stdio_src(&c, f);
    jpeg_read_header(&c, TRUE);
    *w = (int)c.image_width;
    *h = (int)c.image_height;
    *comps = c.num_components;
    jpeg_destroy_decompress(&c);
    fclose(f);
}

EB_TEST(imgdir_coco128_sorted_and_sized)
{
    char dir[1024], text[1100], first[1200];
    find_coco(dir, sizeof(dir));
    snprintf(text, sizeof(text), "image_dir=%s", dir);
    struct eb_source_options opts = {0};
    struct eb_source *src = open_text(text, &opts);
    ASSERT_EQ_INT(eb_source_count(src), 128);
    struct eb_diag diag = {0};
    struct eb_frame f;
    char prev[256] = "";
    int64_t n = 0;
    enum eb_status st;
    while ((st = eb_source_next(src, &f, &diag)) == EB_OK) {
        ASSERT_EQ_INT(f.index, n);
        ASSERT_TRUE(f.name != NULL);
        ASSERT_TRUE(strcmp(prev, f.name) < 0);
        snprintf(prev, sizeof(prev), "%s", f.name);
        ASSERT_EQ_INT(f.stride, (size_t)f.width * 3);
        ASSERT_EQ_INT(f.source_bits, 8);
        if (n == 0) {
            int w, h, c;
            path_join(first, sizeof(first), dir, f.name);
            jpeg_size(first, &w, &h, &c);
            ASSERT_EQ_INT(f.width, w);
            ASSERT_EQ_INT(f.height, h);
            ASSERT_EQ_INT(f.source_channels, c);
        }
        n++;
    }
    ASSERT_EQ_INT(st, EB_ERR_END);
    ASSERT_EQ_INT(n, 128);
    ASSERT_EQ_INT(eb_source_skipped(src), 0);
    ASSERT_EQ_INT(eb_source_next(src, &f, &diag), EB_ERR_END); /* stays at the end */
    eb_source_destroy(src);
}

EB_TEST(imgdir_max_frames_and_rewind)
{
    char dir[1024], text[1100];
    find_coco(dir, sizeof(dir));
    snprintf(text, sizeof(text), "image_dir=%s", dir);
    struct eb_source_options opts = {.max_frames = 5};
    struct eb_source *src = open_text(text, &opts);
    ASSERT_EQ_INT(eb_source_count(src), 5);
    struct eb_diag diag = {0};
    struct eb_frame f;
    uint64_t h0 = 0;
    for (int i = 0; i < 5; i++) {
        ASSERT_OK(eb_source_next(src, &f, &diag));
        if (i == 0)
            h0 = frame_hash(&f);
    }
    ASSERT_EQ_INT(eb_source_next(src, &f, &diag), EB_ERR_END);
    ASSERT_OK(eb_source_rewind(src, &diag));
    ASSERT_OK(eb_source_next(src, &f, &diag));
    ASSERT_EQ_INT(f.index, 0);
    ASSERT_TRUE(frame_hash(&f) == h0);
    eb_source_destroy(src);
}

EB_TEST(imgdir_hit_uav_thermal_gray_jpeg)
{
    char dir[1024], text[1100];
    shared_path_or_skip(dir, sizeof(dir), "datasets/thermal/hit-uav/images");
    snprintf(text, sizeof(text), "image_dir=%s", dir);
    struct eb_source_options opts = {.max_frames = 3};
    struct eb_source *src = open_text(text, &opts);
    struct eb_diag diag = {0};
    struct eb_frame f;
    for (int i = 0; i < 3; i++) {
        ASSERT_OK(eb_source_next(src, &f, &diag));
        ASSERT_EQ_INT(f.width, 640);
        ASSERT_EQ_INT(f.height, 512);
        ASSERT_EQ_INT(f.source_channels, 1); /* single-component JPEGs */
        ASSERT_EQ_INT(f.source_bits, 8);
        ASSERT_TRUE(frame_is_gray(&f));
    }
    eb_source_destroy(src);
}

EB_TEST(imgdir_png16_gray_ramp_goes_through_agc)
{
    const char *tmp = eb_test_tmpdir();
    char path[600];
    path_join(path, sizeof(path), tmp, "ramp16.png");
    int w = 300, h = 20;
    uint16_t *s = malloc((size_t)w * (size_t)h * sizeof(uint16_t));
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            s[y * w + x] = (uint16_t)(20000 + x * 40); /* 20000..31960 */
    write_gray_png(path, w, h, 16, s);
    free(s);

    char text[700];
    snprintf(text, sizeof(text), "image_dir=%s", tmp);
    struct eb_source *src = open_text(text, NULL);
    struct eb_diag diag = {0};
    struct eb_frame f;
    ASSERT_OK(eb_source_next(src, &f, &diag));
    ASSERT_STREQ(f.name, "ramp16.png");
    ASSERT_EQ_INT(f.width, w);
    ASSERT_EQ_INT(f.height, h);
    ASSERT_EQ_INT(f.source_bits, 16);
    ASSERT_EQ_INT(f.source_channels, 1);
    ASSERT_TRUE(frame_is_gray(&f));
    for (int y = 0; y < h; y++) {
        const uint8_t *row = f.rgb + (size_t)y * f.stride;
        for (int x = 1; x < w; x++)
            ASSERT_TRUE(row[3 * x] >= row[3 * (x - 1)]);
        ASSERT_TRUE(row[0] <= 3);
        ASSERT_TRUE(row[3 * (w - 1)] >= 252);
    }
    ASSERT_EQ_INT(eb_source_next(src, &f, &diag), EB_ERR_END);
    eb_source_destroy(src);
}

EB_TEST(imgdir_png8_gray_is_replicated)
{
    const char *tmp = eb_test_tmpdir();
    char path[600];
    path_join(path, sizeof(path), tmp, "gray8.png");
    int w = 17, h = 9;
    uint16_t s[17 * 9];
    for (int i = 0; i < w * h; i++)
        s[i] = (uint16_t)((i * 7) & 0xFF);
    write_gray_png(path, w, h, 8, s);
    struct eb_source *src = open_text(path, NULL); /* bare path to one image */
    struct eb_diag diag = {0};
    struct eb_frame f;
    ASSERT_OK(eb_source_next(src, &f, &diag));
    ASSERT_EQ_INT(f.source_bits, 8);
    ASSERT_EQ_INT(f.source_channels, 1);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < 3; c++)
                ASSERT_EQ_INT(f.rgb[(size_t)y * f.stride + 3 * (size_t)x + (size_t)c],
                              s[y * w + x]);
    eb_source_destroy(src);
}

EB_TEST(imgdir_bmp_24bit_bottom_up_and_8bit_top_down)
{
    const char *tmp = eb_test_tmpdir();
    char p24[600], p8[600], text[700];
    int w = 5, h = 3; /* odd width: rows are padded */
    uint8_t rgb[5 * 3 * 3], gray[5 * 3];
    for (int i = 0; i < w * h; i++) {
        rgb[3 * i] = (uint8_t)(10 * i);
        rgb[3 * i + 1] = (uint8_t)(200 - 5 * i);
        rgb[3 * i + 2] = (uint8_t)(7 * i + 1);
        gray[i] = (uint8_t)(17 * i);
    }
    path_join(p24, sizeof(p24), tmp, "a24.bmp");
    path_join(p8, sizeof(p8), tmp, "b8.BMP");
    write_bmp(p24, w, h, 24, 0, rgb);
    write_bmp(p8, w, h, 8, 1, gray);
    snprintf(text, sizeof(text), "image_dir=%s", tmp);
    struct eb_source *src = open_text(text, NULL);
    ASSERT_EQ_INT(eb_source_count(src), 2);
    struct eb_diag diag = {0};
    struct eb_frame f;
    ASSERT_OK(eb_source_next(src, &f, &diag));
    ASSERT_STREQ(f.name, "a24.bmp");
    ASSERT_EQ_INT(f.width, w);
    ASSERT_EQ_INT(f.height, h);
    ASSERT_EQ_INT(f.source_channels, 3);
    for (int i = 0; i < w * h * 3; i++)
        ASSERT_EQ_INT(f.rgb[i], rgb[i]);
    ASSERT_OK(eb_source_next(src, &f, &diag));
    ASSERT_STREQ(f.name, "b8.BMP");
    ASSERT_EQ_INT(f.source_channels, 1);
    for (int i = 0; i < w * h; i++)
        for (int c = 0; c < 3; c++)
            ASSERT_EQ_INT(f.rgb[3 * i + c], gray[i]);
    ASSERT_EQ_INT(eb_source_next(src, &f, &diag), EB_ERR_END);
    ASSERT_EQ_INT(eb_source_skipped(src), 0);
    eb_source_destroy(src);
}

EB_TEST(imgdir_corrupt_images_are_skipped_and_counted)
{
    char bus[1024];
    shared_path_or_skip(bus, sizeof(bus), "datasets/samples/bus.jpg");
    const char *tmp = eb_test_tmpdir();
    char p[600];
    path_join(p, sizeof(p), tmp, "a.jpg");
    copy_file(bus, p, SIZE_MAX);
    path_join(p, sizeof(p), tmp, "b.jpg"); /* not an image at all */
    write_bytes(p, "this is not a jpeg", 18);
    path_join(p, sizeof(p), tmp, "c.jpg"); /* JPEG magic, garbage after: libjpeg error */
    write_bytes(p, "\xFF\xD8\xFF\xE0garbage garbage garbage", 27);
    path_join(p, sizeof(p), tmp, "d.jpg"); /* cut short */
    copy_file(bus, p, 3000);
    path_join(p, sizeof(p), tmp, "e.png"); /* PNG signature, then garbage: libpng error */
    write_bytes(p, "\x89PNG\r\n\x1a\nnot really a png", 24);
    path_join(p, sizeof(p), tmp, "f.jpg");
    copy_file(bus, p, SIZE_MAX);
    path_join(p, sizeof(p), tmp, "notes.txt"); /* ignored: not an image name */
    write_bytes(p, "x", 1);

    struct log_capture cap = {0};
    struct eb_log log = {.fn = capture_log, .ctx = &cap, .level = EB_LOG_DEBUG};
    struct eb_source_options opts = {.log = &log};
    char text[700];
    snprintf(text, sizeof(text), "image_dir=%s", tmp);
    struct eb_source *src = open_text(text, &opts);
    ASSERT_EQ_INT(eb_source_count(src), 6);
    struct eb_diag diag = {0};
    struct eb_frame f;
    ASSERT_OK(eb_source_next(src, &f, &diag));
    ASSERT_STREQ(f.name, "a.jpg");
    ASSERT_EQ_INT(f.width, 810);
    ASSERT_EQ_INT(f.height, 1080);
    ASSERT_EQ_INT(f.index, 0);
    uint64_t ha = frame_hash(&f);
    ASSERT_OK(eb_source_next(src, &f, &diag));
    ASSERT_STREQ(f.name, "f.jpg");
    ASSERT_EQ_INT(f.index, 1);
    ASSERT_TRUE(frame_hash(&f) == ha);
    ASSERT_EQ_INT(eb_source_skipped(src), 4);
    ASSERT_EQ_INT(cap.warnings, 4);
    ASSERT_CONTAINS(cap.last, "e.png");
    ASSERT_EQ_INT(eb_source_next(src, &f, &diag), EB_ERR_END);
    ASSERT_EQ_INT(diag.status, EB_OK);
    eb_source_destroy(src);
}

EB_TEST(imgdir_all_corrupt_ends_after_counting)
{
    const char *tmp = eb_test_tmpdir();
    char p[600], text[700];
    path_join(p, sizeof(p), tmp, "x.jpg");
    write_bytes(p, "nope", 4);
    path_join(p, sizeof(p), tmp, "y.bmp");
    write_bytes(p, "BMnope", 6);
    snprintf(text, sizeof(text), "image_dir=%s", tmp);
    struct eb_source *src = open_text(text, NULL);
    struct eb_diag diag = {0};
    struct eb_frame f;
    ASSERT_EQ_INT(eb_source_next(src, &f, &diag), EB_ERR_END);
    ASSERT_EQ_INT(eb_source_skipped(src), 2);
    eb_source_destroy(src);
}

EB_TEST(imgdir_empty_dir_is_an_error_naming_it)
{
    const char *tmp = eb_test_tmpdir();
    char p[600], text[700];
    path_join(p, sizeof(p), tmp, "readme.txt");
    write_bytes(p, "x", 1);
    snprintf(text, sizeof(text), "image_dir=%s", tmp);
    struct eb_diag diag = {0};
    struct eb_source_spec spec;
    struct eb_source *src = NULL;
    ASSERT_OK(eb_source_spec_parse(text, &spec, &diag));
    ASSERT_EQ_INT(eb_source_open(&spec, NULL, &src, &diag), EB_ERR_INVALID_ARG);
    ASSERT_TRUE(src == NULL);
    ASSERT_CONTAINS(diag.msg, "failed to open source image_dir=");
    ASSERT_CONTAINS(diag.msg, tmp);
    ASSERT_CONTAINS(diag.msg, "no .jpg/.jpeg/.png/.bmp images in it; ");

    eb_diag_clear(&diag);
    path_join(p, sizeof(p), tmp, "missing");
    snprintf(text, sizeof(text), "image_dir=%s", p);
    ASSERT_OK(eb_source_spec_parse(text, &spec, &diag));
    ASSERT_EQ_INT(eb_source_open(&spec, NULL, &src, &diag), EB_ERR_IO);
    ASSERT_CONTAINS(diag.msg, p);
}

EB_TEST(imgdir_single_image_file)
{
    char bus[1024];
    shared_path_or_skip(bus, sizeof(bus), "datasets/samples/bus.jpg");
    struct eb_source *src = open_text(bus, NULL);
    ASSERT_EQ_INT(eb_source_count(src), 1);
    struct eb_diag diag = {0};
    struct eb_frame f;
    ASSERT_OK(eb_source_next(src, &f, &diag));
    ASSERT_STREQ(f.name, "bus.jpg");
    ASSERT_EQ_INT(f.width, 810);
    ASSERT_EQ_INT(f.height, 1080);
    ASSERT_EQ_INT(f.source_channels, 3);
    ASSERT_EQ_INT(eb_source_next(src, &f, &diag), EB_ERR_END);
    eb_source_destroy(src);
}

/* ------------------------------------------------------------------ video */

EB_TEST(video_pedestrians_size_count_limit_rewind)
{
    char path[1024], text[1100];
    shared_path_or_skip(path, sizeof(path), "datasets/video/pedestrians-street-1080p.mp4");
    snprintf(text, sizeof(text), "video=%s", path);
    struct eb_source *all = open_text(text, NULL);
    int64_t total = eb_source_count(all);
    printf("pedestrians-street-1080p.mp4: %lld frames\n", (long long)total);
    ASSERT_TRUE(total > 10);
    eb_source_destroy(all);

    struct eb_source_options opts = {.max_frames = 3};
    struct eb_source *src = open_text(path, &opts); /* bare path: video */
    ASSERT_EQ_INT(eb_source_count(src), 3);
    struct eb_diag diag = {0};
    struct eb_frame f;
    uint64_t hashes[3];
    for (int i = 0; i < 3; i++) {
        ASSERT_OK(eb_source_next(src, &f, &diag));
        ASSERT_EQ_INT(f.width, 1920);
        ASSERT_EQ_INT(f.height, 1080);
        ASSERT_EQ_INT(f.stride, 1920 * 3);
        ASSERT_EQ_INT(f.source_bits, 8);
        ASSERT_EQ_INT(f.source_channels, 3);
        ASSERT_TRUE(f.name == NULL);
        ASSERT_EQ_INT(f.index, i);
        hashes[i] = frame_hash(&f);
    }
    ASSERT_TRUE(hashes[0] != hashes[2]);
    ASSERT_EQ_INT(eb_source_next(src, &f, &diag), EB_ERR_END);
    ASSERT_OK(eb_source_rewind(src, &diag));
    for (int i = 0; i < 3; i++) {
        ASSERT_OK(eb_source_next(src, &f, &diag));
        ASSERT_TRUE(frame_hash(&f) == hashes[i]);
    }
    ASSERT_EQ_INT(eb_source_skipped(src), 0);
    eb_source_destroy(src);
}

EB_TEST(video_decodes_every_frame_it_counts)
{
    /* The smallest of the shared videos, decoded to the end. */
    const char *shared = shared_or_skip();
    static const char *const names[] = {"car-detection.mp4", "one-by-one-person-detection.mp4",
                                        "pedestrians-street-1080p.mp4"};
    for (size_t k = 0; k < 3; k++) {
        char path[1024], rel[256];
        snprintf(rel, sizeof(rel), "datasets/video/%s", names[k]);
        path_join(path, sizeof(path), shared, rel);
        struct stat sb;
        if (stat(path, &sb) != 0)
            continue;
        struct eb_source *src = open_text(path, NULL);
        struct eb_diag diag = {0};
        struct eb_frame f;
        int64_t n = 0;
        int w = 0, h = 0;
        uint64_t first = 0;
        enum eb_status st;
        while ((st = eb_source_next(src, &f, &diag)) == EB_OK) {
            if (n == 0) {
                w = f.width;
                h = f.height;
                first = frame_hash(&f);
            }
            ASSERT_EQ_INT(f.width, w);
            ASSERT_EQ_INT(f.height, h);
            n++;
        }
        ASSERT_EQ_INT(st, EB_ERR_END);
        printf("%s: %dx%d, %lld frames decoded, count %lld, skipped %lld\n", names[k], w, h,
               (long long)n, (long long)eb_source_count(src), (long long)eb_source_skipped(src));
        if (eb_source_count(src) >= 0)
            ASSERT_EQ_INT(n, eb_source_count(src));
        ASSERT_EQ_INT(eb_source_skipped(src), 0);
        /* Rewind after the real end (decoder drained) gives the first frame again. */
        ASSERT_OK(eb_source_rewind(src, &diag));
        ASSERT_OK(eb_source_next(src, &f, &diag));
        ASSERT_EQ_INT(f.index, 0);
        ASSERT_TRUE(frame_hash(&f) == first);
        eb_source_destroy(src);
        if (k == 0)
            return; /* one full decode is enough */
    }
    EB_SKIP("no shared video found");
}

EB_TEST(video_text_file_is_a_format_error)
{
    const char *tmp = eb_test_tmpdir();
    char p[600];
    path_join(p, sizeof(p), tmp, "x.mp4");
    write_bytes(p, "just some text, not a video\n", 28);
    struct eb_diag diag = {0};
    struct eb_source_spec spec;
    struct eb_source *src = NULL;
    ASSERT_OK(eb_source_spec_parse(p, &spec, &diag));
    ASSERT_EQ_INT(spec.kind, EB_SOURCE_VIDEO);
    ASSERT_EQ_INT(eb_source_open(&spec, NULL, &src, &diag), EB_ERR_FORMAT);
    ASSERT_TRUE(src == NULL);
    ASSERT_CONTAINS(diag.msg, "failed to open video ");
    ASSERT_CONTAINS(diag.msg, p);
    ASSERT_CONTAINS(diag.msg, "; ");

    eb_diag_clear(&diag);
    path_join(p, sizeof(p), tmp, "absent.mp4");
    char text[700];
    snprintf(text, sizeof(text), "video=%s", p);
    ASSERT_OK(eb_source_spec_parse(text, &spec, &diag));
    ASSERT_EQ_INT(eb_source_open(&spec, NULL, &src, &diag), EB_ERR_IO);
    ASSERT_CONTAINS(diag.msg, p);
}

EB_TEST(camera_absent_is_a_clear_error)
{
    struct stat sb;
    if (stat("/dev/video7", &sb) == 0)
        EB_SKIP("/dev/video7 exists on this machine");
    struct eb_diag diag = {0};
    struct eb_source_spec spec;
    struct eb_source *src = NULL;
    ASSERT_OK(eb_source_spec_parse("camera=7", &spec, &diag));
    struct eb_source_options opts = {0}; /* max_frames 0: the camera default applies */
    enum eb_status st = eb_source_open(&spec, &opts, &src, &diag);
    ASSERT_TRUE(st != EB_OK);
    ASSERT_TRUE(src == NULL);
    ASSERT_CONTAINS(diag.msg, "failed to open camera=7");
    ASSERT_CONTAINS(diag.msg, "/dev/video7");
    ASSERT_CONTAINS(diag.msg, "; ");
}

/* ------------------------------------------------------------------ synthetic */

EB_TEST(synthetic_rgb_is_deterministic_and_moves)
{
    struct eb_source_options a_opts = {.max_frames = 12, .seed = 42};
    struct eb_source_options c_opts = {.max_frames = 12, .seed = 43};
    struct eb_source *a = open_text("synthetic=320x240", &a_opts);
    struct eb_source *b = open_text("synthetic=320x240", &a_opts);
    struct eb_source *c = open_text("synthetic=320x240", &c_opts);
    ASSERT_EQ_INT(eb_source_count(a), 12);
    struct eb_diag diag = {0};
    struct eb_frame fa, fb, fc;
    uint64_t h[12];
    for (int i = 0; i < 12; i++) {
        ASSERT_OK(eb_source_next(a, &fa, &diag));
        h[i] = frame_hash(&fa);
        ASSERT_OK(eb_source_next(b, &fb, &diag));
        ASSERT_TRUE(frame_hash(&fb) == h[i]);
        ASSERT_OK(eb_source_next(c, &fc, &diag));
        ASSERT_TRUE(frame_hash(&fc) != h[i]);
        ASSERT_EQ_INT(fa.width, 320);
        ASSERT_EQ_INT(fa.height, 240);
        ASSERT_EQ_INT(fa.source_bits, 8);
        ASSERT_EQ_INT(fa.source_channels, 3);
        ASSERT_TRUE(!frame_is_gray(&fa));
    }
    ASSERT_TRUE(h[0] != h[11]); /* things move */
    ASSERT_EQ_INT(eb_source_next(a, &fa, &diag), EB_ERR_END);
    /* Frame i depends only on (seed, i): after a rewind, b skipping ahead does not matter. */
    ASSERT_OK(eb_source_rewind(a, &diag));
    ASSERT_OK(eb_source_next(a, &fa, &diag));
    ASSERT_TRUE(frame_hash(&fa) == h[0]);
    eb_source_destroy(a);
    eb_source_destroy(b);
    eb_source_destroy(c);

    struct eb_source_options dflt = {.max_frames = 0};
    struct eb_source *d = open_text("synthetic=64x64", &dflt);
    ASSERT_EQ_INT(eb_source_count(d), 300); /* the documented default for endless sources */
    eb_source_destroy(d);
}

EB_TEST(synthetic_thermal_has_warm_blobs)
{
    struct eb_source_options opts = {.max_frames = 4, .synth_style = EB_SYNTH_THERMAL, .seed = 7};
    struct eb_source *src = open_text("synthetic=640x512", &opts);
    struct eb_source *again = open_text("synthetic=640x512", &opts);
    struct eb_diag diag = {0};
    struct eb_frame f, g;
    uint64_t first = 0;
    for (int i = 0; i < 4; i++) {
        ASSERT_OK(eb_source_next(src, &f, &diag));
        ASSERT_OK(eb_source_next(again, &g, &diag));
        ASSERT_TRUE(frame_hash(&f) == frame_hash(&g));
        if (i == 0)
            first = frame_hash(&f);
        ASSERT_EQ_INT(f.source_bits, 16);
        ASSERT_EQ_INT(f.source_channels, 1);
        ASSERT_TRUE(frame_is_gray(&f));
        size_t bright = 0, dark = 0, n = (size_t)f.width * (size_t)f.height;
        for (size_t p = 0; p < n; p++) {
            uint8_t v = f.rgb[3 * p];
            bright += v >= 200;
            dark += v < 160;
        }
        ASSERT_TRUE(bright > n / 200); /* warm blobs exist ... */
        ASSERT_TRUE(bright < n / 4);   /* ... and are a minority */
        ASSERT_TRUE(dark > n / 2);     /* the background is cool */
    }
    ASSERT_TRUE(frame_hash(&f) != first); /* the blobs move */
    eb_source_destroy(src);
    eb_source_destroy(again);
}

/*
 * Hashes of the first n frames of `text`, checking that frame k carries index k and differs
 * from frame k-1 (moving content, also across the ring's wrap).
 */
static void synth_hashes(const char *text, const struct eb_source_options *opts, int n, uint64_t *h)
{
    struct eb_source *src = open_text(text, opts);
    struct eb_diag diag = {0};
    struct eb_frame f;
    for (int k = 0; k < n; k++) {
        ASSERT_OK(eb_source_next(src, &f, &diag));
        ASSERT_EQ_INT(f.index, k);
        h[k] = frame_hash(&f);
        if (k > 0)
            ASSERT_TRUE(h[k] != h[k - 1]);
    }
    eb_source_destroy(src);
}

/* The ring's length as the stream shows it: the first k > 0 whose frame repeats frame 0. */
static int ring_period(const uint64_t *h, int n)
{
    for (int k = 1; k < n; k++)
        if (h[k] == h[0])
            return k;
    return 0;
}

EB_TEST(synthetic_ring_repeats_the_drawn_sequence)
{
    enum { N = EB_SOURCE_SYNTH_RING_FRAMES + 8 };
    const enum eb_synth_style styles[] = {EB_SYNTH_RGB, EB_SYNTH_THERMAL};
    for (size_t t = 0; t < EB_ARRAY_LEN(styles); t++) {
        struct eb_source_options ring = {.max_frames = N, .synth_style = styles[t], .seed = 9};
        struct eb_source_options drawn = ring;
        drawn.synth_ring_frames = -1;
        uint64_t hr[N], hr2[N], hd[N];
        synth_hashes("synthetic=160x128", &ring, N, hr);
        synth_hashes("synthetic=160x128", &ring, N, hr2);
        synth_hashes("synthetic=160x128", &drawn, N, hd);
        for (int k = 0; k < N; k++) {
            ASSERT_TRUE(hr2[k] == hr[k]); /* same seed, same frames */
            /* Frame k is drawn frame k mod ring length: the ring changes no picture. */
            ASSERT_TRUE(hr[k] == hd[k % EB_SOURCE_SYNTH_RING_FRAMES]);
        }
        ASSERT_EQ_INT(ring_period(hr, N), EB_SOURCE_SYNTH_RING_FRAMES);
        ASSERT_EQ_INT(ring_period(hd, N), 0); /* drawn at read time: no frame repeats */

        /* A rewind restarts at the ring's first frame, wherever the stream was. */
        struct eb_source *src = open_text("synthetic=160x128", &ring);
        struct eb_diag diag = {0};
        struct eb_frame f;
        for (int k = 0; k < 35; k++)
            ASSERT_OK(eb_source_next(src, &f, &diag));
        ASSERT_OK(eb_source_rewind(src, &diag));
        for (int k = 0; k < 3; k++) {
            ASSERT_OK(eb_source_next(src, &f, &diag));
            ASSERT_EQ_INT(f.index, k);
            ASSERT_TRUE(frame_hash(&f) == hr[k]);
        }
        eb_source_destroy(src);
    }
}

/* Frames in the ring of `text` opened with `opts`. */
static int64_t ring_of(const char *text, const struct eb_source_options *opts)
{
    struct eb_source *src = open_text(text, opts);
    const int64_t n = eb_source_synth_ring_frames(src);
    eb_source_destroy(src);
    return n;
}

EB_TEST(synthetic_ring_is_capped_by_bytes_for_large_frames)
{
    /* 1920x1080: 6.2 MB a frame, so the 96 MiB cap holds 16 of the 32 (or of the 1000 asked). */
    enum { N = 18 };
    const size_t frame = (size_t)1920 * 1080 * 3;
    const int fit = (int)(EB_SOURCE_SYNTH_RING_BYTES / frame);
    ASSERT_TRUE(fit >= 2 && fit < N && fit < EB_SOURCE_SYNTH_RING_FRAMES);
    uint64_t h[N];
    struct eb_source_options opts = {.max_frames = N, .seed = 3};
    synth_hashes("synthetic=1920x1080", &opts, N, h);
    ASSERT_EQ_INT(ring_period(h, N), fit);
    opts.max_frames = 0;
    ASSERT_EQ_INT(ring_of("synthetic=1920x1080", &opts), fit);
    opts.synth_ring_frames = 1000;
    ASSERT_EQ_INT(ring_of("synthetic=1920x1080", &opts), fit);
    ASSERT_TRUE((size_t)ring_of("synthetic=1920x1080", &opts) * frame <=
                EB_SOURCE_SYNTH_RING_BYTES);
    /* Small frames: the asked number (up to max_frames, 300 by default), or the default. */
    ASSERT_EQ_INT(ring_of("synthetic=64x64", &opts), 300);
    opts.synth_ring_frames = 100;
    ASSERT_EQ_INT(ring_of("synthetic=64x64", &opts), 100);
    opts.synth_ring_frames = 0;
    ASSERT_EQ_INT(ring_of("synthetic=64x64", &opts), EB_SOURCE_SYNTH_RING_FRAMES);
    opts.synth_ring_frames = -1;
    ASSERT_EQ_INT(ring_of("synthetic=64x64", &opts), 0);
    /* A frame over half the cap (51.6 MB): still 2 frames, so consecutive frames differ. */
    ASSERT_TRUE((size_t)4096 * 4200 * 3 > EB_SOURCE_SYNTH_RING_BYTES / 2);
    struct eb_source_options big = {.max_frames = 3, .seed = 3};
    synth_hashes("synthetic=4096x4200", &big, 3, h);
    ASSERT_EQ_INT(ring_period(h, 3), 2);
    /* A ring never holds more frames than the source delivers. */
    struct eb_source_options short_run = {.max_frames = 5, .seed = 3, .synth_ring_frames = 3};
    synth_hashes("synthetic=64x64", &short_run, 5, h);
    ASSERT_EQ_INT(ring_period(h, 5), 3);
    short_run.synth_ring_frames = 0;
    ASSERT_EQ_INT(ring_of("synthetic=64x64", &short_run), 5);
}

/* ------------------------------------------------------------------ threads */

struct thread_job {
    const char *text;
    struct eb_source_options opts;
    uint64_t hash;
};

static void *run_job(void *arg)
{
    struct thread_job *j = arg;
    struct eb_source *src = open_text(j->text, &j->opts);
    struct eb_diag diag = {0};
    struct eb_frame f;
    j->hash = 0;
    while (eb_source_next(src, &f, &diag) == EB_OK)
        j->hash = j->hash * 31 + frame_hash(&f);
    eb_source_destroy(src);
    return NULL;
}

EB_TEST(two_sources_in_two_threads_match_sequential)
{
    struct thread_job jobs[2] = {
        {.text = "synthetic=160x120", .opts = {.max_frames = 20, .seed = 1}},
        {.text = "synthetic=160x128",
         .opts = {.max_frames = 20, .seed = 2, .synth_style = EB_SYNTH_THERMAL}},
    };
    uint64_t want[2];
    for (int i = 0; i < 2; i++) {
        run_job(&jobs[i]);
        want[i] = jobs[i].hash;
    }
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        ASSERT_EQ_INT(pthread_create(&t[i], NULL, run_job, &jobs[i]), 0);
    for (int i = 0; i < 2; i++)
        ASSERT_EQ_INT(pthread_join(t[i], NULL), 0);
    for (int i = 0; i < 2; i++)
        ASSERT_TRUE(jobs[i].hash == want[i]);
}

/*
 * Frames of `text` through a caller's output buffer of `cap` bytes (eb_source_set_output, as the
 * pipeline does with a GPU engine's page-locked frame buffer) against the same source without
 * one: the same pixels, delivered in the buffer exactly when they fit (3·w·h + 64 <= cap);
 * detached, the source's own buffer again. Returns how many frames came in the buffer.
 */
static int output_matches(const char *text, const struct eb_source_options *opts, size_t cap,
                          int n_frames)
{
    struct eb_source *a = open_text(text, opts), *b = open_text(text, opts);
    uint8_t *buf = malloc(cap);
    ASSERT_TRUE(buf != NULL);
    eb_source_set_output(b, buf, cap);
    struct eb_diag d = {0};
    struct eb_frame fa, fb;
    int in_buf = 0;
    for (int i = 0; i < n_frames; i++) {
        const enum eb_status sa = eb_source_next(a, &fa, &d), sb = eb_source_next(b, &fb, &d);
        ASSERT_EQ_INT(sb, sa);
        if (sa != EB_OK)
            break;
        ASSERT_EQ_INT(fb.width, fa.width);
        ASSERT_EQ_INT(fb.height, fa.height);
        ASSERT_EQ_INT(fb.stride, fa.stride);
        const size_t need = (size_t)fa.width * (size_t)fa.height * 3;
        ASSERT_EQ_INT(fb.rgb == buf, need + 64 <= cap);
        ASSERT_TRUE(fa.rgb != buf);
        ASSERT_TRUE(memcmp(fa.rgb, fb.rgb, need) == 0);
        in_buf += fb.rgb == buf;
    }
    eb_source_set_output(b, NULL, 0);
    ASSERT_OK(eb_source_rewind(b, &d));
    ASSERT_OK(eb_source_next(b, &fb, &d));
    ASSERT_TRUE(fb.rgb != buf);
    eb_source_destroy(a);
    eb_source_destroy(b);
    free(buf);
    return in_buf;
}

EB_TEST(synthetic_frames_decode_into_a_callers_buffer)
{
    struct eb_source_options rgb = {.max_frames = 6, .seed = 5};
    const size_t exact = (size_t)320 * 240 * 3 + 64;
    ASSERT_EQ_INT(output_matches("synthetic=320x240", &rgb, exact, 6), 6);
    ASSERT_EQ_INT(output_matches("synthetic=320x240", &rgb, exact - 1, 6), 0);
    struct eb_source_options th = {.max_frames = 4, .synth_style = EB_SYNTH_THERMAL, .seed = 7};
    ASSERT_EQ_INT(output_matches("synthetic=160x120", &th, (size_t)160 * 120 * 3 + 64, 4), 4);
    /* Past the ring's wrap, and drawn at read time (no ring) */
    struct eb_source_options wrap = {.max_frames = 7, .seed = 5, .synth_ring_frames = 3};
    ASSERT_EQ_INT(output_matches("synthetic=320x240", &wrap, exact, 7), 7);
    struct eb_source_options drawn = {.max_frames = 4, .seed = 5, .synth_ring_frames = -1};
    ASSERT_EQ_INT(output_matches("synthetic=320x240", &drawn, exact, 4), 4);
}

EB_TEST(images_and_video_decode_into_a_callers_buffer)
{
    char dir[1024], text[1100], path[1024];
    find_coco(dir, sizeof(dir));
    snprintf(text, sizeof(text), "image_dir=%s", dir);
    /* coco128 mixes sizes: those up to 640x480 come in the buffer, larger ones do not */
    struct eb_source_options opts = {.max_frames = 40};
    const int in_buf = output_matches(text, &opts, (size_t)640 * 480 * 3 + 64, 40);
    printf("coco128: %d of 40 images decoded into a 640x480 buffer\n", in_buf);
    ASSERT_TRUE(in_buf > 0 && in_buf < 40);
    shared_path_or_skip(path, sizeof(path), "datasets/video/pedestrians-street-1080p.mp4");
    snprintf(text, sizeof(text), "video=%s", path);
    struct eb_source_options v = {.max_frames = 8};
    ASSERT_EQ_INT(output_matches(text, &v, (size_t)1920 * 1080 * 3 + 64, 8), 8);
}

EB_TEST(destroy_accepts_null)
{
    eb_source_destroy(NULL);
    ASSERT_EQ_INT(eb_source_skipped(NULL), 0);
    ASSERT_EQ_INT(eb_source_count(NULL), -1);
}

struct stop_after {
    atomic_int *stop;
    uint64_t after_ns;
};

static void *set_stop_after(void *arg)
{
    const struct stop_after *sa = arg;
    eb_clock_sleep_ns(sa->after_ns);
    atomic_store(sa->stop, 15);
    return NULL;
}

EB_TEST(paced_synthetic_range_ends_at_a_frame_every_10_s)
{
    struct eb_source_spec s;
    struct eb_diag diag = {0};
    ASSERT_OK(eb_source_spec_parse("synthetic=64x64@0.1", &s, &diag));
    ASSERT_NEAR(s.synth_fps, EB_SOURCE_FPS_MIN, 0);
    ASSERT_OK(eb_source_spec_parse("synthetic=64x64@1000", &s, &diag));
    ASSERT_TRUE(eb_source_fps_ok(0.0) && eb_source_fps_ok(0.1) && eb_source_fps_ok(1000.0));
    ASSERT_TRUE(!eb_source_fps_ok(0.05) && !eb_source_fps_ok(1000.5) && !eb_source_fps_ok(-1.0));
}

EB_TEST(paced_synthetic_wait_ends_when_stopped)
{
    /* 0.1 FPS: frame 1 is due 10 s after frame 0; the stop comes after 50 ms. */
    atomic_int stop;
    atomic_init(&stop, 0);
    struct eb_source_options opts = {.stop = &stop};
    struct eb_source *src = open_text("synthetic=64x64@0.1", &opts);
    struct eb_frame fr;
    struct eb_diag diag = {0};
    ASSERT_OK(eb_source_next(src, &fr, &diag)); /* frame 0 is due at once */
    struct stop_after sa = {.stop = &stop, .after_ns = 50000000ull};
    pthread_t th;
    ASSERT_EQ_INT(pthread_create(&th, NULL, set_stop_after, &sa), 0);
    const uint64_t t0 = eb_clock_ns();
    ASSERT_EQ_INT(eb_source_next(src, &fr, &diag), EB_ERR_CANCELLED);
    const uint64_t waited = eb_clock_ns() - t0;
    pthread_join(th, NULL);
    ASSERT_CONTAINS(diag.msg, "stopped while waiting for synthetic frame 1");
    ASSERT_TRUE(waited < 5000000000ull); /* generous; the frame itself was due after 10 s */
    /* The stop stays set: the next call does not wait either. */
    struct eb_diag again = {0};
    ASSERT_EQ_INT(eb_source_next(src, &fr, &again), EB_ERR_CANCELLED);
    eb_source_destroy(src);
}

/* ------------------------------------------------------------------ network streams */

EB_TEST(spec_parse_network_urls)
{
    struct eb_diag diag = {0};
    struct eb_source_spec s;
    ASSERT_OK(eb_source_spec_parse("video=rtsp://10.0.0.2:554/live?udp", &s, &diag));
    ASSERT_EQ_INT(s.kind, EB_SOURCE_VIDEO);
    ASSERT_TRUE(s.network);
    ASSERT_TRUE(eb_source_spec_is_live(&s));
    ASSERT_STREQ(s.path, "rtsp://10.0.0.2:554/live?udp");
    char text[256];
    eb_source_spec_format(&s, text, sizeof(text));
    ASSERT_STREQ(text, "video=rtsp://10.0.0.2:554/live?udp");
    /* Bare URLs of every scheme, any case. */
    const char *bare[] = {"rtsp://h/x", "RTSPS://h/x", "http://h:8080/cam.mjpg", "https://h/a.ts",
                          "udp://127.0.0.1:5000"};
    for (size_t i = 0; i < sizeof(bare) / sizeof(bare[0]); i++) {
        ASSERT_OK(eb_source_spec_parse(bare[i], &s, &diag));
        ASSERT_EQ_INT(s.kind, EB_SOURCE_VIDEO);
        ASSERT_TRUE(s.network);
        ASSERT_STREQ(s.path, bare[i]);
    }
    /* A camera is live too; a file, an image folder and a synthetic scene are not. */
    ASSERT_OK(eb_source_spec_parse("camera=3", &s, &diag));
    ASSERT_TRUE(eb_source_spec_is_live(&s) && !s.network);
    ASSERT_OK(eb_source_spec_parse("video=clip.mp4", &s, &diag));
    ASSERT_TRUE(!eb_source_spec_is_live(&s) && !s.network);
    ASSERT_OK(eb_source_spec_parse("synthetic=64x64", &s, &diag));
    ASSERT_TRUE(!eb_source_spec_is_live(&s));
    ASSERT_TRUE(!eb_source_spec_is_live(NULL));
    expect_parse_error("video=ftp://h/x.mp4", EB_ERR_INVALID_ARG,
                       "URL scheme 'ftp' is not supported");
    expect_parse_error("ftp://h/x.mp4", EB_ERR_INVALID_ARG, "rtsp://, rtsps://, http://");
    expect_parse_error("video=rtsp://", EB_ERR_INVALID_ARG, "the URL names no host");
}

/* A TCP port on the loopback that accepts connections (the kernel completes them: it listens)
 * but never answers; its port in *port_out. */
static int silent_server(int *port_out)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 4) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0)
        EB_FAIL("cannot listen on the loopback");
    *port_out = ntohs(a.sin_port);
    return fd;
}

EB_TEST(network_server_that_never_answers_times_out)
{
    /* An RTSP and an HTTP server that accept and stay silent: the open gives up after the
     * source timeout with a line naming the stream and the wait, instead of hanging (the case's
     * own timeout is the bound). */
    int port;
    const int fd = silent_server(&port);
    const char *fmts[] = {"video=rtsp://127.0.0.1:%d/live", "video=http://127.0.0.1:%d/s.ts"};
    for (size_t i = 0; i < 2; i++) {
        char text[128];
        snprintf(text, sizeof(text), fmts[i], port);
        struct eb_diag diag = {0};
        struct eb_source_spec spec;
        struct eb_source *src = NULL;
        ASSERT_OK(eb_source_spec_parse(text, &spec, &diag));
        struct eb_source_options opts = {.timeout_s = 0.3, .reconnect = 0};
        ASSERT_EQ_INT(eb_source_open(&spec, &opts, &src, &diag), EB_ERR_IO);
        ASSERT_TRUE(src == NULL);
        ASSERT_CONTAINS(diag.msg, "failed to open stream ");
        ASSERT_CONTAINS(diag.msg, text + strlen("video="));
        ASSERT_CONTAINS(diag.msg, "no answer within 0.3 s");
        ASSERT_CONTAINS(diag.msg, "--source_timeout_s");
    }
    close(fd);
}

EB_TEST(network_refused_is_a_clear_error_and_no_stats_elsewhere)
{
    /* A port that was just free (bound, then closed): the connection is refused at once. */
    int port;
    close(silent_server(&port));
    char text[128];
    snprintf(text, sizeof(text), "rtsp://127.0.0.1:%d/live", port);
    struct eb_diag diag = {0};
    struct eb_source_spec spec;
    struct eb_source *src = NULL;
    ASSERT_OK(eb_source_spec_parse(text, &spec, &diag));
    struct eb_source_options opts = {.timeout_s = 5};
    ASSERT_EQ_INT(eb_source_open(&spec, &opts, &src, &diag), EB_ERR_IO);
    ASSERT_CONTAINS(diag.msg, "failed to open stream rtsp://127.0.0.1:");
    ASSERT_CONTAINS(diag.msg, "check the URL and the server");
    /* Sources that are not network streams report no reconnections. */
    struct eb_source_stream_stats ss = {.reconnects = 7};
    src = open_text("synthetic=64x64", NULL);
    eb_source_stream_stats(src, &ss);
    ASSERT_EQ_INT(ss.reconnects, 0);
    ASSERT_EQ_INT(ss.attempts, 0);
    ASSERT_EQ_INT(ss.frames_lost, 0);
    eb_source_destroy(src);
    eb_source_stream_stats(NULL, &ss);
    ASSERT_EQ_INT(ss.frames_lost, 0);
}

/* ------------------------------------------------------------------ live sources that stop */

EB_TEST(pipe_writer_that_stops_sending_times_out)
{
    /* A live source whose writer stops sending but stays (as a camera that stops delivering
     * frames, which a test cannot have without a V4L2 device): a named pipe fed 3 frames of
     * YUV4MPEG2 by this test, which keeps its write end open. The source delivers the 3 frames,
     * then the read gives up after the source timeout with a line naming the source and the
     * wait: no hang (the case's own timeout is the bound). */
    char fifo[512];
    path_join(fifo, sizeof(fifo), eb_test_tmpdir(), "live.y4m");
    if (mkfifo(fifo, 0600) != 0)
        EB_SKIP("cannot make a named pipe here");
    const int wfd = open(fifo, O_RDWR | O_NONBLOCK); /* the writer, open before the reader */
    ASSERT_TRUE(wfd >= 0);
    /* 3 frames of 64x64 (18 KiB, within the pipe's buffer): more than the 2 KiB FFmpeg reads
     * to recognise the format. */
    static const char header[] = "YUV4MPEG2 W64 H64 F25:1 Ip A1:1 C420jpeg\n";
    ASSERT_EQ_INT(write(wfd, header, sizeof(header) - 1), (int)sizeof(header) - 1);
    uint8_t yuv[64 * 64 * 3 / 2];
    for (int k = 0; k < 3; k++) {
        memset(yuv, 40 + 60 * k, 64 * 64);
        memset(yuv + 64 * 64, 128, sizeof(yuv) - 64 * 64);
        ASSERT_EQ_INT(write(wfd, "FRAME\n", 6), 6);
        ASSERT_EQ_INT(write(wfd, yuv, sizeof(yuv)), (int)sizeof(yuv));
    }
    char text[600];
    snprintf(text, sizeof(text), "video=%s", fifo);
    struct eb_source_spec spec;
    struct eb_diag diag = {0};
    ASSERT_OK(eb_source_spec_parse(text, &spec, &diag));
    ASSERT_TRUE(eb_source_spec_is_live(&spec));
    struct eb_source_options opts = {.timeout_s = 0.3};
    struct eb_source *src = NULL;
    ASSERT_OK(eb_source_open(&spec, &opts, &src, &diag));
    ASSERT_EQ_INT(eb_source_count(src), -1);
    struct eb_frame fr;
    int last = -1;
    for (int k = 0; k < 3; k++) {
        if (eb_source_next(src, &fr, &diag) != EB_OK)
            EB_FAIL("frame %d: %s", k, diag.msg);
        ASSERT_EQ_INT(fr.width, 64);
        ASSERT_EQ_INT(fr.height, 64);
        ASSERT_TRUE(fr.rgb[0] > last); /* the frames in the order written (brighter each) */
        last = fr.rgb[0];
    }
    ASSERT_EQ_INT(eb_source_next(src, &fr, &diag), EB_ERR_IO);
    ASSERT_CONTAINS(diag.msg, "failed to read video ");
    ASSERT_CONTAINS(diag.msg, "live.y4m: no data for 0.3 s");
    ASSERT_CONTAINS(diag.msg, "--source_timeout_s");
    struct eb_diag d2 = {0};
    ASSERT_EQ_INT(eb_source_rewind(src, &d2), EB_ERR_UNSUPPORTED);
    eb_source_destroy(src);
    close(wfd);
}
