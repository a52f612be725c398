#!/usr/bin/env python3
"""The peer of bench_gpu: an ONNX graph executed op by op by PyTorch eager on the GPU.

Reads the ONNX file with the `onnx` package, keeps its initializers as CUDA tensors in the
precision asked for (fp16 by default; cuDNN convolutions with torch.backends.cudnn.benchmark),
and interprets the nodes in file order with torch functions, one call per node, as a Python
user's tooling would. The pipeline per frame matches bench_gpu's stages: a uint8 1920x1080 RGB
frame (pinned host memory) -> GPU -> letterbox (bilinear resize, pad 114, /255) -> the graph ->
decode (conf 0.25) + class-aware NMS (IoU 0.7, torchvision when present, else a torch loop) ->
boxes on the host.

Prints a table line per measurement to stderr and one JSON line to stdout:
  {"peer": "torch-eager fp16", "compute_p50_ms": .., "compute_p99_ms": .., "e2e_p50_ms": ..,
   "e2e_p99_ms": .., "torch": "..", "device": ".."}
compute = CUDA events around the graph; e2e = host clock around the whole frame.

Usage: peer_torch.py --model FILE.onnx [--frames N] [--warmup N] [--precision fp16|fp32]
"""
import argparse
import json
import sys
import time

import onnx
import onnx.numpy_helper
import torch
import torch.nn.functional as F

try:
    import torchvision.ops

    HAVE_TV = True
except ImportError:  # torchvision is optional
    HAVE_TV = False

FRAME_W, FRAME_H = 1920, 1080


def attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


