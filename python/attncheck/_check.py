"""attncheck.check and check_grad: the problem from the arrays, the case and the judgement
through libattncheck."""
import ctypes
import json
import math
import os

from . import _dropout, _lib, _quant
from ._arrays import as_array
from ._quant import Quantized

_RANK = {"f64": 5, "f32": 4, "f16": 3, "bf16": 3, "e4m3": 1, "e5m2": 1}
LAYOUTS = ("bthd", "bhtd")


class AttncheckError(ValueError):
    """The library refused the problem or the options (the message names what is wrong)."""


class Worst:
    """The worst element: tensor ("o", "lse", "dq", ...), index (b, h, i, d) in attncheck's
    [batch][head][row][column] order (-1 where it has no such axis), exact value (binary64),
    got (the kernel's), err, W (its worst-case bound), E (typical error)."""

    def __init__(self, s):
        self.tensor = _lib.TENSOR[s.worst_tensor]
        self.index = tuple(int(x) for x in s.worst_index if x >= 0)
        self.exact, self.got, self.err = s.worst_exact, s.worst_got, s.worst_err
        self.W, self.E = s.worst_W, s.worst_E

    def __repr__(self):
        return "Worst(%s%s exact=%r got=%r err=%g W=%g)" % (self.tensor, list(self.index), self.exact, self.got,
                                                             self.err, self.W)


class Result:
    """One judgement. verdict: "PASS", "WARN", "FAIL", "SKIP" or "ERROR"; kinds: the verdict kinds
    found ("FAIL", "SUSPECT", "MASKED-LEAK", ...); err_w, err_e: the largest err/W and err/E;
    worst: the worst element (Worst) or None; line: the command's one-line verdict; explain():
    that line and the detail of the worst element; ok: the command would exit 0."""

    def __init__(self, handle, ctx):
        L = _lib.lib()
        self._h, self._ctx = handle, ctx
        s = _lib.Summary(struct_size=ctypes.sizeof(_lib.Summary))
        L.attncheck_result_summary(handle, ctypes.byref(s))
        self.verdict = _lib.STATUS[s.status]
        self.kinds = _lib.kind_names(s.kinds)
        self.exit_code = s.exit_code
        self.ok = s.exit_code == 0
        self.err_w, self.err_e, self.ulps, self.nmse = s.err_w, s.err_e, s.ulps, s.nmse
        self.bad, self.judged = s.bad, s.judged
        self.rows_judged, self.rows_total = s.rows_judged, s.rows_total
        self.worst = Worst(s) if s.worst_tensor else None
        self.line = L.attncheck_result_line(handle).decode().rstrip("\n")
        self.detail = L.attncheck_result_detail(handle).decode().rstrip("\n")
        self._json = L.attncheck_result_json(handle).decode()

    @property
    def report(self):
        """The command's JSON report of this judgement, as a dict."""
        return json.loads(self._json)

    def explain(self):
        return self.line + ("\n" + self.detail if self.detail else "")

    def save(self, path):
        """Writes the case with the judged outputs: `attncheck check PATH` judges it again."""
        L = _lib.lib()
        if L.attncheck_result_write_case(self._ctx.h, self._h, os.fsencode(path)) < 0:
            raise OSError(self._ctx.error())
        return path

    def __repr__(self):
        return "<attncheck.Result %s>" % self.line

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h:
            _lib.lib().attncheck_result_free(h)


class _Ctx:
    def __init__(self):
        self.L = _lib.lib()
        self.h = self.L.attncheck_ctx_new()
        if not self.h:
            raise MemoryError("attncheck: no context")

    def error(self):
        return self.L.attncheck_ctx_error(self.h).decode()

    def set(self, opt, val, arg=None):
        v = None if val is None else str(val).encode()
        if self.L.attncheck_ctx_set(self.h, opt.encode(), v) < 0:
            raise AttncheckError("%s: %s" % (arg or opt, self.error()))

    def __del__(self):
        h, self.h = getattr(self, "h", None), None
        if h:
            self.L.attncheck_ctx_free(h)


