#!/usr/bin/env python3
"""attncheck_worker.py: turn a Python function into an attncheck exec kernel.

    import attncheck_worker

    def attn(q, k, v, problem):          # -> o, or (o, lse)
        ...

    if __name__ == "__main__":
        sys.exit(attncheck_worker.run(attn, sys.argv[1:], name="mine", dtypes=["f32", "f16"]))

run() speaks both forms of attncheck's exec protocol (README, "Without C"):

  one-shot    ARGS = IN OUT: reads the case IN, writes OUT; exit 0, 1 on an error, 77 when the
              function refuses the case (NotImplementedError; the reason on stderr)
  persistent  ARGS = --serve (or nothing): answers "hello 1" with the declaration line
              "attncheck-worker 1 {json}", then each line "IN OUT" with "ok", "error MESSAGE",
              or "error unsupported: REASON" when the function raises NotImplementedError;
              with run(..., backward=fn) it also declares "backward": true and answers
              "backward IN OUT" (IN: the case plus o, lse and do) with dq, dk, dv (dsinks)

q [B,H,tq,dk], k [B,KVH,tk,dk] and v [B,KVH,tk,dv] arrive decoded: numpy float64/float32/float16
for f64/f32/f16, float32 (exact) for bf16, e4m3 and e5m2, whose NPZ members are bit patterns.
With tensors="torch" they are CPU torch tensors of the case's own dtype (torch.bfloat16,
torch.float8_e4m3fn, torch.float8_e5m2 where this PyTorch has them); without PyTorch every case
is refused. tensors="auto" gives torch tensors when PyTorch is importable, numpy otherwise.
problem has dtype, mask, batch, heads, kv_heads, tq, tk, dk, dv, scale (a float; 1/sqrt(dk)
when scale_is_default), scale_is_default, meta (the case's meta.json) and tensors ("numpy" or
"torch"). o (numpy array or torch tensor, any float dtype) is rounded once, to nearest even,
to the case's dtype; lse (natural log, [B,H,tq]) is stored as float32. With the variant
mixed_dtypes each of q, k, v arrives decoded from its own dtype and o is rounded to its own
(problem.q_dtype, k_dtype, v_dtype, o_dtype; problem.dtype is the compute dtype); each of them
must be among the declared dtypes.

Attention variants (docs/variants.md) reach a worker only when its declaration names them:
run(..., features=ALL_FEATURES + ("window", "sinks")), or VARIANT_FEATURES for all of them.
problem.variants names the case's variants; problem.window is (left, right) (-1 = unbounded)
or None, with problem.window_align "bottom-right" or "top-left"; problem.softcap is a float
(0.0 = none); problem.alibi_slopes ([H], or [B,H] when problem.alibi_per_batch), bias
([1|B,1|H,tq,tk]), sinks ([H]) and descale_q, descale_k, descale_v ([B,KVH]) are float64 numpy
arrays (the stored values) and bool_mask ([1|B,1|H,tq,tk], True = visible) a bool array, each
None when the case does not use it. A case with a variant the declaration does not name is
refused (NotImplementedError).

Backward: fn(q, k, v, o, lse, do, problem) -> (dq, dk, dv) or (dq, dk, dv, dsinks). o and do
(dO) arrive decoded like q (o's dtype), lse as float32 [B,H,tq] (o and lse: the exact forward's,
rounded); dq, dk, dv are rounded once to the case's dtype, dsinks ([H], cases with sinks) stored
as float32. ATTNCHECK_WORKER_MUTATE=dk-noscale divides dk by the scale (a deliberately broken
backward, to see attncheck fail it).

Precision class per case: attn may set problem.precision to the class of the path it took for
this case (a name of `attncheck list --precision`, as a kernel's precision_of names it); it
travels as the output's member "precision" (uint8 bytes), which attncheck judges the case under
(an explicit --precision still wins). In one-shot mode the declared class of the case's dtype
is written there too, so that a one-shot exec: kernel is judged under the class it declares.
run(..., env=[...]) declares the environment variables the worker reads (recorded in a
finding's repro.sh), note="..." one line attncheck shows (`list`, the first use), and
empty_rows="zero"|"nan"|"mean-v", empty_lse="-inf"|"+inf"|"nan" what it writes for rows with no
visible key, params_dtype="q" that it takes the scale and a bias in Q's dtype (the fuzzer then draws
only values that dtype holds), quant_only=True that it takes quantized caches only (kv_formats).
The worker itself reads ATTNCHECK_WORKER_MUTATE, always declared.

The first python3 on PATH may lack numpy: importing this module then re-executes the script
under another python3 that has it (/usr/bin/python3, /usr/local/bin/python3), or exits 2 with
one line on stderr.
"""
import io
import json
import math
import os
import subprocess
import sys
import zipfile


