# End-to-end checks of every detector family against the reference detections that
# ../shared/data/MANIFEST.md gives for datasets/samples/bus.jpg (810x1080), through
# `edgebench run --data` on a one-image dataset, on both backends: the head the graph is
# recognised as, the boxes (IoU >= 0.9 with each reference of the same class, no class the
# reference lacks) and native == ORT. Then `val` on coco128 for each models-fp32 family. Each
# case_* is one ctest entry.
#
# A reference that our built-in preprocessing cannot bring to IoU 0.9 is listed below with the
# IoU measured and why; the floor given there is the measured IoU less 0.05, so a regression of
# the family still fails. Everything else is held to 0.9.

BUS_W=810
BUS_H=1080

# bus_dataset: ./bus, a YOLO-layout dataset of bus.jpg (symlinked, never copied) with no labels
# (only the detections matter here; the model's class names name the classes).
bus_dataset() {
  mkdir -p bus/images/val bus/labels/val || fail "cannot create the dataset folder"
  ln -s "$DATA/datasets/samples/bus.jpg" bus/images/val/bus.jpg || fail "cannot link bus.jpg"
  : >bus/labels/val/bus.txt
}

# dets_of FILE: the COCO results in FILE as lines "class x1 y1 x2 y2 score".
dets_of() {
  local n i; n=$(jq_get "$1" "")
  for ((i = 0; i < n; i++)); do
    echo "$(jq_get "$1" "$i/category_id") $(jq_get "$1" "$i/bbox/0") $(jq_get "$1" "$i/bbox/1")" \
      "$(jq_get "$1" "$i/bbox/2") $(jq_get "$1" "$i/bbox/3") $(jq_get "$1" "$i/score")"
  done | awk '{ printf "%s %.3f %.3f %.3f %.3f %.5f\n", $1, $2, $3, $2 + $4, $3 + $5, $6 }'
}

# run_bus MODEL BACKEND CONF IOU: `edgebench run --data bus` into run_BACKEND/; leaves the
# detections as lines in dets_BACKEND.txt and checks that the backend asked for ran.
run_bus() {
  local model=$1 be=$2
  eb_run --mode rgb --model0 "$model" --data bus --backend "$be" --conf "$3" --iou "$4" \
    --frames 1 --warmup 0 --min_frames 0 --min_duration_s 0 --output "run_$be" --db none \
    --quiet >"out_$be.txt" 2>"err_$be.txt" || fail "$be: run exit $?: $(cat "err_$be.txt")"
  local d; d=$(run_dir "run_$be")
  "$EB_JSONQ" "$d/report.json" >/dev/null || fail "$be: report.json does not parse"
  [ "$(jq_get "$d/report.json" slots/0/backend)" = "$be" ] || fail "$be: another backend ran"
  cp "$d/report.json" "report_$be.json"
  dets_of "$d/detections_rgb.json" >"dets_$be.txt"
}

# check_head BACKEND LAYOUT FAMILY: the slot decoded with the LAYOUT adapter, FAMILY profile,
# recognised from the graph (not forced).
check_head() {
  local r="report_$1.json"
  [ "$(jq_get "$r" slots/0/layout)" = "$2" ] ||
    fail "$1: head $(jq_get "$r" slots/0/layout), expected $2"
  [ "$(jq_get "$r" slots/0/model_profile/family)" = "$3" ] ||
    fail "$1: family $(jq_get "$r" slots/0/model_profile/family), expected $3"
  [ "$(jq_get "$r" slots/0/model_profile/source)" = built-in ] || fail "$1: profile not built-in"
}

