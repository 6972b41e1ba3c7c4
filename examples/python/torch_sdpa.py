#!/usr/bin/env python3
"""torch_sdpa.py: PyTorch's scaled_dot_product_attention as an attncheck exec kernel.

One backend is forced per process (torch.nn.attention.sdpa_kernel):
  flash      FlashAttention-2 (fp16/bf16)
  efficient  memory-efficient attention
  cudnn      cuDNN attention
  math       the reference composite

Usage:
  attncheck suite --kernel 'exec:python3 examples/python/torch_sdpa.py --backend flash {in} {out}'
  attncheck suite --kernel 'exec-persistent:python3 examples/python/torch_sdpa.py --backend flash'

One-shot mode reads the case IN and writes OUT. Persistent mode reads lines "IN OUT" on
stdin and answers each with one line, "ok" or "error MESSAGE" (MESSAGE starts with
"unsupported:" when the forced backend refuses the case). One-shot mode exits 0, or 1 with the
message on stderr (77 when unsupported).

A case is an NPZ file: q, k, v ([batch][heads][t][d], dense) and meta.json (dtype by name,
mask, scale "default" or a hex float, shape). bf16 is stored as uint16 bit patterns. The output
NPZ holds o in the same encoding and, with --lse (private ATen entry points, flash, efficient
and cudnn only), lse as float32 [batch][heads][tq].

Masks: "causal" is top-left (is_causal=True, PyTorch's own alignment); "causal-bottom-right"
uses torch.nn.attention.bias.causal_lower_right when present, else an explicit boolean mask.
GQA: enable_gqa=True when this PyTorch has it, else K and V are repeated per query head.
"""
import argparse
import json
import os
import sys
import zipfile

try:
    import numpy as np
except ImportError:
    np = None

BACKENDS = ("flash", "efficient", "cudnn", "math")


class Unsupported(Exception):
    pass


def load_case(path):
    with zipfile.ZipFile(path) as z:
        meta = json.loads(z.read("meta.json").decode("utf-8"))
    arrays = np.load(path, allow_pickle=False)
    return meta, arrays["q"], arrays["k"], arrays["v"]


def to_torch(torch, a, dtype_name, device):
    if dtype_name == "bf16":
        t = torch.from_numpy(np.ascontiguousarray(a).view(np.int16)).view(torch.bfloat16)
    elif dtype_name in ("f16", "f32", "f64"):
        t = torch.from_numpy(np.ascontiguousarray(a))
    else:
        raise Unsupported("dtype %s has no torch SDPA path" % dtype_name)
    return t.to(device)


def to_numpy(torch, t, dtype_name):
    t = t.detach().contiguous().cpu()
    if dtype_name == "bf16":
        return t.view(torch.int16).numpy().view(np.uint16)
    return t.numpy()


def scale_of(meta):
    s = meta.get("scale", "default")
    if s == "default":
        return None
    return float.fromhex(s) if isinstance(s, str) else float(s)


def backend_enum(torch, name):
    from torch.nn.attention import SDPBackend
    return {
        "flash": SDPBackend.FLASH_ATTENTION,
        "efficient": SDPBackend.EFFICIENT_ATTENTION,
        "cudnn": SDPBackend.CUDNN_ATTENTION,
        "math": SDPBackend.MATH,
    }[name]


def attention(torch, args, meta, q, k, v):
    import torch.nn.functional as F
    from torch.nn.attention import sdpa_kernel

    heads, kv_heads = int(meta["heads"]), int(meta["kv_heads"])
    tq, tk = int(meta["tq"]), int(meta["tk"])
    mask = meta.get("mask", "none")
    scale = scale_of(meta)
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

    def sdpa(kk, vv, **extra):
        try:
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
        lse = logsumexp(torch, args.backend, q, k, v, mask, is_causal, scale, gqa)
    return o, lse


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


def run_one(torch, args, inp, out):
    meta, qa, ka, va = load_case(inp)
    dtype_name = meta["dtype"]
    device = args.device
    q = to_torch(torch, qa, dtype_name, device)
    k = to_torch(torch, ka, dtype_name, device)
    v = to_torch(torch, va, dtype_name, device)
    o, lse = attention(torch, args, meta, q, k, v)
    members = {"o": to_numpy(torch, o, dtype_name)}
    if lse is not None:
        members["lse"] = lse.detach().float().contiguous().cpu().numpy()
    with open(out, "wb") as f:
        np.savez(f, **members)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=BACKENDS, required=True)
    ap.add_argument("--device", default="cuda", help="torch device (default cuda; math also runs on cpu)")
    ap.add_argument("--lse", action="store_true", help="also write lse (private ATen entry points)")
    ap.add_argument("paths", nargs="*", help="IN OUT for one-shot mode; none for persistent mode")
    args = ap.parse_args()
    if len(args.paths) not in (0, 2):
        ap.error("give IN and OUT, or nothing for persistent mode")
    if np is None:
        print("torch_sdpa.py needs numpy (apt-get install python3-numpy)", file=sys.stderr)
        return 2
    try:
        import torch
    except ImportError as e:
        if args.paths:
            print("unsupported: PyTorch is not installed (%s)" % e, file=sys.stderr)
            return 77
        for line in sys.stdin:
            print("error unsupported: PyTorch is not installed", flush=True)
        return 0

    if args.paths:
        try:
            run_one(torch, args, args.paths[0], args.paths[1])
        except Unsupported as e:
            print("unsupported: %s" % e, file=sys.stderr)
            return 77
        except Exception as e:  # the one-shot kernel failed: say why on stderr
            print("error: %s: %s" % (type(e).__name__, " ".join(str(e).split())[:400]), file=sys.stderr)
            return 1
        return 0

    # Replies go to the original standard output; anything a library prints goes to stderr.
    reply = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    for line in sys.stdin:
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 2:
            answer = "error expected a line 'IN OUT'"
        else:
            try:
                run_one(torch, args, parts[0], parts[1])
                if args.device.startswith("cuda"):
                    torch.cuda.synchronize()
                answer = "ok"
            except Unsupported as e:
                answer = "error unsupported: %s" % e
            except Exception as e:
                answer = "error %s: %s" % (type(e).__name__, " ".join(str(e).split())[:400])
        reply.write(answer + "\n")
        reply.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
