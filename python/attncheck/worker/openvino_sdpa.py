"""openvino_sdpa.py: OpenVINO's ScaledDotProductAttention op (opset 13) on the CPU as an attncheck
exec worker.

    attncheck suite --kernel 'exec-persistent:python -m attncheck.worker openvino' --suite ci

Each case becomes a one-op model (q, k, v [B, H, T, D] parameters, the scale a constant of Q's
type, causal top-left by the op's causal flag, any other mask an attention_mask input: boolean,
or of Q's type for a bias), compiled for the CPU device with the inference precision of the
case's dtype. OpenVINO takes the scale and the mask in Q's dtype: the worker declares
"params_dtype": "q" and refuses a stored scale or bias value that dtype does not hold (SKIP); the
default 1/sqrt(d) goes in rounded to Q's dtype, as OpenVINO computes it without a scale input. GQA: K and V
repeated per query head. No LSE. Classes (measured, docs/frameworks.md): fp16-cublas and bf16-cublas
(Q·Kᵀ stored as 16-bit scores, P·V in float32). A row with no visible key comes out NaN (the op masks with -inf and
does not guard it): "empty_rows": "nan".
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


def make_attn():
    import openvino as ov
    try:
        import openvino.opset13 as ops
    except ImportError:  # before 2025
        import openvino.runtime.opset13 as ops
    core = ov.Core()
    T = {"f32": ov.Type.f32, "f16": ov.Type.f16, "bf16": ov.Type.bf16}
    HINT = {"f32": "f32", "f16": "f16", "bf16": "bf16"}

    def tensor(x, dtype):   # bf16 values go in as float32 (exact) and are converted in the graph
        return ov.Tensor(np.ascontiguousarray(np.asarray(x, np.float16 if dtype == "f16" else np.float32)))

    def param(shape, dtype, name):
        """A parameter of dtype's values, and the node that reads it as dtype."""
        p = ops.parameter(list(shape), T["f16" if dtype == "f16" else "f32"], name=name)
        return p, ops.convert(p, T[dtype]) if dtype == "bf16" else p

    def const(x, dtype):
        c = ops.constant(tensor(x, dtype))
        return ops.convert(c, T[dtype]) if dtype == "bf16" else c

    def attn(q, k, v, p):
        if "mixed_dtypes" in p.variants:
            raise NotImplementedError("one dtype for q, k, v")
        if not p.scale_is_default and not attncheck_worker.holds(p.scale, p.dtype):
            raise NotImplementedError("OpenVINO takes the scale in %s, which does not hold %r" % (p.dtype, p.scale))
        g = p.heads // p.kv_heads
        q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
        k, v = np.repeat(k, g, axis=1), np.repeat(v, g, axis=1)
        (pq, nq), (pk, nk), (pv, nv) = (param(x.shape, p.dtype, n) for x, n in ((q, "q"), (k, "k"), (v, "v")))
        params, feed = [pq, pk, pv], [tensor(q, p.dtype), tensor(k, p.dtype), tensor(v, p.dtype)]
        causal = p.mask == "causal" and p.window is None and p.bool_mask is None and p.bias is None
        mask = None
        if not causal and (p.mask != "none" or p.window is not None or p.bool_mask is not None):
            mask = _visible(p)[None, None] & (True if p.bool_mask is None else p.bool_mask)
        if p.bias is not None:
            b = np.asarray(p.bias, np.float64)
            if not attncheck_worker.holds(b, p.dtype):
                raise NotImplementedError("OpenVINO adds the mask in %s, which does not hold every bias value" % p.dtype)
            mask = b if mask is None else np.where(mask, b, -np.inf)
        scale = const(np.array(p.scale), p.dtype)   # the default 1/sqrt(d) rounded to Q's dtype, as OpenVINO's own
        if mask is not None:
            if mask.dtype == bool:
                pm = nm = ops.parameter(list(np.shape(mask)), ov.Type.boolean, name="m")
                feed.append(ov.Tensor(np.ascontiguousarray(mask)))
            else:
                pm, nm = param(np.shape(mask), p.dtype, "m")
                feed.append(tensor(mask, p.dtype))
            params.append(pm)
            node = ops.scaled_dot_product_attention(nq, nk, nv, nm, scale, causal=False)
        else:
            node = ops.scaled_dot_product_attention(nq, nk, nv, const(np.zeros((1, 1)), p.dtype), scale, causal=causal)
        if p.dtype == "bf16":
            node = ops.convert(node, T["f32"])   # exact
        model = ov.Model([node], params)
        cm = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": HINT[p.dtype]})
        return np.asarray(cm(feed)[0], np.float32)
    return attn, ov.__version__


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m attncheck.worker openvino", description=__doc__.splitlines()[0])
    attncheck_worker.dtype_option(ap)
    ap.add_argument("paths", nargs="*", help="IN OUT for one-shot mode; none for persistent mode")
    args = ap.parse_args(argv)
    try:
        attn, ver = make_attn()
        note = "OpenVINO %s, ScaledDotProductAttention (opset 13) on CPU" % ver
    except ImportError:
        note = "OpenVINO is not installed: every case is refused"

        def attn(q, k, v, p):
            raise NotImplementedError("OpenVINO is not installed")
    return attncheck_worker.run(attn, args.paths, name="openvino-sdpa", dtypes=attncheck_worker.chosen_dtypes(
        ap, args, ("f32", "f16", "bf16")), precision={"f16": "fp16-cublas", "bf16": "bf16-cublas"}, writes_lse=False,
        note=note, params_dtype="q", empty_rows="nan",
        features=attncheck_worker.ALL_FEATURES + ("window", "bias", "bool_mask"))


if __name__ == "__main__":
    sys.exit(main())