# check_refs BACKEND REFS: REFS holds one reference per line, "class x1 y1 x2 y2 floor why..."
# (MANIFEST boxes, [x1,y1,x2,y2] in image pixels, clipped to the image here; floor = the IoU
# our best detection of that class must reach, "-" for a reference we do not find, with the
# reason). Also: no detection of a class that no reference has.
check_refs() {
  local out
  out=$(awk -v W="$BUS_W" -v H="$BUS_H" '
    function clip(v, hi) { return v < 0 ? 0 : (v > hi ? hi : v) }
    function iou(a1, b1, a2, b2, c1, d1, c2, d2,   iw, ih, i) {
      iw = (a2 < c2 ? a2 : c2) - (a1 > c1 ? a1 : c1); ih = (b2 < d2 ? b2 : d2) - (b1 > d1 ? b1 : d1)
      if (iw <= 0 || ih <= 0) return 0
      i = iw * ih
      return i / ((a2 - a1) * (b2 - b1) + (c2 - c1) * (d2 - d1) - i)
    }
    FNR == NR { n++; c[n] = $1; x1[n] = $2; y1[n] = $3; x2[n] = $4; y2[n] = $5; next }
    {
      rc[$1] = 1
      r1 = clip($2, W); s1 = clip($3, H); r2 = clip($4, W); s2 = clip($5, H)
      best = 0
      for (i = 1; i <= n; i++)
        if (c[i] == $1) { v = iou(r1, s1, r2, s2, x1[i], y1[i], x2[i], y2[i]); if (v > best) best = v }
      if ($6 != "-" && best < $6)
        printf "reference class %s [%s,%s,%s,%s]: best IoU %.3f < %s; ", $1, $2, $3, $4, $5, best, $6
    }
    END {
      for (i = 1; i <= n; i++)
        if (!(c[i] in rc)) printf "class %s detected, not in the reference; ", c[i]
    }' "dets_$1.txt" <(echo "$2"))
  [ -z "$out" ] || fail "$1: $out detections: $(tr '\n' ';' <"dets_$1.txt")"
}

# check_counts BACKEND SPEC: SPEC "class:count ..." is exactly what was detected.
check_counts() {
  local got; got=$(awk '{ n[$1]++ } END { for (c in n) print c ":" n[c] }' "dets_$1.txt" | sort | xargs)
  [ "$got" = "$2" ] || fail "$1: detected $got, expected $2"
}

# check_same IOU_MIN SCORE_TOL: native and ORT found the same detections: same count, and each
# native detection has an unused ORT one of its class with IoU >= IOU_MIN and |score diff| <=
# SCORE_TOL (matched greedily by IoU, as scores that tie may come in either order).
check_same() {
  local out
  out=$(awk -v imin="$1" -v stol="$2" '
    function iou(a1, b1, a2, b2, c1, d1, c2, d2,   iw, ih, i) {
      iw = (a2 < c2 ? a2 : c2) - (a1 > c1 ? a1 : c1); ih = (b2 < d2 ? b2 : d2) - (b1 > d1 ? b1 : d1)
      if (iw <= 0 || ih <= 0) return 0
      i = iw * ih
      return i / ((a2 - a1) * (b2 - b1) + (c2 - c1) * (d2 - d1) - i)
    }
    FNR == NR { n++; c[n] = $1; x1[n] = $2; y1[n] = $3; x2[n] = $4; y2[n] = $5; s[n] = $6; next }
    {
      m++; best = 0; bi = 0
      for (i = 1; i <= n; i++) {
        if (used[i] || c[i] != $1) continue
        v = iou($2, $3, $4, $5, x1[i], y1[i], x2[i], y2[i])
        if (v > best) { best = v; bi = i }
      }
      if (bi == 0 || best < imin) { printf "native class %s [%s,%s,%s,%s]: ORT IoU %.4f; ", $1, $2, $3, $4, $5, best; next }
      used[bi] = 1
      d = $6 - s[bi]; if (d < 0) d = -d
      if (d > stol + 1e-9) printf "class %s score native %s ORT %s; ", $1, $6, s[bi]
    }
    END { if (m != n) printf "native %d detections, ORT %d; ", m, n }' dets_ort.txt dets_native.txt)
  [ -z "$out" ] || fail "native vs ORT: $out"
}

# family_bus MODEL CONF IOU LAYOUT FAMILY REFS: the head, the references and native == ORT
# (IoU >= 0.99, scores within 1e-3) for an fp32 model.
family_bus() {
  need_shared; need_ort
  bus_dataset
  local be
  for be in native ort; do
    run_bus "$DATA/models-fp32/$1" "$be" "$2" "$3"
    check_head "$be" "$4" "$5"
    check_refs "$be" "$6"
  done
  check_same 0.99 0.001
}

# Classes: 0 person, 5 bus.

case_yolox_nano_bus() {
  # Weak person (0.28 in the MANIFEST, 0.255 here): IoU 0.861 on both backends; its top edge
  # (596 vs 559) is where the person is cut by the image border and the score is near the
  # threshold. The YOLOX geometry (int() sizes: 312x416 at the top-left, boxes / r) is exact
  # for bus.jpg (810 * 416/1080 = 312.0), so what is left is the resize and the JPEG decoder.
  family_bus yolox_nano_416_fp32.onnx 0.25 0.45 yolox yolox "5 5 229 805 737 0.9
0 56 387 211 900 0.9
0 217 411 349 856 0.9
0 683 448 810 875 0.9
0 1 596 81 885 0.81 weak person, measured 0.861"
}

case_nanodet_m_bus() {
  family_bus nanodet_m_416_fp32.onnx 0.35 0.6 nanodet nanodet "5 37 232 795 719 0.9
0 227 407 352 806 0.9
0 695 417 813 881 0.9
0 44 400 228 899 0.9"
}

case_yolov5lite_e_bus() {
  # We find one more person (0.34 [187,336,425,829], class person: allowed).
  family_bus yolov5lite_e_320_fp32.onnx 0.25 0.45 v5-raw yolov5-raw "5 45 221 798 753 0.9
0 57 411 229 887 0.9
0 697 450 813 889 0.9
0 215 434 347 859 0.9
0 0 584 74 879 0.9"
}

case_yolo_fastestv2_bus() {
  # Built-in profile: cv2.INTER_LINEAR stretch, as the MANIFEST and upstream test.py say. Two
  # references are not reached with it: person 0.73 [218,397,343,841] (ours 0.81
  # [224,403,342,811], IoU 0.870) and the weak person 0.34 [-1,598,59,858] (below 0.3 here).
  # With `interp = area` (INTER_AREA) all four match at IoU >= 0.965 with scores within 0.05
  # (0.942/0.853/0.777/0.342 vs 0.94/0.83/0.73/0.34): the references were most likely made
  # with an area-averaging shrink, not the INTER_LINEAR the text states.
  family_bus yolo_fastestv2_352_fp32.onnx 0.3 0.4 fastestv2 yolo-fastestv2 "0 41 400 222 893 0.9
5 37 207 803 775 0.9
0 218 397 343 841 0.82 INTER_LINEAR vs the reference's shrink, measured 0.870
0 -1 598 59 858 - weak person (0.34) below the threshold with INTER_LINEAR"
}

case_fastestdet_bus() {
  # The bus: ours 0.76 [81,201,791,771] vs 0.71 [24,169,822,798], IoU 0.817. FastestDet's
  # sizes are sigmoid-normalised to the whole image, so a small change of the logit moves the
  # box a lot; INTER_LINEAR instead of INTER_AREA gives the same bus box (0.817), so it is the
  # score ranking between neighbouring cells, not the shrink. The person 0.53
  # [702,274,858,909] (reaching past the image's right edge) scores below 0.5 here (with
  # INTER_LINEAR it is found at IoU 0.838).
  family_bus fastestdet_352_fp32.onnx 0.5 0.45 fastestdet fastestdet "0 42 386 214 903 0.9
0 212 403 339 853 0.9
5 24 169 822 798 0.77 sigmoid-normalised box sizes, measured 0.817
0 -24 556 66 852 0.9
0 702 274 858 909 - weak person (0.53) below 0.5 here"
}

# ultra_bus MODEL SCORE_TOL IOU_MIN: an Ultralytics model (MANIFEST: conf 0.25, NMS 0.45, "bus +
# 4 persons", no boxes given): exactly one bus and four persons on both backends, native ==
# ORT within the given tolerances.
ultra_bus() {
  need_shared; need_ort
  bus_dataset
  local be
  for be in native ort; do
    run_bus "$DATA/models/$1" "$be" 0.25 0.45
    check_head "$be" v8 ultralytics
    check_counts "$be" "0:4 5:1"
  done
  check_same "$3" "$2"
}

case_yolov8n_int8_qdq_bus() {
  ultra_bus yolov8n_int8_qdq.onnx 0.001 0.99
}

# Dynamic int8 (DynamicQuantizeLinear + ConvInteger): the activation scale is computed per frame
# from the tensor's min/max, and a value one rounding step apart on one backend goes on through
# every later quantised layer, so native and ORT differ more than for float models (measured on
# bus.jpg, x86-64: scores up to 0.034 apart for yolo11n, box IoU down to 0.937 for
# yolov8n_320). Floors: the measured worst less a margin.
case_yolov8n_int8_dynamic_bus() {
  ultra_bus yolov8n_int8_dynamic.onnx 0.03 0.95
}

case_yolov8n_320_int8_dynamic_bus() {
  ultra_bus yolov8n_320_int8_dynamic.onnx 0.03 0.9
}

case_yolo11n_320_int8_dynamic_bus() {
  ultra_bus yolo11n_320_int8_dynamic.onnx 0.06 0.95
}

# family_val MODEL MAP50_95 MAP50: `edgebench val` on coco128 (all 128 images, backend auto,
# which is native for these fp32 models) gives mAP50-95 and mAP50 within 0.03 of what was
# measured (native and ORT give the same figures to 4 decimals on x86-64; 0.03 leaves room for
# another ISA's float rounding moving detections near the thresholds, while a wrong
# preprocessing costs more: feeding RGB instead of BGR (--model_profile with color = rgb) drops
# YOLOX-Nano from 0.338 to 0.288 and Yolo-FastestV2 from 0.178 to 0.139). coco128 is 128 images of COCO train2017, so the figures are above the
# families' published COCO val2017 ones (docs/model-profiles.md, "Families"); > 0.10 is the
# floor below which a model is misread, whatever the band.
family_val() {
  need_shared
  "$EB_BIN" val --model "$DATA/models-fp32/$1" --data "$DATA/datasets/coco128" --out out \
    --quiet >stdout.txt 2>err.txt || fail "val exit $?: $(cat err.txt)"
  [ "$(jq_get out/val.json metrics/images)" = 128 ] || fail "128 images scored"
  local map map50; map=$(jq_get out/val.json metrics/map); map50=$(jq_get out/val.json metrics/map50)
  awk -v m="$map" -v w="$2" -v m5="$map50" -v w5="$3" 'BEGIN {
    d = m - w; e = m5 - w5; exit !(m > 0.10 && d <= 0.03 && d >= -0.03 && e <= 0.03 && e >= -0.03) }' ||
    fail "$1: mAP50-95 $map (measured $2), mAP50 $map50 (measured $3): outside +-0.03"
}

case_yolox_nano_val_coco128() { family_val yolox_nano_416_fp32.onnx 0.3381 0.5091; }
case_nanodet_m_val_coco128() { family_val nanodet_m_416_fp32.onnx 0.3029 0.4686; }
case_yolov5lite_e_val_coco128() { family_val yolov5lite_e_320_fp32.onnx 0.2545 0.4157; }
case_yolo_fastestv2_val_coco128() { family_val yolo_fastestv2_352_fp32.onnx 0.1776 0.2849; }
case_fastestdet_val_coco128() { family_val fastestdet_352_fp32.onnx 0.1952 0.3094; }
