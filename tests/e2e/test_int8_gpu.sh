# int8 on the native CUDA device as a user runs it: `val --device cuda --precision int8` against
# the CPU's int8 path on coco128's train2017 images, for the shared QDQ yolov8n (ONNX Runtime's
# placement: Q/DQ around every conv, so the convs requantise to bytes) and for its float twin
# quantised by edgebench (TensorRT's placement: the convs' outputs are float, and on the GPU each
# is fused into the next conv's QuantizeLinear), and the shared model once more with `--qdq int8`
# and the float rest in fp32. mAP50-95 within 0.5 points (0.005) of the CPU's. Each case skips without a usable GPU (the CUDA device's own message).

# val_map MODEL OUT [ARGS...]: mAP50-95 of MODEL on coco128's train2017 images, native backend.
val_map() { coco_map "$@" --backend native; }

need_gpu() {
  "$EB_BIN" val --model "$1" --data "$DATA/datasets/coco128" --backend native --max_images 1 --device cuda \
    --precision int8 --out probe --quiet >/dev/null 2>probe.err && return 0
  grep -Eq "no CUDA GPU is usable|has no CUDA device" probe.err && skip "$(head -1 probe.err)"
  fail "val on cuda: $(cat probe.err)"
}


# gpu_vs_cpu MODEL [ARGS...]: mAP on cuda (with ARGS; default --precision int8) and on the CPU's
# int8 path, and what the report says ran.
gpu_vs_cpu() {
  local m=$1 g c
  shift
  [ $# -gt 0 ] || set -- --precision int8
  g=$(val_map "$m" vg --device cuda "$@") || exit 1
  c=$(val_map "$m" vc --device cpu --precision int8) || exit 1
  echo "$(basename "$m"): mAP50-95 cuda $* $g, int8 cpu $c"
  echo "cuda: $(jq_get vg/val.json model/int8_nodes); computed in $(jq_get vg/val.json model/compute_precision)"
  near "$g" "$c" 0.005 || fail "cuda $* $g vs int8 on the CPU $c"
  [ "$(jq_get vg/val.json model/qdq_path)" = "int8 kernels" ] || fail "cuda ran int8 kernels"
  jq_get vg/val.json model/int8_nodes | grep -Eq "^[1-9][0-9]* int8 \([1-9][0-9]* on tensor cores\)" ||
    fail "int8 nodes: $(jq_get vg/val.json model/int8_nodes)"
}

case_shared_qdq_yolov8n_cuda_int8_map() {
  need_shared
  need_gpu "$DATA/models/yolov8n_int8_qdq.onnx"
  gpu_vs_cpu "$DATA/models/yolov8n_int8_qdq.onnx"
}

case_requantised_twin_cuda_int8_map() {
  need_shared
  need_gpu "$DATA/models/yolov8n_int8_qdq.onnx"
  "$EB_BIN" model dequantize "$DATA/models/yolov8n_int8_qdq.onnx" -o twin.onnx >/dev/null 2>err.txt ||
    fail "dequantize: $(cat err.txt)"
  "$EB_BIN" quantize --model twin.onnx --calib "$DATA/datasets/coco128/images/val2017" \
    --calib_images 32 -o q.onnx >/dev/null 2>err.txt || fail "quantize: $(cat err.txt)"
  gpu_vs_cpu q.onnx
}

# `--qdq int8` with the float rest in fp32 (not fp16): the float nodes stay NCHW, so each int8
# conv reads an NCHW input (transposed, or read in place by the image's conv) and writes NCHW
# floats or bytes through strides. The same mAP as the CPU's int8 path within 0.5 points.
case_shared_qdq_yolov8n_cuda_fp32_qdq_int8_map() {
  need_shared
  need_gpu "$DATA/models/yolov8n_int8_qdq.onnx"
  gpu_vs_cpu "$DATA/models/yolov8n_int8_qdq.onnx" --qdq int8
}
