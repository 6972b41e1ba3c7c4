"""onnxruntime_sdpa.py: ONNX Runtime's attention operators as an attncheck exec worker (CPU).

    attncheck suite --kernel 'exec-persistent:python -m attncheck.worker onnxruntime' --suite ci
    attncheck suite --kernel 'exec-persistent:python -m attncheck.worker onnxruntime --op gqa' --suite ci

Each case becomes a one-node ONNX model run by an InferenceSession on CPUExecutionProvider:
  --op attention  the standard Attention op of opset 23: Q, K, V [B, H, T, D], GQA by
                  q_num_heads/kv_num_heads, is_causal (top-left), a boolean attn_mask for
                  bottom-right causal masks, windows and boolean masks, a float attn_mask for a bias,
                  the scale and softcap attributes (float32). A row with no visible key gives 0.
  --op gqa        com.microsoft GroupQueryAttention (the decoder's op): always causal, bottom-right
                  when tq < tk (the first tk - tq keys go in as the past cache), [B, T, H·D] packed,
                  local_window_size (a left window), softcap, scale; f16 and f32; head dims a
                  multiple of 8, V's as K's; batch 1 for several queries after a cache.
  --op mha        com.microsoft MultiHeadAttention: [B, T, H·D] packed, no GQA, attention_bias for
                  a bias, unidirectional for a causal mask with tq = tk (with tq != tk its
                  last row sees every key: refused; --mha-any-causal sends it as top-left causal,
                  to replay docs/frameworks.md's case), scale.
No LSE. The attributes are float32: a stored scale or softcap float32 does not hold is refused (the
default scale is the op's own, no attribute), and so is
a scale <= 0 by the Attention op (ONNX Runtime: "scale must be greater than 0 if specified"). f16 computes Q·Kᵀ into
float16 scores (the fp16-cublas class: measured, docs/frameworks.md).
"""
import argparse
import sys

try:
    from . import protocol as attncheck_worker
    from .jax_sdpa import _visible
except ImportError:
    import protocol as attncheck_worker
    from jax_sdpa import _visible

import numpy as np

_NP = {"f32": np.float32, "f16": np.float16}