def _mask(causal, tq, tk):
    if causal is None or causal is False:
        return "none"
    if causal == "top-left":
        return "causal"
    if causal == "bottom-right":
        return "causal-bottom-right"
    if causal is True:
        if tq != tk:
            raise ValueError("causal: True is ambiguous when tq (%d) != tk (%d): PyTorch's is_causal aligns the "
                             "mask top-left, FlashAttention (>= 2.1) bottom-right; pass causal='top-left' or "
                             "'bottom-right'" % (tq, tk))
        return "causal"
    raise ValueError("causal: expected False, True, 'top-left' or 'bottom-right', got %r" % (causal,))


def _dense_layout(q, k, v, layout):
    """(layout, B, H, KVH, tq, tk) of 4-D q, k, v; the layout is inferred only when one reading fits."""
    if layout is not None and layout not in LAYOUTS:
        raise ValueError("layout: expected 'bthd' (FlashAttention) or 'bhtd' (PyTorch SDPA), got %r" % (layout,))
    fits = []
    for L in ([layout] if layout else LAYOUTS):
        (B, x1, x2, D), (Bk, y1, y2, Dk), (Bv, z1, z2, Dv) = q.shape, k.shape, v.shape
        T, H, Tk, KVH = (x1, x2, y1, y2) if L == "bthd" else (x2, x1, y2, y1)
        why = None
        if Bk != B or Bv != B:
            why = "batch of q %d, k %d, v %d" % (B, Bk, Bv)
        elif D != Dk:
            why = "head dim of q %d and k %d differ" % (D, Dk)
        elif (z1, z2) != (y1, y2):
            why = "k %s and v %s differ before the head dim" % (k.shape, v.shape)
        elif KVH < 1 or H % KVH:
            why = "heads %d not a multiple of kv heads %d" % (H, KVH)
        fits.append((L, why, (B, H, KVH, T, Tk)))
    good = [f for f in fits if f[1] is None]
    if layout:
        if not good:
            raise ValueError("q %s, k %s, v %s: not a %s layout: %s" % (q.shape, k.shape, v.shape, layout, fits[0][1]))
        return (layout,) + good[0][2]
    if len(good) == 1:
        return (good[0][0],) + good[0][2]
    if not good:
        raise ValueError("q %s, k %s, v %s: neither a B,T,H,D nor a B,H,T,D layout (%s; %s)"
                         % (q.shape, k.shape, v.shape, fits[0][1], fits[1][1]))
    raise ValueError("layout: q %s, k %s read as both B,T,H,D and B,H,T,D: pass layout='bthd' "
                     "(FlashAttention) or layout='bhtd' (PyTorch SDPA)" % (q.shape, k.shape))


def _strides4(a, layout):
    """Strides of a in attncheck's [batch][head][t][d] order."""
    s = a.strides
    return (s[0], s[2], s[1], s[3]) if layout == "bthd" else tuple(s)


def _check_shape(a, want, what):
    if a is not None and tuple(a.shape) != tuple(want):
        raise ValueError("%s: shape %s, expected %s (%s)" % (a.name, a.shape, tuple(want), what))


def _compute_dtype(arrays, dtype):
    """dtype=, else the one of the arrays' dtypes that holds the others."""
    if dtype:
        if dtype not in _lib.DTYPES:
            raise ValueError("dtype: unknown dtype %r" % (dtype,))
        return dtype
    ds = {a.dtype for a in arrays}
    return max(ds, key=lambda d: _RANK[d]) if len(ds) > 1 else arrays[0].dtype


class _Spec:
    """What check() builds: the problem, the tensors it points to (kept alive here), the flags."""

    def __init__(self):
        self.p = _lib.Problem()
        self.p.struct_size = ctypes.sizeof(_lib.Problem)
        self.t = _lib.Tensors()
        self.keep = []
        self.flags = 0

    def point(self, field, arr):
        if arr is not None:
            self.keep.append(arr)
            setattr(self.t, field, arr.ptr())