def _reexec_with_numpy():
    if os.environ.get("ATTNCHECK_WORKER_REEXEC"):
        return
    here = os.path.realpath(sys.executable or "")
    for cand in ("/usr/bin/python3", "/usr/local/bin/python3", "/bin/python3"):
        if not os.path.exists(cand) or os.path.realpath(cand) == here:
            continue
        try:
            ok = subprocess.run([cand, "-c", "import numpy"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL).returncode == 0
        except OSError:
            ok = False
        if ok:
            os.environ["ATTNCHECK_WORKER_REEXEC"] = "1"
            os.execv(cand, [cand, sys.argv[0]] + sys.argv[1:])


try:
    import numpy as np
except ImportError:
    _reexec_with_numpy()
    sys.stderr.write("attncheck_worker: numpy is not installed for %s (Debian: apt-get install python3-numpy)\n"
                     % sys.executable)
    sys.exit(2)

ALL_DTYPES = ("f64", "f32", "f16", "bf16", "e4m3", "e5m2")
ALL_MASKS = ("none", "causal", "causal-bottom-right")
ALL_FEATURES = ("gqa", "dv-ne-dk", "tq-ne-tk", "scale")
# attention variants (docs/variants.md); a worker gets a variant case only when it declares it
VARIANT_FEATURES = ("window", "softcap", "alibi", "bias", "bool_mask", "sinks", "descale", "mixed_dtypes")
# the serving layouts (docs/layouts.md): q, k, v arrive as one carrier batch with the int32 arrays
LAYOUT_FEATURES = ("varlen", "paged")

# quantized tensors (docs/quantized.md): a case's q, k or v as codes and scales, read by dequantize()
QUANT_FORMATS = ("q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl", "e4m3fn", "e4m3fnuz", "e5m2", "int8", "int4",
                 "nvfp4", "mxfp4")
_IQ4NL = (-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113)
_E2M1 = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)

# narrow formats stored as bit patterns: (bits, mantissa bits, minimum normal exponent, bias,
# has inf, the NaN pattern written)
_NARROW = {"bf16": (16, 7, -126, 127, True, 0x7FC0), "e4m3": (8, 3, -6, 7, False, 0x7F),
           "e5m2": (8, 2, -14, 15, True, 0x7E)}
_TABLES = {}


def _table(name):
    """Values of every bit pattern of a narrow format (float64, index = bits)."""
    if name not in _TABLES:
        nb, m, emin, bias, has_inf, _ = _NARROW[name]
        bits = np.arange(1 << nb, dtype=np.int64)
        sign = np.where(bits >> (nb - 1) & 1, -1.0, 1.0)
        e = (bits >> m) & ((1 << (nb - 1 - m)) - 1)
        f = (bits & ((1 << m) - 1)).astype(np.float64)
        emax_field = (1 << (nb - 1 - m)) - 1
        val = np.where(e == 0, np.ldexp(f, emin - m), np.ldexp(1.0 + f / (1 << m), e - bias))
        if has_inf:
            val = np.where(e == emax_field, np.where(f == 0, np.inf, np.nan), val)
        else:  # e4m3fn: only S.1111.111 is NaN
            val = np.where((e == emax_field) & (f == (1 << m) - 1), np.nan, val)
        _TABLES[name] = sign * val
    return _TABLES[name]