def _session(ort, onnx, node, inputs, outputs, opsets):
    from onnx import helper
    g = helper.make_graph([node], "attncheck", inputs, outputs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    m.ir_version = 10
    opt = ort.SessionOptions()
    opt.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(m.SerializeToString(), opt, providers=["CPUExecutionProvider"])


def _f32(x, what):
    if float(np.float32(x)) != x:
        raise NotImplementedError("the %s attribute is a float32, which does not hold %r" % (what, x))
    return float(x)


def _scale(attrs, p):
    """A stored scale as the scale attribute; the default 1/sqrt(d) is the op's own default."""
    if not p.scale_is_default:
        attrs["scale"] = _f32(p.scale, "scale")


def attention_op(ort, onnx, q, k, v, p, et):
    from onnx import TensorProto, helper
    tt = TensorProto.FLOAT if et == np.float32 else TensorProto.FLOAT16
    names, feed = ["Q", "K", "V"], {"Q": q.astype(et), "K": k.astype(et), "V": v.astype(et)}
    if not p.scale > 0:   # ORT: "scale must be greater than 0 if specified"
        raise NotImplementedError("the Attention op takes a scale > 0 only (%r)" % p.scale)
    attrs = {"q_num_heads": p.heads, "kv_num_heads": p.kv_heads}
    _scale(attrs, p)
    if p.softcap:
        attrs["softcap"] = _f32(p.softcap, "softcap")
    mask = None
    if p.mask == "causal" and p.window is None and p.bool_mask is None and p.bias is None:
        attrs["is_causal"] = 1
    elif p.mask != "none" or p.window is not None or p.bool_mask is not None:
        mask = _visible(p)[None, None] & (True if p.bool_mask is None else p.bool_mask)
    if p.bias is not None:
        if mask is not None:
            mask = np.where(mask, p.bias, -np.inf)
        else:
            mask = p.bias
        mask = np.asarray(mask).astype(et)
    inputs = [helper.make_tensor_value_info(n, tt, None) for n in names]
    if mask is not None:
        names.append("M")
        feed["M"] = np.ascontiguousarray(mask)
        inputs.append(helper.make_tensor_value_info("M", TensorProto.BOOL if mask.dtype == bool else tt, None))
    node = helper.make_node("Attention", names, ["Y"], **attrs)
    s = _session(ort, onnx, node, inputs, [helper.make_tensor_value_info("Y", tt, None)], [("", 23)])
    return s.run(None, feed)[0]


def _packed(x):
    b, h, t, d = x.shape
    return np.ascontiguousarray(np.transpose(x, (0, 2, 1, 3)).reshape(b, t, h * d))


def gqa_op(ort, onnx, q, k, v, p, et):
    from onnx import TensorProto, helper
    if (p.mask == "none" and p.tq > 1) or (p.mask == "causal" and p.tq != p.tk) or p.tq > p.tk or \
            p.bias is not None or p.bool_mask is not None:
        raise NotImplementedError("GroupQueryAttention is causal (bottom-right) with tq <= tk")
    if p.batch > 1 and p.tq > 1 and p.tk > p.tq:
        raise NotImplementedError("GroupQueryAttention: batch_size must be 1 when sequence_length > 1 and past "
                                  "context is given")
    if p.dk % 8 or p.dv != p.dk:
        raise NotImplementedError("GroupQueryAttention: head_size a multiple of 8, V's as K's")
    if p.window is not None and (p.window[1] != 0 or p.window_align != "bottom-right"):
        raise NotImplementedError("GroupQueryAttention's window is a left one (bottom-right, right 0)")
    tt = TensorProto.FLOAT if et == np.float32 else TensorProto.FLOAT16
    past = p.tk - p.tq
    feed = {"query": _packed(q.astype(et)), "key": _packed(k[:, :, past:].astype(et)),
            "value": _packed(v[:, :, past:].astype(et)),
            "past_key": np.ascontiguousarray(k[:, :, :past].astype(et)),
            "past_value": np.ascontiguousarray(v[:, :, :past].astype(et)),
            "seqlens_k": np.full((p.batch,), p.tk - 1, np.int32), "total_sequence_length": np.array(p.tk, np.int32)}
    attrs = {"num_heads": p.heads, "kv_num_heads": p.kv_heads}
    _scale(attrs, p)
    if p.softcap:
        attrs["softcap"] = _f32(p.softcap, "softcap")
    if p.window is not None and p.window[0] >= 0:
        attrs["local_window_size"] = p.window[0] + 1
    names = ["query", "key", "value", "past_key", "past_value", "seqlens_k", "total_sequence_length"]
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT32 if n in names[5:] else tt, None) for n in names]
    node = helper.make_node("GroupQueryAttention", names, ["output", "present_key", "present_value"],
                            domain="com.microsoft", **attrs)
    outs = [helper.make_tensor_value_info(n, tt, None) for n in ("output", "present_key", "present_value")]
    s = _session(ort, onnx, node, inputs, outs, [("", 21), ("com.microsoft", 1)])
    o = s.run(None, feed)[0]
    return np.transpose(o.reshape(p.batch, p.tq, p.heads, p.dv), (0, 2, 1, 3))


