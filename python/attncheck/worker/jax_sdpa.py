"""jax_sdpa.py: jax.nn.dot_product_attention (implementation="xla") as an attncheck exec worker.

    attncheck suite --kernel 'exec-persistent:python -m attncheck.worker jax' --suite ci

What JAX computes (jax/_src/nn/functions.py, _dot_product_attention_core): the logits Q·Kᵀ in
float32 (float64 for f64) times the scale as a float32 array, a bias added, masked logits replaced
by -0.7 × the logits' largest finite value, softmax in float32, P rounded to the dtype of K, then
P·V. So the declaration: f32 fp32; f16 and bf16 fp16-fa2 and bf16-fa2 (P stored in the 16-bit
type); f64 with --x64 (jax_enable_x64). A row with no visible key has equal logits: o is the mean
of V over every key ("empty_rows": "mean-v") and its LSE -0.7·FLT_MAX (the finite sentinel,
accepted as such). The LSE comes from return_residual=True, for f32 and f64 only: JAX rounds it to
the dtype of K, so an f16 or bf16 case writes o alone (a binary32 LSE is what attncheck judges).
Masks: none; causal (is_causal, top-left); causal-bottom-right as a boolean mask; variants window (top-left: local_window_size; bottom-right: a
boolean mask), bias, bool_mask; GQA natively; V's head dim must be K's (no dv-ne-dk).
"""
import argparse
import sys

try:
    from . import protocol as attncheck_worker
except ImportError:
    import protocol as attncheck_worker

import numpy as np

_NP = {"f64": np.float64, "f32": np.float32, "f16": np.float16}


def _jax(args):
    import jax
    if args.x64:
        jax.config.update("jax_enable_x64", True)
    if args.device == "cpu":
        jax.config.update("jax_platforms", "cpu")
    return jax


def _array(jnp, x, dtype):
    return jnp.asarray(np.asarray(x, dtype=np.float32 if dtype == "bf16" else _NP[dtype]),
                       dtype=jnp.bfloat16 if dtype == "bf16" else _NP[dtype])


def _visible(p):
    """The boolean mask [tq, tk] of the case's mask and window, True = visible (None: all)."""
    i = np.arange(p.tq)[:, None]
    j = np.arange(p.tk)[None, :]
    vis = np.ones((p.tq, p.tk), bool)
    if p.mask == "causal":
        vis &= j <= i
    elif p.mask == "causal-bottom-right":
        vis &= j <= i + p.tk - p.tq
    if p.window is not None:
        c = i + (0 if p.window_align == "top-left" else p.tk - p.tq)
        left, right = p.window
        if left >= 0:
            vis &= j >= c - left
        if right >= 0:
            vis &= j <= c + right
    return vis


def make_attn(args):
    jax = _jax(args)
    import jax.numpy as jnp

    def attn(q, k, v, p):
        if "mixed_dtypes" in p.variants:
            raise NotImplementedError("one dtype for q, k, v")
        kw = {"scale": p.scale, "implementation": "xla", "return_residual": True}
        mask = None
        top_left_window = p.window is not None and p.window_align == "top-left"
        if p.mask == "causal" and (p.window is None or top_left_window) and p.bool_mask is None:
            kw["is_causal"] = True
            if top_left_window:   # JAX's window is top-left: keys i - left .. i + right
                kw["local_window_size"] = tuple(x if x >= 0 else p.tk for x in p.window)
        elif p.mask != "none" or p.window is not None:
            mask = _visible(p)[None, None]
        if p.bool_mask is not None:
            mask = p.bool_mask if mask is None else (mask & p.bool_mask)
        if mask is not None:
            kw["mask"] = jnp.asarray(np.broadcast_to(mask, mask.shape))
        if p.bias is not None:
            kw["bias"] = _array(jnp, p.bias, p.dtype)
        qj, kj, vj = (_array(jnp, np.transpose(x, (0, 2, 1, 3)), p.dtype) for x in (q, k, v))
        o, lse = jax.nn.dot_product_attention(qj, kj, vj, **kw)
        o = np.transpose(np.asarray(o.astype(jnp.float32 if p.dtype != "f64" else jnp.float64)), (0, 2, 1, 3))
        if p.dtype in ("f16", "bf16"):   # JAX rounds its LSE residual to the 16-bit type: not the ABI's
            return o
        return o, np.transpose(np.asarray(lse, dtype=np.float32), (0, 2, 1))
    return attn


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m attncheck.worker jax", description=__doc__.splitlines()[0])
    ap.add_argument("--x64", action="store_true", help="enable jax_enable_x64: f64 cases too")
    ap.add_argument("--device", default="cpu", help="JAX platform: cpu (default), or the default backend ('default')")
    attncheck_worker.dtype_option(ap)
    ap.add_argument("paths", nargs="*", help="IN OUT for one-shot mode; none for persistent mode")
    args = ap.parse_args(argv)
    try:
        import jax
        note = "JAX %s, jax.nn.dot_product_attention implementation=xla on %s" % (jax.__version__, args.device)
    except ImportError:
        note = "JAX is not installed: every case is refused"
    dtypes = attncheck_worker.chosen_dtypes(ap, args, (("f64",) if args.x64 else ()) + ("f32", "f16", "bf16"))
    attn = make_attn(args) if "not installed" not in note else None

    def refuse(q, k, v, p):
        raise NotImplementedError("JAX is not installed")
    return attncheck_worker.run(attn or refuse, args.paths, name="jax-dot-product-attention", dtypes=dtypes,
                                precision={"f16": "fp16-fa2", "bf16": "bf16-fa2"}, note=note,
                                empty_rows="mean-v",
                                # jax.nn.dot_product_attention takes V of K's head dim only
                                features=("gqa", "tq-ne-tk", "scale", "window", "bias", "bool_mask"),
                                env=("XLA_FLAGS", "JAX_ENABLE_X64"))


if __name__ == "__main__":
    sys.exit(main())