def _variants(sp, B, H, KVH, tq, tk, *, window, window_align, softcap, alibi_slopes, bias, mask, sinks,
              descale, copy_to_host, varlen):
    p, feats = sp.p, 0
    p.window_left = p.window_right = -1
    if window is not None and tuple(window) != (-1, -1) and tuple(window) != (None, None):
        if len(window) != 2:
            raise ValueError("window: expected (left, right), got %r" % (window,))
        wl, wr = (-1 if x is None else int(x) for x in window)
        if wl < -1 or wr < -1:
            raise ValueError("window: values below -1 in %r" % (window,))
        p.window_left, p.window_right = wl, wr
        if window_align not in ("bottom-right", "top-left"):
            raise ValueError("window_align: expected 'bottom-right' or 'top-left', got %r" % (window_align,))
        p.window_align = 1 if window_align == "top-left" else 0
        feats |= _lib.FEAT["window"]
    if softcap:
        if not (isinstance(softcap, (int, float)) and math.isfinite(softcap) and softcap > 0):
            raise ValueError("softcap: expected a finite value > 0 (or 0 for none), got %r" % (softcap,))
        p.softcap = float(softcap)
        feats |= _lib.FEAT["softcap"]
    nb = B  # sequences for a layout, the batch otherwise
    if alibi_slopes is not None:
        a = as_array("alibi_slopes", alibi_slopes, kind="f32", copy_cuda=copy_to_host)
        if a.shape not in ((H,), (nb, H)):
            raise ValueError("alibi_slopes: shape %s, expected (%d,) or (%d, %d)" % (a.shape, H, nb, H))
        p.alibi_per_batch = 1 if len(a.shape) == 2 else 0
        sp.point("alibi_slopes", a)
        feats |= _lib.FEAT["alibi"]
    rows = tq
    for name, x, kind, field, sfield in (("bias", bias, "float", "bias", "bias_stride"),
                                         ("mask", mask, "bool", "bool_mask", "bool_mask_stride")):
        if x is None:
            continue
        a = as_array(name, x, kind=kind, copy_cuda=copy_to_host)
        bb = 1 if varlen else B
        if len(a.shape) != 4 or a.shape[0] not in (1, bb) or a.shape[1] not in (1, H) or a.shape[2:] != (rows, tk):
            raise ValueError("%s: shape %s, expected (1 or %d, 1 or %d, %d, %d)" % (name, a.shape, bb, H, rows, tk))
        st = list(a.strides)
        for d in (0, 1):
            if a.shape[d] == 1:
                st[d] = 0   # broadcast
        getattr(p, sfield)[:] = st
        if name == "bias":
            p.bias_dtype = _lib.DTYPES[a.dtype]
            feats |= _lib.FEAT["bias"]
        else:
            feats |= _lib.FEAT["bool_mask"]
        sp.point(field, a)
    if sinks is not None:
        a = as_array("sinks", sinks, kind="f32", copy_cuda=copy_to_host)
        if a.shape != (H,):
            raise ValueError("sinks: shape %s, expected (%d,)" % (a.shape, H))
        sp.point("sinks", a)
        feats |= _lib.FEAT["sinks"]
    if descale is not None:
        if len(descale) != 3:
            raise ValueError("descale: expected (descale_q, descale_k, descale_v)")
        for n, x in zip(("descale_q", "descale_k", "descale_v"), descale):
            a = as_array(n, x, kind="f32", copy_cuda=copy_to_host)
            if a.shape != (B, KVH):
                raise ValueError("%s: shape %s, expected (%d, %d)" % (n, a.shape, B, KVH))
            sp.point(n, a)
        feats |= _lib.FEAT["descale"]
    return feats


def _seq_lengths(cu, name):
    c = cu.a.astype("int64")
    if cu.a.ndim != 1 or len(c) < 2:
        raise ValueError("%s: expected a 1-D int32 array of batch + 1 prefix sums, got shape %s" % (name, cu.shape))
    return c[1:] - c[:-1]


