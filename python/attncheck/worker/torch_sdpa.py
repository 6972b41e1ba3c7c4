#!/usr/bin/env python3
"""torch_sdpa.py: PyTorch's scaled_dot_product_attention as an attncheck exec kernel.

--backend auto (the default) runs each case on the backend PyTorch itself dispatches it to on
that device (what a model calling F.scaled_dot_product_attention gets: torch._fused_sdp_choice,
on a CPU flash for every dtype), names it in the case's class and says so in the declaration's
note. Any other --backend forces one per process (torch.nn.attention.sdpa_kernel):
  flash      FlashAttention-2 (fp16/bf16)
  efficient  memory-efficient attention
  cudnn      cuDNN attention
  math       the reference composite

Usage:
  attncheck suite --kernel 'exec:python3 python/attncheck/worker/torch_sdpa.py --backend flash {in} {out}'
  attncheck suite --kernel 'exec-persistent:python3 python/attncheck/worker/torch_sdpa.py --backend flash'

--device auto (the default) takes the GPU when PyTorch sees one and falls back to the CPU
otherwise, and says so: the declaration's "note" (shown by attncheck list and on the first use)
names the fallback, and the declared dtypes and classes are the CPU's. The CPU has the flash and
math backends; --backend efficient or cudnn falls back to math there. --device cuda keeps
refusing every case on a machine without a GPU; --device cpu never looks for one.

--compile runs the attention through torch.compile (a JIT: one compilation per new shape, dtype
and mask; attncheck fuzz --shape-buckets N keeps the set of shapes small, and its stats report
the first runs of a shape, compilation included, apart from the others).

Built on protocol.py (beside it): one-shot mode reads the case IN and writes OUT (exit 0,
1 on an error, 77 when the backend refuses the case); persistent mode declares the backend's
dtypes and precision classes (README, "Without C") and answers each line "IN OUT" with "ok",
"error MESSAGE" or "error unsupported: REASON". Without PyTorch every case is refused (SKIP).

The output holds o in the case's dtype and, with --lse (private ATen entry points, flash,
efficient and cudnn only), lse as float32 [batch][heads][tq].

Masks: "causal" is top-left (is_causal=True, PyTorch's own alignment); "causal-bottom-right"
uses torch.nn.attention.bias.causal_lower_right when present, else an explicit boolean mask.
GQA: enable_gqa=True when this PyTorch has it, else K and V are repeated per query head.
Without scaled_dot_product_attention / sdpa_kernel (PyTorch 1.13, Debian's python3-torch) the
math backend is an explicit formula (explicit_attention); the other backends refuse every case.

Backward: the persistent worker declares one ("backward": true; attncheck check --grad, the
suite's grad cases): dq, dk, dv by torch.autograd.grad through the same forward and backend.
"""
import argparse
import sys

try:  # first: it finds a python3 with numpy when this one has none
    from . import protocol as attncheck_worker  # python -m attncheck.worker
except ImportError:
    import protocol as attncheck_worker  # run as a file: the folder of protocol.py is on sys.path

BACKENDS = ("auto", "flash", "efficient", "cudnn", "math")
# torch.nn.attention.SDPBackend's values (torch._fused_sdp_choice answers one)
_CHOICE = {0: "math", 1: "flash", 2: "efficient", 3: "cudnn"}
# what each backend computes, and how (precision classes of attncheck list --precision)
DTYPES = {"auto": ("f64", "f32", "f16", "bf16"), "flash": ("f16", "bf16"), "efficient": ("f32", "f16", "bf16"), "cudnn": ("f16", "bf16"),
          "math": ("f64", "f32", "f16", "bf16")}
PRECISION = {"flash": {"f16": "fp16-fa2", "bf16": "bf16-fa2"}, "efficient": {"f16": "fp16-fa2", "bf16": "bf16-fa2"},
             "cudnn": {"f16": "fp16-fa2", "bf16": "bf16-fa2"}, "math": {"f16": "fp16-cublas", "bf16": "bf16-cublas"}}
# On the CPU the flash backend also takes f32 and f64, and the math backend upcasts f16/bf16 to
# fp32 and rounds once at the end (bit for bit the fp32 computation rounded to the input dtype).
CPU_DTYPES = {"auto": ("f64", "f32", "f16", "bf16"), "flash": ("f64", "f32", "f16", "bf16"),
              "math": ("f64", "f32", "f16", "bf16")}
