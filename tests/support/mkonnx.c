/* eb_mkonnx PRESET FILE: writes one of the synthesized detector models of onnx_build.h
 * (detr, detr-sigmoid, end2end, v5, v5-raw, unknown, native-refused) for the shell tests. */
#include <stdio.h>
#include <stdlib.h>

#include "onnx_build.h"

int main(int argc, char **argv)
{
    struct eb_test_head_model m;
    if (argc != 3 || !eb_test_head_model_preset(argv[1], &m)) {
        fprintf(stderr, "usage: eb_mkonnx detr|detr-sigmoid|end2end|v5|v5-raw|unknown|"
                        "native-refused FILE\n");
        return 2;
    }
    size_t len = 0;
    uint8_t *bytes = eb_test_head_model_build(&m, &len);
    if (bytes == NULL) {
        fprintf(stderr, "eb_mkonnx: out of memory\n");
        return 1;
    }
    FILE *f = fopen(argv[2], "wb");
    int ok = f != NULL && fwrite(bytes, 1, len, f) == len;
    if (f != NULL && fclose(f) != 0)
        ok = 0;
    free(bytes);
    if (!ok) {
        fprintf(stderr, "eb_mkonnx: cannot write %s\n", argv[2]);
        return 1;
    }
    return 0;
}