def _layout_problem(sp, qa, ka, va, cu_seqlens_q, cu_seqlens_k, block_table, cache_seqlens, copy_to_host):
    """A varlen batch (q [total_q, H, dk], k, v [total_k, KVH, d]) or a paged KV cache (k, v
    [num_pages, page_size, KVH, d]) into sp; returns (nseq, H, KVH, tq_b list, tk_b list)."""
    p = sp.p
    paged = block_table is not None
    if len(qa.shape) != 3:
        raise ValueError("q: shape %s; with cu_seqlens_q, q is (total_q, heads, dk)" % (qa.shape,))
    total_q, H, D = qa.shape
    cq = as_array("cu_seqlens_q", cu_seqlens_q, kind="i32", copy_cuda=copy_to_host)
    tqs = _seq_lengths(cq, "cu_seqlens_q")
    nseq = len(tqs)
    sp.point("cu_seqlens_q", cq)
    s = qa.strides
    p.q_stride[:] = (0, s[1], s[0], s[2])
    if paged:
        if len(ka.shape) != 4 or len(va.shape) != 4:
            raise ValueError("k, v: shapes %s, %s; with block_table they are (num_pages, page_size, kv_heads, d)"
                             % (ka.shape, va.shape))
        npg, ps, KVH, Dk = ka.shape
        bt = as_array("block_table", block_table, kind="i32", copy_cuda=copy_to_host)
        if cache_seqlens is None:
            raise ValueError("cache_seqlens: required with block_table")
        cs = as_array("cache_seqlens", cache_seqlens, kind="i32", copy_cuda=copy_to_host)
        if len(bt.shape) != 2 or bt.shape[0] != nseq:
            raise ValueError("block_table: shape %s, expected (%d, max_pages)" % (bt.shape, nseq))
        if cs.shape != (nseq,):
            raise ValueError("cache_seqlens: shape %s, expected (%d,)" % (cs.shape, nseq))
        sp.point("block_table", bt)
        sp.point("cache_seqlens", cs)
        p.page_size, p.num_pages, p.max_pages = ps, npg, bt.shape[1]
        p.total_k = npg * ps
        for arr, field in ((ka, "k_stride"), (va, "v_stride")):
            s = arr.strides
            getattr(p, field)[:] = (s[0], s[2], s[1], s[3])
        tks = [int(x) for x in cs.a]
        p.features |= _lib.FEAT["paged"]
    else:
        if len(ka.shape) != 3 or len(va.shape) != 3:
            raise ValueError("k, v: shapes %s, %s; with cu_seqlens_q they are (total_k, kv_heads, d)"
                             % (ka.shape, va.shape))
        if cu_seqlens_k is None:
            raise ValueError("cu_seqlens_k: required with cu_seqlens_q (or block_table for a paged cache)")
        ck = as_array("cu_seqlens_k", cu_seqlens_k, kind="i32", copy_cuda=copy_to_host)
        tks = [int(x) for x in _seq_lengths(ck, "cu_seqlens_k")]
        if len(tks) != nseq:
            raise ValueError("cu_seqlens_k: %d sequences, cu_seqlens_q has %d" % (len(tks), nseq))
        sp.point("cu_seqlens_k", ck)
        total_k, KVH, Dk = ka.shape
        p.total_k = total_k
        for arr, field in ((ka, "k_stride"), (va, "v_stride")):
            s = arr.strides
            getattr(p, field)[:] = (0, s[1], s[0], s[2])
        p.features |= _lib.FEAT["varlen"]
    if Dk != D:
        raise ValueError("k: head dim %d, q has %d" % (Dk, D))
    if va.shape[:-1] != ka.shape[:-1]:
        raise ValueError("v: shape %s does not match k %s before the head dim" % (va.shape, ka.shape))
    if KVH < 1 or H % KVH:
        raise ValueError("k: %d kv heads do not divide q's %d heads" % (KVH, H))
    p.total_q = total_q
    return nseq, H, KVH, [int(x) for x in tqs], tks


def _dropout_spec(sp, dropout_p, dropout_mask, copy_to_host):
    """dropout_p= and dropout_mask= into sp (docs/dropout.md): the binary32 p and the kernel's keep-mask."""
    p = sp.p
    if dropout_p is None:
        if dropout_mask is not None:
            raise ValueError("dropout_mask: given without dropout_p")
        return
    if sp.layout == "thd":
        raise ValueError("dropout_p: dropout with cu_seqlens_q or block_table is not supported yet")
    p.dropout_p = _dropout.probability(dropout_p)
    p.features |= _lib.FEAT["dropout"]
    shape = (p.batch, p.heads, p.tq, p.tk)
    if dropout_mask is None:
        if p.dropout_p > 0:
            raise ValueError("dropout_mask: required with dropout_p > 0 (the kernel's keep-mask: booleans, 0/1, "
                             "or FlashAttention's S_dmask from return_attn_probs=True)")
    m = _dropout.keep_mask(dropout_mask, shape, copy_to_host) if dropout_mask is not None else _dropout.all_kept(shape)
    sp.point("dropout_mask", m)


