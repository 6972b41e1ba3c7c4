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
refused (NotImplementedError). Dropout (features=... + DROPOUT_FEATURES, docs/dropout.md):
problem.dropout_p (the binary32 drop probability) and problem.dropout_seed; attn returns its keep-mask
third, (o, lse, mask) (or sets problem.dropout_mask): booleans or 0/1 [B,H,tq,tk] (True = kept), or
floats whose sign marks the dropped entries (FlashAttention's S_dmask); the backward gets the
mask to use in problem.dropout_mask (uint8 0/1).

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
# dropout with the kernel's own keep-mask (docs/dropout.md): the worker returns its mask with o
DROPOUT_FEATURES = ("dropout",)

# the quantized tensors (docs/quantized.md), in protocol_quant.py
if __package__:
    from .protocol_quant import (QUANT_FEATURES, QUANT_FORMATS, STORE_QUANTIZERS, decode,  # noqa: F401
                                 dequantize, encode, pack, store_quantize, unpack)
else:   # run as a file: the folder of protocol.py is on sys.path
    from protocol_quant import (QUANT_FEATURES, QUANT_FORMATS, STORE_QUANTIZERS, decode,  # noqa: F401
                                dequantize, encode, pack, store_quantize, unpack)


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
        drop = "dropout" in self.variants
        self.dropout_p = float.fromhex(va["dropout_p"]) if drop else 0.0
        self.dropout_seed = int(va.get("dropout_seed", "0")) if drop else 0
        # the forward: attn sets it to its keep-mask (or returns it third); the backward: the mask to use
        self.dropout_mask = member("dropout_mask") if drop else None


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
    feats = decl.get("features", ALL_FEATURES)
    for x, spec in quant.items():
        if spec["format"] not in decl.get("q_formats" if x == "q" else "kv_formats", ()):
            raise NotImplementedError("quantized %s (%s) is not declared" % (x, spec["format"]))
        if "store" in spec and (spec["store"] not in decl.get("store_quantizers", ()) or "quant_store" not in feats):
            raise NotImplementedError("storing %s with %s is not declared" % (x, spec["store"]))
    store = {x: dict(spec, tensor=x) for x, spec in quant.items() if "store" in spec}
    # a quantized tensor arrives as its exact values (float64), read from its codes and scales; a tensor
    # the worker stores itself as its plain values (protocol.store_quantize writes its members)
    qa, ka, va = (dequantize(arrays, x, quant[x]) if x in quant and x not in store else arrays[x] for x in "qkv")
    quant = {x: spec for x, spec in quant.items() if x not in store}
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
    problem.store = store   # tensor name -> its meta.json quant entry (with "tensor"): attn stores it itself
    problem.arrays = arrays   # the case file's members (a store's given scales)
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


def keep_mask(m, shape):
    """A keep-mask as uint8 0/1 [B,H,tq,tk]: booleans (True = kept), 0/1 integers, or floats whose
    sign bit marks the dropped entries (FlashAttention's S_dmask, -0.0 included); larger last two
    dimensions (S_dmask's padding) are cropped."""
    if not isinstance(m, np.ndarray):   # a torch tensor (bf16 and fp8 widened: the sign stays)
        m = m.detach().cpu()
        m = (m.float() if m.is_floating_point() else m).numpy()
    m = np.asarray(m)[:, :, :shape[2], :shape[3]]
    if m.shape != tuple(shape):
        raise ValueError("dropout mask of shape %s, expected %s" % (m.shape, tuple(shape)))
    if m.dtype.kind == "f":
        return (~np.signbit(m)).astype(np.uint8)
    if m.dtype != np.bool_ and m.size and (m.min() < 0 or m.max() > 1):
        raise ValueError("dropout mask: integer entries must be 0 (dropped) or 1 (kept)")
    return m.astype(np.uint8)


def run_case(attn, inp, out, decl, tensors, oneshot=False):
    """Run attn on the case file inp and write out; raises on failure. The output carries the
    class attn names for the case (problem.precision), or in one-shot mode the declared one, and
    for dropout the keep-mask attn returned third (or set as problem.dropout_mask)."""
    problem, q, k, v, arrays, torch = _load(inp, decl, tensors)
    problem.dropout_mask = None   # the kernel's own
    res = attn(q, k, v, problem)
    res = res if isinstance(res, tuple) else (res,)
    o, lse = res[0], res[1] if len(res) > 1 else None
    third = res[2] if len(res) > 2 else None
    members = {"o": _encode_out(torch, o, problem.o_dtype)}
    if "dropout" in problem.variants:   # the third: the keep-mask
        m = third if third is not None else problem.dropout_mask
        if m is None:
            raise ValueError("a dropout case needs the kernel's keep-mask (returned third, or problem.dropout_mask)")
        members["dropout_mask"] = keep_mask(m, (problem.batch, problem.heads, problem.tq, problem.tk))
    else:   # the third: the members a quantize-on-store kernel stored
        if problem.store and not third:
            raise ValueError("a quantize-on-store case: attn must return (o, lse, stored members)")
        members.update(third or {})
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
                kv_formats=(), q_formats=(), params_dtype=None, store_quantizers=(), quant_only=False):
    """The JSON object a worker declares itself with (README, "Without C")."""
    d = {"name": name or os.path.basename(sys.argv[0] or "python-worker"), "dtypes": list(dtypes),
         "masks": list(masks), "features": list(features)}
    if kv_formats:
        d["kv_formats"] = list(kv_formats)
    if q_formats:
        d["q_formats"] = list(q_formats)
    if store_quantizers:
        d["store_quantizers"] = list(store_quantizers)
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