CPU_PRECISION = {"flash": {"f16": "fp16-fa2", "bf16": "bf16-fa2"}, "math": {"f16": "fp32", "bf16": "fp32"}}


class Unsupported(NotImplementedError):
    pass


def scale_of(problem):
    return None if problem.scale_is_default else problem.scale


def backend_enum(torch, name):
    from torch.nn.attention import SDPBackend
    return {
        "flash": SDPBackend.FLASH_ATTENTION,
        "efficient": SDPBackend.EFFICIENT_ATTENTION,
        "cudnn": SDPBackend.CUDNN_ATTENTION,
        "math": SDPBackend.MATH,
    }[name]


def explicit_attention(torch, problem, q, k, v, want_lse):
    """The math backend where this PyTorch has no scaled_dot_product_attention or sdpa_kernel
    (1.13; 2.0 to 2.2): softmax(c q k^T, masked) v in float32 (float64 for f64), like the math
    composite on the CPU, rounded once to the input dtype; rows with no visible key give o = 0
    (and lse = -inf). Differentiable (torch.autograd), finite on empty rows."""
    ct = torch.float64 if q.dtype == torch.float64 else torch.float32
    qq, kk, vv = (t.to(ct) for t in (q, k, v))
    group = problem.heads // problem.kv_heads
    if group > 1:
        kk, vv = kk.repeat_interleave(group, dim=1), vv.repeat_interleave(group, dim=1)
    tq, tk = problem.tq, problem.tk
    i = torch.arange(tq, device=q.device).unsqueeze(1)
    j = torch.arange(tk, device=q.device).unsqueeze(0)
    if problem.mask == "none":
        vis = torch.ones(tq, tk, dtype=torch.bool, device=q.device)
    elif problem.mask == "causal":
        vis = j <= i
    elif problem.mask == "causal-bottom-right":
        vis = j <= i + (tk - tq)
    else:
        raise Unsupported("mask %s" % problem.mask)
    empty = ~vis.any(dim=-1)
    s = torch.matmul(qq, kk.transpose(-2, -1)) * problem.scale
    s = s.masked_fill(~vis, float("-inf")).masked_fill(empty.unsqueeze(1), 0.0)
    p = torch.softmax(s, dim=-1).masked_fill(~vis, 0.0)
    o = torch.matmul(p, vv).to(q.dtype)
    lse = torch.logsumexp(s, dim=-1).masked_fill(empty, float("-inf")) if want_lse else None
    return o, lse


def attention(torch, args, problem, q, k, v):
    import torch.nn.functional as F
    try:
        from torch.nn.attention import sdpa_kernel
        F.scaled_dot_product_attention
    except (ImportError, AttributeError):
        if args.backend != "math":
            raise Unsupported("PyTorch %s has no scaled_dot_product_attention / sdpa_kernel: only --backend math "
                              "(an explicit formula)" % torch.__version__)
        return explicit_attention(torch, problem, q, k, v, args.lse)

    heads, kv_heads = problem.heads, problem.kv_heads
    tq, tk = problem.tq, problem.tk
    mask = problem.mask
    scale = scale_of(problem)
    kwargs = {}
    if scale is not None:
        kwargs["scale"] = scale
    gqa = heads != kv_heads
    attn_mask, is_causal = None, False
    if mask == "causal":
        is_causal = True
    elif mask == "causal-bottom-right":
        try:
            from torch.nn.attention.bias import causal_lower_right
            attn_mask = causal_lower_right(tq, tk)
        except ImportError:
            i = torch.arange(tq, device=q.device).unsqueeze(1)
            j = torch.arange(tk, device=q.device).unsqueeze(0)
            attn_mask = j <= i + (tk - tq)
    elif mask != "none":
        raise Unsupported("mask %s" % mask)

    backend = args.backend
    if backend == "auto":   # what PyTorch dispatches this case to, named in the case's class
        backend = dispatched(torch, q, k, v, attn_mask, is_causal, scale, gqa)
        problem.precision = class_of(backend, q.device.type, problem.dtype)

    def sdpa(kk, vv, **extra):
        try:
            if args.backend == "auto":
                return F.scaled_dot_product_attention(q, kk, vv, attn_mask=attn_mask, is_causal=is_causal,
                                                      **kwargs, **extra)
            with sdpa_kernel(backend_enum(torch, args.backend)):
                return F.scaled_dot_product_attention(q, kk, vv, attn_mask=attn_mask, is_causal=is_causal,
                                                      **kwargs, **extra)
        except (RuntimeError, TypeError) as e:
            msg = " ".join(str(e).split())
            if isinstance(e, TypeError) or "No available kernel" in msg or "not supported" in msg.lower():
                raise Unsupported(msg[:300])
            raise

    if not gqa:
        o = sdpa(k, v)
    else:
        # GQA natively (enable_gqa, PyTorch >= 2.5) where the backend takes it, else K and V
        # repeated per query head: query head h reads kv head h // (heads // kv_heads).
        try:
            o = sdpa(k, v, enable_gqa=True)
        except Unsupported:
            group = heads // kv_heads
            o = sdpa(k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1))
    lse = None
    if args.lse:
        lse = logsumexp(torch, backend, q, k, v, mask, is_causal, scale, gqa)
    return o, lse