def _build(q, k, v, o, *, layout, dtype, scale, causal, window, window_align, softcap, alibi_slopes, bias, mask,
           sinks, descale, cu_seqlens_q, cu_seqlens_k, block_table, cache_seqlens, copy_to_host, dropout_p=None,
           dropout_mask=None, do=None):
    """(spec, o array, o strides, the user layout, shapes) of check()'s arguments."""
    cc = copy_to_host
    qts = {x: t for x, t in zip("qkv", (q, k, v)) if isinstance(t, Quantized)}
    qa, ka, va = (_quant.stand_in(x, t, cc) if x in qts else as_array(x, t, bits_dtype=dtype, copy_cuda=cc)
                  for x, t in zip("qkv", (q, k, v)))
    oa = as_array("o", o, bits_dtype=dtype, copy_cuda=cc) if o is not None else None
    da = as_array("do", do, bits_dtype=dtype, copy_cuda=cc) if do is not None else None
    sp = _Spec()
    p = sp.p
    layout_case = cu_seqlens_q is not None or block_table is not None
    if layout_case:
        if cu_seqlens_q is None:
            raise ValueError("cu_seqlens_q: required with block_table (queries are packed)")
        nseq, H, KVH, tqs, tks = _layout_problem(sp, qa, ka, va, cu_seqlens_q, cu_seqlens_k, block_table,
                                                cache_seqlens, cc)
        B, tq, tk = nseq, max(tqs), max(tks)
        L = "thd"
        o_shape = (p.total_q, H, va.shape[-1])
        if causal is True and any(a != b for a, b in zip(tqs, tks)):
            raise ValueError("causal: True is ambiguous when a sequence's tq != tk: pass causal='top-left' or "
                             "'bottom-right' (FlashAttention's varlen causal is bottom-right)")
        mask_name = _mask("top-left" if causal is True else causal, 1, 1)
    else:
        for a in (qa, ka, va):
            if len(a.shape) != 4:
                raise ValueError("%s: shape %s; q, k, v are 4-D (B,T,H,D or B,H,T,D), or 3-D with cu_seqlens_q"
                                 % (a.name, a.shape))
        L, B, H, KVH, tq, tk = _dense_layout(qa, ka, va, layout)
        p.q_stride[:] = _strides4(qa, L)
        p.k_stride[:] = _strides4(ka, L)
        p.v_stride[:] = _strides4(va, L)
        o_shape = (B, tq, H, va.shape[-1]) if L == "bthd" else (B, H, tq, va.shape[-1])
        mask_name = _mask(causal, tq, tk)
    D, Dv = qa.shape[-1], va.shape[-1]
    for a in (oa, da):
        _check_shape(a, o_shape, "like q with v's head dim")
        if a is not None:
            s = a.strides
            st = (0, s[1], s[0], s[2]) if L == "thd" else _strides4(a, L)
            (p.o_stride if a is oa else sp.__dict__.setdefault("do_stride", [0, 0, 0, 0]))[:] = st
    dense = [a for x, a in zip("qkv", (qa, ka, va)) if x not in qts]
    # every input quantized and no dtype=: the compute dtype is o's
    cdt = _compute_dtype(dense, dtype) if dense or dtype else (oa.dtype if oa is not None else "f32")
    odt = oa.dtype if oa is not None else (da.dtype if da is not None else cdt)
    dts = tuple(cdt if x in qts else a.dtype for x, a in zip("qkv", (qa, ka, va))) + (odt,)
    p.dtype = _lib.DTYPES[cdt]
    p.q_dtype, p.k_dtype, p.v_dtype, p.o_dtype = (_lib.DTYPES[d] for d in dts)
    if any(d != cdt for d in dts):
        p.features |= _lib.FEAT["mixed_dtypes"]
    p.mask = _lib.MASKS[mask_name]
    p.batch, p.heads, p.kv_heads, p.tq, p.tk, p.dk, p.dv = B, H, KVH, tq, tk, D, Dv
    if scale is None:
        sp.flags |= _lib.CASE_DEFAULT_SCALE
    else:
        if not isinstance(scale, (int, float)) or not math.isfinite(scale):
            raise ValueError("scale: expected a finite number or None (1/sqrt(dk)), got %r" % (scale,))
        p.scale = float(scale)
    p.features |= _variants(sp, B, H, KVH, p.total_q if layout_case else tq, tk, window=window,
                            window_align=window_align, softcap=softcap, alibi_slopes=alibi_slopes, bias=bias,
                            mask=mask, sinks=sinks, descale=descale, copy_to_host=cc, varlen=layout_case)
    for a, f in ((qa, "q"), (ka, "k"), (va, "v")):
        if f not in qts:
            sp.point(f, a)
    if qts:
        if layout_case:
            paged = block_table is not None
            shapes = {"q": (1, H, p.total_q, D), "k": (1, KVH, p.total_k, D), "v": (1, KVH, p.total_k, Dv)}
            kvtok = (p.num_pages, p.page_size) if paged else (p.total_k,)
            tok = {"q": (p.total_q,), "k": kvtok, "v": kvtok}
            lays = {"q": "thd", "k": "paged" if paged else "thd", "v": "paged" if paged else "thd"}
        else:
            shapes = {"q": (B, H, tq, D), "k": (B, KVH, tk, D), "v": (B, KVH, tk, Dv)}
            tok, lays = {}, {"q": L, "k": L, "v": L}
        _quant.describe(sp, qts, lays, shapes, tok, cc)
    sp.layout, sp.o, sp.do = L, oa, da
    _dropout_spec(sp, dropout_p, dropout_mask, cc)
    return sp