class Graph:
    def __init__(self, path, dtype, dev):
        m = onnx.load(path)
        self.g = m.graph
        self.dtype = dtype
        self.consts = {}
        for t in self.g.initializer:
            a = onnx.numpy_helper.to_array(t)
            x = torch.from_numpy(a.copy()).to(dev)
            if x.is_floating_point():
                x = x.to(dtype)
            self.consts[t.name] = x
        self.nodes = [(n.op_type, list(n.input), list(n.output), attrs(n)) for n in self.g.node]
        self.input = self.g.input[0].name
        self.outputs = [o.name for o in self.g.output]
        shp = self.g.input[0].type.tensor_type.shape.dim
        self.in_h, self.in_w = shp[2].dim_value, shp[3].dim_value

    def ints(self, env, name):
        return [int(v) for v in env[name].flatten().tolist()]

    def run(self, x):
        env = dict(self.consts)
        env[self.input] = x
        for op, ins, outs, a in self.nodes:
            v = [env[i] if i else None for i in ins]
            if op == "Conv":
                p = a.get("pads", [0, 0, 0, 0])
                y = F.conv2d(v[0], v[1], v[2] if len(v) > 2 else None, a.get("strides", [1, 1]),
                             (p[0], p[1]), a.get("dilations", [1, 1]), a.get("group", 1))
            elif op == "Sigmoid":
                y = torch.sigmoid(v[0])
            elif op == "Mul":
                y = v[0] * v[1]
            elif op == "Add":
                y = v[0] + v[1]
            elif op == "Sub":
                y = v[0] - v[1]
            elif op == "Div":
                y = v[0] / v[1]
            elif op == "Concat":
                y = torch.cat(v, dim=a["axis"])
            elif op == "Split":
                sizes = self.ints(env, ins[1]) if len(ins) > 1 and ins[1] else a.get("split")
                if sizes is None:
                    n = len(outs)
                    sizes = [v[0].shape[a.get("axis", 0)] // n] * n
                ys = torch.split(v[0], sizes, dim=a.get("axis", 0))
                for o, t in zip(outs, ys):
                    env[o] = t
                continue
            elif op == "Reshape":
                shape = self.ints(env, ins[1])
                shape = [v[0].shape[i] if s == 0 else s for i, s in enumerate(shape)]
                y = v[0].reshape(shape)
            elif op == "Transpose":
                y = v[0].permute(a["perm"])
            elif op == "Softmax":
                y = torch.softmax(v[0], dim=a.get("axis", -1))
            elif op == "MaxPool":
                p = a.get("pads", [0, 0, 0, 0])
                y = F.max_pool2d(v[0], a["kernel_shape"], a.get("strides", a["kernel_shape"]),
                                 (p[0], p[1]), a.get("dilations", [1, 1]))
            elif op == "Resize":
                scales = v[2].float().tolist() if len(v) > 2 and v[2] is not None and v[2].numel() else None
                if scales:
                    y = F.interpolate(v[0], scale_factor=scales[2:], mode="nearest")
                else:
                    y = F.interpolate(v[0], size=self.ints(env, ins[3])[2:], mode="nearest")
            elif op == "Slice":
                starts, ends = self.ints(env, ins[1]), self.ints(env, ins[2])
                axes = self.ints(env, ins[3]) if len(ins) > 3 and ins[3] else list(range(len(starts)))
                steps = self.ints(env, ins[4]) if len(ins) > 4 and ins[4] else [1] * len(starts)
                idx = [slice(None)] * v[0].dim()
                for s, e, ax, st in zip(starts, ends, axes, steps):
                    idx[ax] = slice(s, min(e, v[0].shape[ax]), st)
                y = v[0][tuple(idx)]
            elif op == "MatMul":
                y = torch.matmul(v[0], v[1])
            else:
                raise SystemExit(f"peer_torch: op {op} is not interpreted")
            env[outs[0]] = y
        return [env[o] for o in self.outputs]


def letterbox(frame_gpu, h, w, dtype):
    r = min(h / FRAME_H, w / FRAME_W)
    nh, nw = round(FRAME_H * r), round(FRAME_W * r)
    top, left = round((h - nh) / 2 - 0.1), round((w - nw) / 2 - 0.1)
    x = frame_gpu.permute(2, 0, 1).unsqueeze(0).float()
    x = F.interpolate(x, size=(nh, nw), mode="bilinear", align_corners=False)
    out = torch.full((1, 3, h, w), 114.0, device=x.device)
    out[:, :, top:top + nh, left:left + nw] = x
    return (out / 255.0).to(dtype)


def nms(boxes, scores, cls, iou):
    if HAVE_TV:
        return torchvision.ops.batched_nms(boxes.float(), scores.float(), cls, iou)
    off = boxes + (cls.to(boxes.dtype) * 7680.0)[:, None]  # class-aware by offset
    order = scores.argsort(descending=True)
    keep = []
    while order.numel() > 0:
        i = order[0]
        keep.append(i)
        if order.numel() == 1:
            break
        b = off[order[1:]]
        xx1 = torch.maximum(off[i, 0], b[:, 0])
        yy1 = torch.maximum(off[i, 1], b[:, 1])
        xx2 = torch.minimum(off[i, 2], b[:, 2])
        yy2 = torch.minimum(off[i, 3], b[:, 3])
        inter = (xx2 - xx1).clamp(min=0) * (yy2 - yy1).clamp(min=0)
        area = lambda t: (t[..., 2] - t[..., 0]) * (t[..., 3] - t[..., 1])
        o = inter / (area(off[i]) + area(b) - inter + 1e-9)
        order = order[1:][o <= iou]
    return torch.stack(keep) if keep else torch.empty(0, dtype=torch.long, device=boxes.device)


def postprocess(out, conf=0.25, iou=0.7, max_det=300):
    p = out[0]  # [4 + nc, N]
    scores, cls = p[4:].max(dim=0)
    m = scores > conf
    b, s, c = p[:4, m].T, scores[m], cls[m]
    xyxy = torch.cat([b[:, :2] - b[:, 2:] / 2, b[:, :2] + b[:, 2:] / 2], dim=1)
    k = nms(xyxy, s, c, iou)[:max_det]
    return torch.cat([xyxy[k].float(), s[k, None].float(), c[k, None].float()], dim=1).cpu()


def pct(v, q):
    v = sorted(v)
    pos = (len(v) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--frames", type=int, default=500)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--precision", choices=["fp16", "fp32"], default="fp16")
    o = ap.parse_args()
    if not torch.cuda.is_available():
        print("peer_torch: no CUDA device", file=sys.stderr)
        return 77
    torch.backends.cudnn.benchmark = True
    dev = torch.device("cuda")
    dtype = torch.float16 if o.precision == "fp16" else torch.float32
    g = Graph(o.model, dtype, dev)
    yy, xx = torch.meshgrid(torch.arange(FRAME_H), torch.arange(FRAME_W), indexing="ij")
    box = ((xx // 240) + (yy // 180)) % 2 == 1
    frame = torch.stack([torch.where(box, xx * 255 // FRAME_W, torch.full_like(xx, 40)),
                         torch.where(box, torch.full_like(xx, 200), yy * 255 // FRAME_H),
                         (xx ^ yy) & 0xFF], dim=2).to(torch.uint8).pin_memory()
    ev0, ev1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    compute, e2e = [], []
    n_boxes = 0
    with torch.inference_mode():
        for i in range(o.warmup + o.frames):
            t0 = time.perf_counter()
            x = letterbox(frame.to(dev, non_blocking=True), g.in_h, g.in_w, dtype)
            ev0.record()
            out = g.run(x)
            ev1.record()
            dets = postprocess(out[0])
            t1 = time.perf_counter()
            if i >= o.warmup:
                compute.append(ev0.elapsed_time(ev1))
                e2e.append((t1 - t0) * 1000.0)
                n_boxes = dets.shape[0]
    r = {
        "peer": f"torch-eager {o.precision}",
        "compute_p50_ms": round(pct(compute, 50), 4),
        "compute_p99_ms": round(pct(compute, 99), 4),
        "e2e_p50_ms": round(pct(e2e, 50), 4),
        "e2e_p99_ms": round(pct(e2e, 99), 4),
        "boxes": n_boxes,
        "nms": "torchvision" if HAVE_TV else "torch loop",
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(0),
    }
    print(f"peer_torch {o.model}: {r}", file=sys.stderr)
    print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