def dispatched(torch, q, k, v, attn_mask, is_causal, scale, gqa):
    """The backend PyTorch picks for this call (torch._fused_sdp_choice; math where it cannot say)."""
    if hasattr(attn_mask, "_materialize"):   # a CausalBias: the boolean mask it stands for
        attn_mask = attn_mask._materialize(q.device)
    try:
        c = torch._fused_sdp_choice(q, k, v, attn_mask, 0.0, is_causal, scale=scale, enable_gqa=gqa)
    except (AttributeError, RuntimeError, TypeError):
        return "math"
    return _CHOICE.get(int(c), "math")


def class_of(backend, device, dtype):
    """The precision class of backend on device for dtype (None: the dtype's standard one)."""
    table = CPU_PRECISION if device == "cpu" else PRECISION
    return table.get(backend, PRECISION.get(backend, {})).get(dtype)


def logsumexp(torch, backend, q, k, v, mask, is_causal, scale, gqa):
    """LSE through ATen's private per-backend entry points; None where unavailable."""
    if gqa or mask == "causal-bottom-right":
        return None
    aten = torch.ops.aten
    try:
        if backend == "flash":
            r = aten._scaled_dot_product_flash_attention(q, k, v, 0.0, is_causal, False, scale=scale)
            return r[1]
        if backend == "efficient":
            r = aten._scaled_dot_product_efficient_attention(q, k, v, None, True, 0.0, is_causal, scale=scale)
            return r[1][..., : q.shape[2]]
        if backend == "cudnn":
            r = aten._scaled_dot_product_cudnn_attention(q, k, v, None, True, 0.0, is_causal, False, scale=scale)
            return r[1].reshape(q.shape[0], q.shape[1], q.shape[2])
    except (RuntimeError, TypeError, AttributeError):
        return None
    return None


def pick_device(args):
    """The device and the note for --device auto: cuda when PyTorch sees a GPU, else the CPU
    (the backend then one the CPU has: flash or math)."""
    if args.device != "auto":
        return args.device, args.backend, None
    torch = attncheck_worker._torch()
    if torch is None:
        return "cpu", args.backend, "PyTorch is not installed: every case is refused"
    if torch.cuda.is_available():
        return "cuda", args.backend, None
    backend = args.backend if args.backend in CPU_DTYPES else "math"
    why = "" if backend == args.backend else "; --backend %s runs only on a GPU, math runs instead" % args.backend
    return "cpu", backend, "no CUDA device: running on the CPU%s" % why


def compiled_sdpa(torch):
    """F.scaled_dot_product_attention through torch.compile (--compile), made once. Every new shape,
    dtype, mask and scale compiles (dynamic=False, as JAX's jit does): dynamo's recompile limit
    (8 by default, after which it runs the function eagerly, untested as compiled) is lifted."""
    global _COMPILED
    if _COMPILED is None:
        import torch.nn.functional as F
        import torch._dynamo.config as dc
        for limit in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit",
                      "accumulated_cache_size_limit"):
            if hasattr(dc, limit):
                setattr(dc, limit, 1 << 20)

        def core(q, k, v, attn_mask, is_causal, scale):
            return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, is_causal=is_causal, scale=scale)
        _COMPILED = torch.compile(core, dynamic=False)
    return _COMPILED


_COMPILED = None