def _case(ctx, sp):
    d = _lib.CaseDesc(struct_size=ctypes.sizeof(_lib.CaseDesc), flags=sp.flags, problem=ctypes.pointer(sp.p),
                      tensors=ctypes.pointer(sp.t))
    if sp.do is not None:
        d.dout = sp.do.ptr()
        d.do_stride[:] = sp.do_stride
    h = ctypes.c_void_p()
    if ctx.L.attncheck_case_new(ctx.h, ctypes.byref(d), ctypes.byref(h)) < 0:
        raise AttncheckError(ctx.error())
    return h


def _context(precision, rows, empty_rows, policy, atol, rtol, kappa, cache, threads, name, case_name, repro):
    ctx = _Ctx()
    if precision:
        ctx.set("precision", precision)
    if rows is not None and rows != "all":
        if isinstance(rows, str):
            spec = rows
        else:
            try:
                spec = ",".join(str(int(r)) for r in rows)
            except (TypeError, ValueError):
                raise ValueError("rows: expected 'edges+K', 'all' or a list of row numbers, got %r" % (rows,)) from None
        ctx.set("rows", spec)
    if empty_rows:
        ctx.set("empty-rows", empty_rows)
    if policy:
        items = policy.items() if isinstance(policy, dict) else (p.split("=", 1) for p in policy)
        for kind, pol in items:
            ctx.set("policy", "%s=%s" % (kind, pol))
    if atol is not None:
        ctx.set("atol", repr(float(atol)))
    if rtol is not None:
        ctx.set("rtol", repr(float(rtol)))
    if kappa is not None:
        ctx.set("kappa", repr(float(kappa)))
    if not cache:
        ctx.set("no-cache", "")
    if threads is not None:
        ctx.set("threads", int(threads))
    ctx.set("name", name)
    ctx.set("case", case_name)
    if repro:
        ctx.set("repro", repro)
    return ctx


def _lse_array(lse, sp, layout_case, copy_to_host):
    la = as_array("lse", lse, kind="f32", copy_cuda=copy_to_host)
    p = sp.p
    want = (p.heads, p.total_q) if layout_case else (p.batch, p.heads, p.tq)
    _check_shape(la, want, "natural-log LSE, float32")
    return la


_COMMON = ("layout", "dtype", "scale", "causal", "window", "window_align", "softcap", "alibi_slopes", "bias", "mask",
           "sinks", "descale", "cu_seqlens_q", "cu_seqlens_k", "block_table", "cache_seqlens", "copy_to_host",
           "dropout_p", "dropout_mask")
_CTX = ("precision", "rows", "empty_rows", "policy", "atol", "rtol", "kappa", "cache", "threads", "name",
        "case_name", "repro")
DEFAULTS = dict(layout=None, dtype=None, scale=None, causal=False, window=None, window_align="bottom-right",
                softcap=None, alibi_slopes=None, bias=None, mask=None, sinks=None, descale=None, cu_seqlens_q=None,
                cu_seqlens_k=None, block_table=None, cache_seqlens=None, copy_to_host=True, dropout_p=None,
                dropout_mask=None, precision=None,
                rows=None, empty_rows=None, policy=None, atol=None, rtol=None, kappa=None, cache=True, threads=None,
                name="python", case_name="<arrays>", repro=None)