def mha_op(ort, onnx, q, k, v, p, et):
    from onnx import TensorProto, helper
    if p.heads != p.kv_heads or p.bool_mask is not None or p.window is not None or p.softcap:
        raise NotImplementedError("MultiHeadAttention: no GQA, boolean mask, window or softcap")
    if p.mask == "causal-bottom-right" and p.tq != p.tk or p.mask == "causal" and p.tq != p.tk and not MHA_ANY_CAUSAL:
        # measured (ORT 1.32, CPU): rows 0 .. tq-2 see keys j <= i (top-left), the last row every key
        raise NotImplementedError("MultiHeadAttention's unidirectional mask with tq != tk is neither alignment "
                                  "(docs/frameworks.md)")
    tt = TensorProto.FLOAT if et == np.float32 else TensorProto.FLOAT16
    feed = {"query": _packed(q.astype(et)), "key": _packed(k.astype(et)), "value": _packed(v.astype(et))}
    names = ["query", "key", "value"]
    if p.bias is not None:
        names += ["", "", "attention_bias"]
        feed["attention_bias"] = np.ascontiguousarray(np.asarray(p.bias).astype(et))
    attrs = {"num_heads": p.heads, "unidirectional": int(p.mask != "none")}
    _scale(attrs, p)
    inputs = [helper.make_tensor_value_info(n, tt, None) for n in names if n]   # "": an absent optional input
    node = helper.make_node("MultiHeadAttention", names, ["output"], domain="com.microsoft", **attrs)
    s = _session(ort, onnx, node, inputs, [helper.make_tensor_value_info("output", tt, None)],
                 [("", 21), ("com.microsoft", 1)])
    o = s.run(None, feed)[0]
    return np.transpose(o.reshape(p.batch, p.tq, p.heads, p.dv), (0, 2, 1, 3))


OPS = {"attention": attention_op, "gqa": gqa_op, "mha": mha_op}
MHA_ANY_CAUSAL = False
ALL_FEATURES_ = attncheck_worker.ALL_FEATURES


def make_attn(args):
    import onnx
    import onnxruntime as ort
    op = OPS[args.op]

    def attn(q, k, v, p):
        if "mixed_dtypes" in p.variants:
            raise NotImplementedError("one dtype for q, k, v")
        return op(ort, onnx, np.asarray(q), np.asarray(k), np.asarray(v), p, _NP[p.dtype]).astype(np.float32)
    return attn


FEATURES = {"attention": ALL_FEATURES_ + ("window", "softcap", "bias", "bool_mask"),
            "gqa": ("gqa", "tq-ne-tk", "scale", "window", "softcap"), "mha": ALL_FEATURES_ + ("bias",)}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m attncheck.worker onnxruntime", description=__doc__.splitlines()[0])
    ap.add_argument("--op", choices=sorted(OPS), default="attention",
                    help="attention (default: opset 23's Attention), gqa (com.microsoft GroupQueryAttention), "
                         "mha (com.microsoft MultiHeadAttention)")
    ap.add_argument("--mha-any-causal", action="store_true",
                    help="--op mha: send a top-left causal case with tq != tk too (its last row sees every key)")
    attncheck_worker.dtype_option(ap)
    ap.add_argument("paths", nargs="*", help="IN OUT for one-shot mode; none for persistent mode")
    args = ap.parse_args(argv)
    global MHA_ANY_CAUSAL
    MHA_ANY_CAUSAL = args.mha_any_causal
    try:
        import onnxruntime as ort
        note = "ONNX Runtime %s, %s on CPUExecutionProvider" % (ort.__version__, args.op)
        attn = make_attn(args)
    except ImportError:
        note = "onnxruntime or onnx is not installed: every case is refused"

        def attn(q, k, v, p):
            raise NotImplementedError("onnxruntime or onnx is not installed")
    masks = ("causal", "causal-bottom-right") if args.op == "gqa" else attncheck_worker.ALL_MASKS
    return attncheck_worker.run(attn, args.paths, name="onnxruntime-" + args.op,
                                dtypes=attncheck_worker.chosen_dtypes(ap, args, ("f32", "f16")), masks=masks,
                                precision={"f16": "fp16-cublas"}, writes_lse=False, note=note,
                                features=FEATURES[args.op])


if __name__ == "__main__":
    sys.exit(main())
