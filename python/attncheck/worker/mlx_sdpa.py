"""mlx_sdpa.py: MLX's mx.fast.scaled_dot_product_attention as an attncheck exec worker.

    attncheck suite --kernel 'exec-persistent:python -m attncheck.worker mlx' --suite ci

MLX (the Linux CPU wheel, mlx[cpu]) takes q, k, v [B, H, T, D] in one dtype, the scale as a Python
float that it multiplies into Q in Q's dtype, and an additive mask of Q's dtype: the worker
declares "params_dtype": "q" (the fuzzer draws scales and biases that dtype holds) and refuses a
stored scale or bias value Q's dtype does not hold (SKIP, never a finding); the default scale
1/sqrt(d), which no dtype holds, goes in as a Python float, as a model passes it. Masks: "causal" is MLX's
bottom-right mask (causal-bottom-right); top-left causal, windows and boolean masks go as one
boolean mask (masked scores become the dtype's lowest finite value, so a row with no visible key
averages V: "empty_rows": "mean-v"); sinks natively; GQA natively. No LSE. Classes (measured,
docs/frameworks.md): fp16-cublas and bf16-cublas (Q·Kᵀ stored as 16-bit scores, P·V in float32).
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
    import mlx.core as mx
    MX = {"f32": mx.float32, "f16": mx.float16, "bf16": mx.bfloat16}

    def arr(x, dtype):
        return mx.array(np.ascontiguousarray(np.asarray(x, dtype=np.float32))).astype(MX[dtype])

    def attn(q, k, v, p):
        if "mixed_dtypes" in p.variants:
            raise NotImplementedError("one dtype for q, k, v")
        if not p.scale_is_default and not attncheck_worker.holds(p.scale, p.dtype):
            raise NotImplementedError("MLX multiplies by the scale in %s, which does not hold %r" % (p.dtype, p.scale))
        mask = None
        if p.mask == "causal-bottom-right" and p.window is None and p.bool_mask is None and p.bias is None:
            mask = "causal"
        elif p.mask != "none" or p.window is not None or p.bool_mask is not None:
            vis = _visible(p)[None, None]
            if p.bool_mask is not None:
                vis = vis & p.bool_mask
            mask = mx.array(np.ascontiguousarray(vis))
        if p.bias is not None:
            b = np.asarray(p.bias, dtype=np.float64)
            if not attncheck_worker.holds(b, p.dtype):
                raise NotImplementedError("MLX adds the mask in %s, which does not hold every bias value" % p.dtype)
            if mask is not None:
                raise NotImplementedError("a bias with a mask (MLX takes one mask array)")
            mask = arr(b, p.dtype)
        kw = {"scale": p.scale, "mask": mask}
        if p.sinks is not None:
            kw["sinks"] = arr(p.sinks, p.dtype)
        o = mx.fast.scaled_dot_product_attention(arr(q, p.dtype), arr(k, p.dtype), arr(v, p.dtype), **kw)
        return np.array(o.astype(mx.float32))
    return attn


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m attncheck.worker mlx", description=__doc__.splitlines()[0])
    attncheck_worker.dtype_option(ap)
    ap.add_argument("paths", nargs="*", help="IN OUT for one-shot mode; none for persistent mode")
    args = ap.parse_args(argv)
    try:
        import mlx.core as mx
        note = "MLX %s, mx.fast.scaled_dot_product_attention on %s" % (mx.__version__, mx.default_device())
        attn = make_attn()
    except ImportError:
        note = "MLX is not installed: every case is refused"

        def attn(q, k, v, p):
            raise NotImplementedError("MLX is not installed")
    return attncheck_worker.run(attn, args.paths, name="mlx-sdpa", dtypes=attncheck_worker.chosen_dtypes(
        ap, args, ("f32", "f16", "bf16")), precision={"f16": "fp16-cublas", "bf16": "bf16-cublas"}, writes_lse=False,
        note=note, empty_rows="mean-v", params_dtype="q",
        features=attncheck_worker.ALL_FEATURES + ("window", "bias", "bool_mask", "sinks"))


if __name__ == "__main__":
    sys.exit(main())