def _split(kw):
    bad = [k for k in kw if k not in DEFAULTS]
    if bad:
        raise TypeError("unexpected keyword argument%s %s" % ("s" if len(bad) > 1 else "", ", ".join(map(repr, bad))))
    a = dict(DEFAULTS)
    a.update(kw)
    return {k: a[k] for k in _COMMON}, {k: a[k] for k in _CTX}


def check(q, k, v, o, lse=None, **kw):
    sk, ck = _split(kw)
    sp = _build(q, k, v, o, **sk)
    ctx = _context(**ck)
    la = _lse_array(lse, sp, sp.layout == "thd", sk["copy_to_host"]) if lse is not None else None
    h = _case(ctx, sp)
    try:
        out = _lib.Outputs(struct_size=ctypes.sizeof(_lib.Outputs), o=sp.o.ptr())
        out.o_stride[:] = sp.p.o_stride
        if la is not None:
            out.lse = la.ptr()
        r = ctypes.c_void_p()
        if ctx.L.attncheck_judge(ctx.h, h, ctypes.byref(out), ctypes.byref(r)) < 0:
            raise AttncheckError(ctx.error())
        res = Result(r, ctx)
        _user_index(res, sp.layout)
        return res
    finally:
        ctx.L.attncheck_case_free(h)


def _user_index(res, layout):
    """The worst o element's index in the caller's layout (bthd: (b, i, h, d)), leading the detail."""
    w = res.worst
    if w is None:
        return
    w.user_index = w.index
    if layout == "bthd" and w.tensor == "o" and len(w.index) == 4:
        b, h, i, d = w.index
        w.user_index = (b, i, h, d)
        res.detail = ("  worst element: o[%d, %d, %d, %d] of your B,T,H,D argument (o[%d, %d, %d, %d] below, in B,H,T,D)\n"
                      % (w.user_index + w.index)) + res.detail


def check_grad(q, k, v, do, dq, dk, dv, dsinks=None, **kw):
    if any(isinstance(x, Quantized) for x in (q, k, v)):
        raise ValueError("check_grad: quantized q, k, v have no backward judgement (an inference cache)")
    sk, ck = _split(kw)
    sp = _build(q, k, v, None, do=do, **sk)
    ctx = _context(**ck)
    gs = []
    for name, x, ref in (("dq", dq, sp.p.q_stride), ("dk", dk, sp.p.k_stride), ("dv", dv, sp.p.v_stride)):
        like = {"dq": q, "dk": k, "dv": v}[name]
        a = as_array(name, x, bits_dtype=sk["dtype"], copy_cuda=sk["copy_to_host"])
        if tuple(a.shape) != tuple(like.shape):
            raise ValueError("%s: shape %s, expected %s (the shape of %s)" % (name, a.shape, tuple(like.shape), name[1]))
        if a.dtype != _lib_name(sp.p.dtype):
            raise TypeError("%s: dtype %s, expected the compute dtype %s" % (name, a.dtype, _lib_name(sp.p.dtype)))
        gs.append(a)
    h = _case(ctx, sp)
    try:
        g = _lib.Grads(struct_size=ctypes.sizeof(_lib.Grads), dq=gs[0].ptr(), dk=gs[1].ptr(), dv=gs[2].ptr())
        for a, field, arr in zip(gs, ("dq_stride", "dk_stride", "dv_stride"), ("q", "k", "v")):
            getattr(g, field)[:] = _grad_strides(sp, a)
        if dsinks is not None:
            ds = as_array("dsinks", dsinks, kind="f32", copy_cuda=sk["copy_to_host"])
            _check_shape(ds, (sp.p.heads,), "one value per head")
            g.dsinks = ds.ptr()
            gs.append(ds)
        r = ctypes.c_void_p()
        if ctx.L.attncheck_judge_grad(ctx.h, h, ctypes.byref(g), ctypes.byref(r)) < 0:
            raise AttncheckError(ctx.error())
        return Result(r, ctx)
    finally:
        ctx.L.attncheck_case_free(h)


def _lib_name(code):
    return {v: k for k, v in _lib.DTYPES.items()}[code]


def _grad_strides(sp, a):
    s = a.strides
    if sp.layout == "thd":
        return (0, s[1], s[0], s[2])
    return _strides4(a, sp.layout)