def compiled_attention(torch, problem, q, k, v):
    """--compile: SDPA as torch.compile builds it (its own kernel; K and V repeated for GQA)."""
    mask, tq, tk = problem.mask, problem.tq, problem.tk
    attn_mask, is_causal = None, mask == "causal"
    if mask == "causal-bottom-right":
        i = torch.arange(tq, device=q.device).unsqueeze(1)
        j = torch.arange(tk, device=q.device).unsqueeze(0)
        attn_mask = j <= i + (tk - tq)
    elif mask not in ("none", "causal"):
        raise Unsupported("mask %s" % mask)
    group = problem.heads // problem.kv_heads
    if group > 1:
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    return compiled_sdpa(torch)(q, k, v, attn_mask, is_causal, problem.scale)


def make_attn(args):
    def attn(q, k, v, problem):
        import torch
        if args.device.startswith("cuda") and not torch.cuda.is_available():
            raise Unsupported("no CUDA device for --device %s" % args.device)
        q, k, v = (t.to(args.device) for t in (q, k, v))
        if args.compile:
            o, lse = compiled_attention(torch, problem, q, k, v), None
        else:
            o, lse = attention(torch, args, problem, q, k, v)
        if args.device.startswith("cuda"):
            torch.cuda.synchronize()
        return o if lse is None else (o, lse)
    return attn


def make_backward(args):
    """dq, dk, dv by torch.autograd.grad through the forward above (same backend and device)."""
    fwd = argparse.Namespace(**vars(args))
    fwd.lse = False

    def backward(q, k, v, o, lse, do, problem):
        import torch
        if args.device.startswith("cuda") and not torch.cuda.is_available():
            raise Unsupported("no CUDA device for --device %s" % args.device)
        q, k, v = (t.to(args.device).detach().requires_grad_(True) for t in (q, k, v))
        with torch.enable_grad():
            out, _ = attention(torch, fwd, problem, q, k, v)
            grads = torch.autograd.grad(out, (q, k, v), grad_outputs=do.to(args.device).to(out.dtype))
        if args.device.startswith("cuda"):
            torch.cuda.synchronize()
        return grads
    return backward


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=BACKENDS, default="auto",
                    help="auto (default): the backend PyTorch dispatches each case to on the device, named in "
                         "its class and in the declaration's note; or one forced per process")
    attncheck_worker.dtype_option(ap)
    ap.add_argument("--device", default="auto",
                    help="torch device: auto (default: cuda when PyTorch sees a GPU, else the CPU, said in the "
                         "declaration's note), cuda, cpu")
    ap.add_argument("--compile", action="store_true", help="run SDPA through torch.compile (a JIT kernel)")
    ap.add_argument("--lse", action="store_true", help="also write lse (private ATen entry points)")
    ap.add_argument("paths", nargs="*", help="IN OUT for one-shot mode; none for persistent mode")
    args = ap.parse_args(argv)
    if len(args.paths) not in (0, 2):
        ap.error("give IN and OUT, or nothing for persistent mode")
    args.device, args.backend, note = pick_device(args)
    cpu = args.device == "cpu"
    dtypes = CPU_DTYPES.get(args.backend, DTYPES[args.backend]) if cpu else DTYPES[args.backend]
    # auto: each case names the class of the backend it ran on (class_of)
    precision = CPU_PRECISION.get(args.backend, PRECISION.get(args.backend)) if cpu else PRECISION.get(args.backend)
    dtypes = attncheck_worker.chosen_dtypes(ap, args, dtypes)
    torch = attncheck_worker._torch()
    if args.backend == "auto" and not args.compile and torch is not None:
        t = torch.zeros(1, 1, 4, 8, dtype=torch.bfloat16, device=args.device)
        note = ((note + "; ") if note else "") + (
            "backend auto: each case runs where PyTorch %s dispatches it on %s (a causal bf16 case: %s; the "
            "class follows; --backend pins one)" % (torch.__version__, args.device,
                                                    dispatched(torch, t, t, t, None, True, None, False)))
    name = "torch-sdpa-" + ("compiled" if args.compile else args.backend)
    if args.compile:
        args.lse = False
    # what PyTorch reads that changes the arithmetic (threads, TF32, cuBLAS workspaces)
    env = ("OMP_NUM_THREADS", "NVIDIA_TF32_OVERRIDE", "CUBLAS_WORKSPACE_CONFIG", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE")
    return attncheck_worker.run(make_attn(args), args.paths, tensors="torch", name=name, dtypes=dtypes,
                                precision=precision, writes_lse=None if args.lse else False, env=env, note=note,
                                backward=None if args.compile else make_backward(args))


if __name__ == "__main__":
    sys.exit(main())
