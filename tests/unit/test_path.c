/* eb_path_base and eb_path_dir: the file name the reports, history and compare rows show, and
 * the folder a file is written next to. */
#include "eb/path.h"
#include "eb_test.h"

EB_TEST(base_is_the_last_component)
{
    ASSERT_STREQ(eb_path_base("models/yolov8n.onnx"), "yolov8n.onnx");
    ASSERT_STREQ(eb_path_base("/abs/dir/img_001.jpg"), "img_001.jpg");
    ASSERT_STREQ(eb_path_base("yolov8n.onnx"), "yolov8n.onnx");
    ASSERT_STREQ(eb_path_base("/model.onnx"), "model.onnx");
    ASSERT_STREQ(eb_path_base("embedded:yolov8n"), "embedded:yolov8n");
    /* a folder with its trailing slash names itself rather than "" */
    ASSERT_STREQ(eb_path_base("runs/"), "runs/");
    ASSERT_STREQ(eb_path_base(""), "");
}

EB_TEST(dir_is_the_folder_or_dot)
{
    char buf[64];
    eb_path_dir("models/yolov8n.onnx", buf, sizeof(buf));
    ASSERT_STREQ(buf, "models");
    eb_path_dir("yolov8n.onnx", buf, sizeof(buf));
    ASSERT_STREQ(buf, ".");
    eb_path_dir("/model.onnx", buf, sizeof(buf));
    ASSERT_STREQ(buf, "/");
    eb_path_dir("/a/b/c.json", buf, sizeof(buf));
    ASSERT_STREQ(buf, "/a/b");
}