def decode(a, dtype):
    """An NPZ member of the case's dtype to numpy floats holding the same values."""
    if dtype in _NARROW:
        return _table(dtype)[np.asarray(a).astype(np.int64)].astype(np.float32)
    if dtype in ("f16", "f32", "f64"):
        return np.asarray(a)
    raise NotImplementedError("dtype %s" % dtype)


def _code_values(fmt, c):
    """The number each code stands for (docs/quantized.md "Values"), float64."""
    c = np.asarray(c)
    if fmt in ("q8_0", "int8"):
        return c.astype(np.int8).astype(np.float64)
    u = c.astype(np.uint8).astype(np.int64)
    if fmt == "q4_0":
        return (u - 8).astype(np.float64)
    if fmt == "q5_0":
        return (u - 16).astype(np.float64)
    if fmt == "iq4_nl":
        return np.array(_IQ4NL, dtype=np.float64)[u & 15]
    if fmt == "e4m3fn":
        return _table("e4m3")[u]
    if fmt == "e5m2":
        return _table("e5m2")[u]
    if fmt == "e4m3fnuz":  # bias 8, no inf, NaN only at 0x80
        e, m = (u >> 3) & 15, (u & 7).astype(np.float64)
        v = np.where(e == 0, np.ldexp(m, -10), np.ldexp(8 + m, e - 11))
        return np.where(u == 0x80, np.nan, np.where(u & 0x80, -v, v))
    if fmt in ("nvfp4", "mxfp4"):
        v = np.array(_E2M1)[u & 7]
        return np.where(u & 8, -v, v)
    return u.astype(np.float64)  # q4_1, q5_1, int4


def _spread(a, gran, block, shape):
    """A scale array of granularity gran broadcast to the tensor's [B, H, T, D]."""
    a = np.asarray(a)
    if gran == "block":
        return np.repeat(a, block, axis=3)
    if gran == "token":
        return a[..., None]
    if gran == "channel":
        return a[:, :, None, :]
    if gran == "head":
        return a[:, :, None, None]
    return np.broadcast_to(a.reshape(()), shape)


def dequantize(arrays, x, spec):
    """The exact values (float64) of quantized tensor x ('q', 'k' or 'v') from its members x_codes,
    x_scales and x_mins, x_zeros or x_tensor_scale, spec its meta.json quant entry."""
    fmt, gran, block = spec["format"], spec.get("granularity", "block"), int(spec.get("block", 0))
    c = arrays[x + "_codes"]
    s = arrays[x + "_scales"]
    if fmt == "nvfp4":
        sv = _table("e4m3")[s.astype(np.int64)]
    elif fmt == "mxfp4":
        sv = np.where(s == 255, np.nan, np.ldexp(1.0, s.astype(np.int64) - 127))
    else:
        sv = s.astype(np.float64)
    S = _spread(sv, gran, block, c.shape)
    q = _code_values(fmt, c)
    with np.errstate(invalid="ignore", over="ignore"):
        if fmt in ("q4_1", "q5_1"):
            return S * q + _spread(arrays[x + "_mins"].astype(np.float64), gran, block, c.shape)
        if fmt in ("int8", "int4"):
            return (q - _spread(arrays[x + "_zeros"].astype(np.float64), gran, block, c.shape)) * S
        if fmt == "nvfp4":
            return q * S * float(arrays[x + "_tensor_scale"].reshape(-1)[0])
        return q * S


def encode(x, dtype):
    """Floats rounded once, to nearest even, to dtype (bit patterns for the narrow formats)."""
    x = np.asarray(x, dtype=np.float64)
    if dtype in ("f16", "f32", "f64"):
        return x.astype({"f16": np.float16, "f32": np.float32, "f64": np.float64}[dtype])
    nb, m, emin, _, has_inf, nan_bits = _NARROW[dtype]
    tab = _table(dtype)
    pos = tab[: 1 << (nb - 1)]
    fin = np.isfinite(pos)
    maxf = pos[fin].max()
    ax = np.abs(x)
    with np.errstate(all="ignore"):
        _, e = np.frexp(np.where(np.isfinite(ax), ax, 0.0))
        q = np.ldexp(1.0, np.maximum(e - 1, emin) - m)
        r = np.round(ax / q) * q
    idx = np.searchsorted(pos[fin], np.where(np.isfinite(r), np.minimum(r, maxf), 0.0))
    out = idx.astype(np.int64)
    over = ~np.isnan(x) & ((r > maxf) | np.isinf(x))
    if has_inf:
        out[over] = int(np.where(np.isinf(pos))[0][0])
    else:
        out[over] = nan_bits
    out[np.isnan(x)] = nan_bits
    out |= np.where(np.signbit(x), 1 << (nb - 1), 0)
    return out.astype(np.uint16 if nb == 16 else np.uint8)


class Problem:
    """The case's shape, mask, scale, dtype and attention variants."""

    def __init__(self, meta, q, k, v, tensors, arrays=None):
        self.meta = meta
        self.dtype = meta["dtype"]
        self.mask = meta.get("mask", "none")
        self.batch, self.heads, self.tq, self.dk = (int(x) for x in q.shape)
        self.kv_heads, self.tk, self.dv = int(k.shape[1]), int(k.shape[2]), int(v.shape[3])
        s = meta.get("scale", "default")
        self.scale_is_default = s == "default"
        self.scale = 1.0 / math.sqrt(self.dk) if self.scale_is_default else (
            float.fromhex(s) if isinstance(s, str) else float(s))
        self.tensors = tensors
        self.precision = None   # attn may name the class of the path it takes for this case
        self._variants(meta.get("variants") or {}, arrays)
        self._layout(meta.get("layout"), arrays)

    def _layout(self, la, arrays):
        """A varlen or paged case (docs/layouts.md): None, or "varlen" / "paged" with
        cu_seqlens_q (and cu_seqlens_k, or block_table and cache_seqlens, page_size) as numpy
        int arrays; q, k, v are then one carrier batch: token cu_seqlens_q[b] + i of sequence b,
        key cu_seqlens_k[b] + j or slot block_table[b][j // page_size] * page_size + j % page_size."""
        self.layout = None if not la else la["kind"]
        self.sequences = int(la["sequences"]) if la else 0
        self.page_size = int(la.get("page_size", 0)) if la else 0

        def ints(name):
            return None if not la or arrays is None or name not in arrays.files else arrays[name].astype(np.int64)
        self.cu_seqlens_q, self.cu_seqlens_k = ints("cu_seqlens_q"), ints("cu_seqlens_k")
        self.block_table, self.cache_seqlens = ints("block_table"), ints("cache_seqlens")

    def key_slots(self, b):
        """The carrier positions of the keys of sequence b, in order."""
        if self.layout == "varlen":
            return np.arange(self.cu_seqlens_k[b], self.cu_seqlens_k[b + 1])
        j = np.arange(self.cache_seqlens[b])
        return self.block_table[b][j // self.page_size] * self.page_size + j % self.page_size

    def _variants(self, va, arrays):
        """The variants of meta.json's "variants" object and their NPZ members (numpy arrays)."""
        self.variants = tuple(va.get("features", ()))
        w = va.get("window", (-1, -1))
        self.window = (int(w[0]), int(w[1])) if "window" in self.variants else None
        self.window_align = va.get("window_align", "bottom-right")
        c = va.get("softcap", 0.0)
        self.softcap = (float.fromhex(c) if isinstance(c, str) else float(c)) if "softcap" in self.variants else 0.0
        self.alibi_per_batch = bool(va.get("alibi_per_batch", False))
        self.bias_dtype = va.get("bias_dtype", self.dtype)
        dts = va.get("dtypes", {}) if "mixed_dtypes" in self.variants else {}
        self.q_dtype, self.k_dtype, self.v_dtype, self.o_dtype = (dts.get(x, self.dtype) for x in "qkvo")

        def member(name, dtype=None):
            if arrays is None or name not in arrays.files:
                return None
            a = arrays[name]
            return a.astype(bool) if dtype is None else decode(a, dtype).astype(np.float64)
        self.bias = member("bias", self.bias_dtype)
        self.bool_mask = member("mask")
        self.alibi_slopes, self.sinks = member("alibi_slopes", "f32"), member("sinks", "f32")
        self.descale_q, self.descale_k, self.descale_v = (member(n, "f32") for n in ("descale_q", "descale_k", "descale_v"))


def _torch():
    try:
        import torch
        return torch
    except ImportError:
        return None


def _to_torch(torch, a, dtype):
    t = torch.from_numpy(np.ascontiguousarray(decode(a, dtype)))
    want = {"bf16": "bfloat16", "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}.get(dtype)
    if want and hasattr(torch, want):
        t = t.to(getattr(torch, want))
    return t


def _from_torch(torch, t, dtype):
    t = t.detach().cpu()
    if dtype == "bf16" and t.dtype == torch.bfloat16:
        return t.contiguous().view(torch.int16).numpy().view(np.uint16)
    if dtype == "e4m3" and t.dtype == getattr(torch, "float8_e4m3fn", None):
        return t.contiguous().view(torch.uint8).numpy()
    if dtype == "e5m2" and t.dtype == getattr(torch, "float8_e5m2", None):
        return t.contiguous().view(torch.uint8).numpy()
    if {"f16": torch.float16, "f32": torch.float32, "f64": torch.float64}.get(dtype) == t.dtype:
        return t.contiguous().numpy()
    return encode(t.to(torch.float64).numpy(), dtype)


def _load(inp, decl, tensors):
    """The case file inp: (problem, q, k, v, arrays, torch or None); raises NotImplementedError
    for what the declaration does not name."""
    with zipfile.ZipFile(inp) as z:
        meta = json.loads(z.read("meta.json").decode("utf-8"))
    arrays = np.load(inp, allow_pickle=False)
    quant = meta.get("quant") or {}
    for x, spec in quant.items():
        if spec["format"] not in decl.get("q_formats" if x == "q" else "kv_formats", ()):
            raise NotImplementedError("quantized %s (%s) is not declared" % (x, spec["format"]))
    # a quantized tensor arrives as its exact values (float64), read from its codes and scales
    qa, ka, va = (dequantize(arrays, x, quant[x]) if x in quant else arrays[x] for x in "qkv")
    dtype = meta["dtype"]
    va_ = meta.get("variants") or {}
    dts = va_.get("dtypes", {}) if "mixed_dtypes" in va_.get("features", ()) else {}
    qd, kd, vd, od = (dts.get(x, dtype) for x in "qkvo")
    for d in (dtype, qd, kd, vd, od):
        if d not in decl["dtypes"]:
            raise NotImplementedError("dtype %s is not declared" % d)
    for feat in va_.get("features", ()):
        if feat not in decl.get("features", ALL_FEATURES):
            raise NotImplementedError("variant %s is not declared" % feat)
    kind = (meta.get("layout") or {}).get("kind")
    if kind and kind not in decl.get("features", ALL_FEATURES):
        raise NotImplementedError("layout %s is not declared" % kind)
    torch = _torch() if tensors in ("torch", "auto") else None
    if tensors == "torch" and torch is None:
        raise NotImplementedError("PyTorch is not installed")
    kind = "torch" if torch is not None else "numpy"
    problem = Problem(meta, qa, ka, va, kind, arrays)
    if quant and torch is not None:
        raise NotImplementedError("quantized tensors reach the numpy form only")
    if quant:
        qd, kd, vd = ("f64" if x in quant else d for x, d in (("q", qd), ("k", kd), ("v", vd)))
    if torch is not None:
        q, k, v = (_to_torch(torch, a, d) for a, d in ((qa, qd), (ka, kd), (va, vd)))
    else:
        q, k, v = (decode(a, d) for a, d in ((qa, qd), (ka, kd), (va, vd)))
    return problem, q, k, v, arrays, torch


def _save(out, members):
    # attncheck reads C-ordered .npy members: a transposed or strided result is laid out afresh
    members = {n: np.ascontiguousarray(a) for n, a in members.items()}
    buf = io.BytesIO()
    np.savez(buf, **members)
    with open(out, "wb") as f:
        f.write(buf.getvalue())


def _encode_out(torch, x, dtype):
    return _from_torch(torch, x, dtype) if torch is not None and not isinstance(x, np.ndarray) else encode(np.asarray(x), dtype)


def declared_class(decl, dtype):
    """The class the declaration names for dtype, or None."""
    pr = decl.get("precision")
    return pr if isinstance(pr, str) else (pr or {}).get(dtype)


def run_case(attn, inp, out, decl, tensors, oneshot=False):
    """Run attn on the case file inp and write out; raises on failure. The output carries the
    class attn names for the case (problem.precision), or in one-shot mode the declared one."""
    problem, q, k, v, arrays, torch = _load(inp, decl, tensors)
    res = attn(q, k, v, problem)
    o, lse = (res if isinstance(res, tuple) else (res, None))
    members = {"o": _encode_out(torch, o, problem.o_dtype)}
    cls = problem.precision or (declared_class(decl, problem.dtype) if oneshot else None)
    if cls:
        members["precision"] = np.frombuffer(str(cls).encode("ascii"), dtype=np.uint8)
    if lse is not None and decl.get("writes_lse", True) is not False:
        if torch is not None and not isinstance(lse, np.ndarray):
            lse = lse.detach().to(torch.float32).cpu().numpy()
        members["lse"] = np.asarray(lse, dtype=np.float32).reshape(problem.batch, problem.heads, problem.tq)
    _save(out, members)


def run_backward_case(backward, inp, out, decl, tensors):
    """The backward request: the case file inp carries the forward's o and lse and do (dO);
    backward(q, k, v, o, lse, do, problem) -> (dq, dk, dv) or (dq, dk, dv, dsinks), written
    to out in the case's dtype (dsinks as float32)."""
    problem, q, k, v, arrays, torch = _load(inp, decl, tensors)
    for name in ("o", "lse", "do"):
        if name not in arrays.files:
            raise ValueError("the backward request has no member '%s'" % name)
    od = problem.o_dtype
    if torch is not None:
        o, do = _to_torch(torch, arrays["o"], od), _to_torch(torch, arrays["do"], od)
        lse = torch.from_numpy(np.ascontiguousarray(arrays["lse"].astype(np.float32)))
    else:
        o, do, lse = decode(arrays["o"], od), decode(arrays["do"], od), arrays["lse"].astype(np.float32)
    res = tuple(backward(q, k, v, o, lse, do, problem))
    if len(res) not in (3, 4):
        raise ValueError("backward() must return (dq, dk, dv) or (dq, dk, dv, dsinks)")
    dq, dk, dv = res[:3]
    if os.environ.get("ATTNCHECK_WORKER_MUTATE") == "dk-noscale":
        dk = dk / problem.scale   # a deliberately wrong backward: dK without the scale (tests)
    members = {"dq": _encode_out(torch, dq, problem.dtype), "dk": _encode_out(torch, dk, problem.dtype),
               "dv": _encode_out(torch, dv, problem.dtype)}
    if len(res) == 4 and res[3] is not None:
        ds = res[3]
        if torch is not None and not isinstance(ds, np.ndarray):
            ds = ds.detach().to(torch.float64).cpu().numpy()
        members["dsinks"] = np.asarray(ds, dtype=np.float32).reshape(problem.heads)
    _save(out, members)


def _one_line(exc):
    return " ".join(str(exc).split())[:400] or type(exc).__name__


def serve(attn, decl, tensors, stdin=None, reply=None, backward=None):
    """The persistent protocol on stdin / reply (default: the process's stdout; anything else
    written to sys.stdout goes to stderr so it cannot break the protocol)."""
    stdin = stdin or sys.stdin
    if reply is None:
        reply = os.fdopen(os.dup(1), "w")
        os.dup2(2, 1)
        sys.stdout = sys.stderr
    for line in stdin:
        parts = line.split()
        if not parts:
            continue
        bwd = parts[0] == "backward"
        if parts[0] == "hello":
            answer = "attncheck-worker 1 " + json.dumps(decl, separators=(",", ":"))
        elif len(parts) != 2 + bwd:
            answer = "error expected a line 'IN OUT' or 'backward IN OUT'"
        elif bwd and backward is None:
            answer = "error unsupported: this worker has no backward"
        else:
            try:
                if bwd:
                    run_backward_case(backward, parts[1], parts[2], decl, tensors)
                else:
                    run_case(attn, parts[0], parts[1], decl, tensors)
                answer = "ok"
            except NotImplementedError as e:
                answer = "error unsupported: " + _one_line(e)
            except Exception as e:  # every failure is an answer, never a dead worker
                answer = "error %s: %s" % (type(e).__name__, _one_line(e))
        reply.write(answer + "\n")
        reply.flush()
    return 0


def declaration(name=None, dtypes=ALL_DTYPES, masks=ALL_MASKS, features=ALL_FEATURES, precision=None,
                writes_lse=None, env=(), note=None, empty_rows=None, empty_lse=None,
                kv_formats=(), q_formats=(), params_dtype=None, quant_only=False):
    """The JSON object a worker declares itself with (README, "Without C")."""
    d = {"name": name or os.path.basename(sys.argv[0] or "python-worker"), "dtypes": list(dtypes),
         "masks": list(masks), "features": list(features)}
    if kv_formats:
        d["kv_formats"] = list(kv_formats)
    if q_formats:
        d["q_formats"] = list(q_formats)
    if quant_only:
        d["quant_only"] = True
    if precision:
        d["precision"] = precision
    if writes_lse is not None:
        d["writes_lse"] = bool(writes_lse)
    d["env"] = ["ATTNCHECK_WORKER_MUTATE"] + [e for e in env if e != "ATTNCHECK_WORKER_MUTATE"]
    if note:
        d["note"] = note
    if empty_rows:
        d["empty_rows"] = empty_rows
    if empty_lse:
        d["empty_lse"] = empty_lse
    if params_dtype:
        d["params_dtype"] = params_dtype
    return d


def dtype_option(ap):
    """Adds --dtype D[,D...] to an argparse parser (a worker then declares only those dtypes)."""
    ap.add_argument("--dtype", help="declare only these dtypes, a comma list (cases of others are SKIP)")


def chosen_dtypes(ap, args, dtypes):
    """The declared dtypes under --dtype (dtype_option); an unknown one is a usage error."""
    if not args.dtype:
        return tuple(dtypes)
    want = args.dtype.split(",")
    bad = [d for d in want if d not in dtypes]
    if bad:
        ap.error("--dtype: %s not among %s" % (",".join(bad), ",".join(dtypes)))
    return tuple(d for d in dtypes if d in want)


def holds(x, dtype):
    """Whether dtype holds every value of x (a number or an array) exactly."""
    a = np.atleast_1d(np.asarray(x, dtype=np.float64))
    return bool(np.array_equal(decode(encode(a, dtype), dtype).astype(np.float64), a, equal_nan=True))


def run(attn, argv, tensors="numpy", backward=None, backward_features=None, **decl_args):
    """Main entry: argv = [IN, OUT] (one-shot) or [] / ["--serve"] (persistent). Exit status.
    backward(q, k, v, o, lse, do, problem): the worker declares a backward ("backward": true, or
    the list backward_features of the declared variants it takes) and answers the persistent
    protocol's "backward IN OUT" requests with it."""
    decl = declaration(**decl_args)
    if backward is not None:
        decl["backward"] = True if backward_features is None else list(backward_features)
    if not argv or argv == ["--serve"]:
        return serve(attn, decl, tensors, backward=backward)
    if len(argv) != 2:
        sys.stderr.write("usage: %s IN OUT | %s --serve\n" % (sys.argv[0], sys.argv[0]))
        return 2
    try:
        run_case(attn, argv[0], argv[1], decl, tensors, oneshot=True)
    except NotImplementedError as e:
        sys.stderr.write("unsupported: %s\n" % _one_line(e))
        return 77
    except Exception as e:
        sys.stderr.write("error: %s: %s\n" % (type(e).__name__, _one_line(e)))
        return 1
    return 0
