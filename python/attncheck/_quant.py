"""Quantized q, k, v for attncheck.check: a tensor given as the codes and scales a serving engine
stores (docs/quantized.md), handed to libattncheck as a kernel is handed them (ABI 5's
tensors.quant), never as a dequantized copy."""
import ctypes

import numpy as np

from ._arrays import as_array

# name: (ABI number, block, scale dtype, aux ("min", "zero", "tscale" or None), default granularity,
#        granularities, ggml block bytes or 0)
FORMATS = {
    "q8_0": (1, 32, "f16", None, "block", ("block",), 34),
    "q4_0": (2, 32, "f16", None, "block", ("block",), 18),
    "q4_1": (3, 32, "f16", "min", "block", ("block",), 20),
    "q5_0": (4, 32, "f16", None, "block", ("block",), 22),
    "q5_1": (5, 32, "f16", "min", "block", ("block",), 24),
    "iq4_nl": (6, 32, "f16", None, "block", ("block",), 18),
    "e4m3fn": (7, 0, "f32", None, "tensor", ("tensor", "head", "token", "channel", "group"), 0),
    "e4m3fnuz": (8, 0, "f32", None, "tensor", ("tensor", "head", "token", "channel", "group"), 0),
    "e5m2": (9, 0, "f32", None, "tensor", ("tensor", "head", "token", "channel", "group"), 0),
    "int8": (10, 0, "f32", "zero", "token", ("token", "channel", "head", "tensor", "group"), 0),
    "int4": (11, 0, "f32", "zero", "token", ("token", "channel", "head", "tensor", "group"), 0),
    "nvfp4": (12, 16, "e4m3", "tscale", "block", ("block",), 0),
    "mxfp4": (13, 32, "e8m0", None, "block", ("block",), 17),
    "int2": (14, 0, "f32", "zero", "token", ("token", "channel", "head", "tensor", "group"), 0),
    "uint8": (15, 0, "f32", "zero", "token", ("token", "channel", "head", "tensor", "group"), 0),
}
# codes a byte packs (packed=), the ABI's numbers of scale and zero-point dtypes and of packing
_BITS = {"int4": 4, "int2": 2, "nvfp4": 4, "mxfp4": 4}
_SD = {"f32": 1, "f16": 2, "bf16": 3, "e4m3": 4, "e8m0": 16, "i8": 17, "u8": 18}
_PACKING = {None: 0, "low": 1, "high": 2}
_ALIASES = {"fp8_e4m3fn": "e4m3fn", "fp8_e4m3fnuz": "e4m3fnuz", "fp8_e5m2": "e5m2"}
GRANULARITIES = {"block": 0, "tensor": 1, "head": 2, "token": 3, "channel": 4, "group": 0, "tile": 0}


def _parse_granularity(name, g, fmt_block):
    """'token', 'group:64', 'tile:128x128', 'channel:32' -> (kind, block, token_group)."""
    word, _, size = (g or "").partition(":")
    try:
        if word == "group":
            return "group", int(size), 0
        if word == "tile":
            a, b = size.split("x")
            return "group", int(b), int(a) if int(a) > 1 else 0
        if word == "channel" and size:
            return "channel", 0, int(size)
    except ValueError:
        raise ValueError("granularity: %r: expected group:N, tile:GxN or channel:G" % g) from None
    if size:
        raise ValueError("granularity: %r takes no size" % g)
    return word, fmt_block if word == "block" else 0, 0


class QuantTensor(ctypes.Structure):
    """attncheck_quant_tensor of <attncheck/kernel.h>."""
    _fields_ = [("format", ctypes.c_int32), ("granularity", ctypes.c_int32), ("block", ctypes.c_int64),
                ("codes", ctypes.c_void_p), ("scales", ctypes.c_void_p), ("aux", ctypes.c_void_p),
                ("ggml", ctypes.c_void_p), ("code_stride", ctypes.c_int64 * 4),
                ("scale_stride", ctypes.c_int64 * 4), ("ggml_stride", ctypes.c_int64 * 4)]


class Quant(ctypes.Structure):
    """attncheck_quant of <attncheck/kernel.h>."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("reserved0", ctypes.c_uint32), ("t", QuantTensor * 3)]


class Quantized:
    """A quantized q, k or v as a serving engine stores it, passed to check() and
    assert_attention_close() in place of the tensor:

        attncheck.Quantized("e4m3fn", codes, scales, granularity="head")     # vLLM-style fp8 cache
        attncheck.Quantized("int4", codes, scales, zeros=z, granularity="channel")   # KIVI-style
        attncheck.Quantized("q4_0", ggml=blocks)                             # ggml's block bytes

    codes: one code per element, shaped as the tensor would be (B,T,H,D or B,H,T,D; (total, H, D)
    for a varlen batch; (num_pages, page_size, KVH, D) for a paged cache): uint8 or int8 (q8_0 and
    int8 signed), the bits of fp8 and e2m1 codes (torch.float8_e4m3fn tensors are read as bits),
    ggml's codes unpacked (q4_0's 0..15 before its -8). scales, by granularity (the tensor's own
    axis order, its head dim replaced): block (..., D // block); token (B, T, H) or (B, H, T),
    (total, H), (num_pages, page_size, H); head (B, H) or (H,) shared by the batch; channel
    (B, H, D), (H, D) for a layout; tensor a number or (1,). Their dtype is the format's: float16
    (ggml), float32 (fp8, int; float64 taken when binary32 holds it exactly), uint8 e4m3 bits
    (nvfp4) or e8m0 exponents (mxfp4). mins (q4_1, q5_1: float16), zeros (int8, int4: int8) are
    shaped as scales; tensor_scale (nvfp4) one float32. ggml: uint8 blocks in ggml's byte layout
    (block_q4_0 ...), shaped as the tensor with its head dim replaced by D // 32 * block bytes (or, for
    a 4-D tensor, (..., D // 32, block bytes)). Values are the format's exact ones (docs/quantized.md).

    The quantized layouts of docs/quantized.md (int2 and uint8 too): granularity "group:N" (int and
    fp8: a scale per token and N elements of d; scales (..., D // N)), "tile:GxN" (G tokens by N:
    scales with T replaced by ceil(T / G) and D by D // N), "channel:G" (per channel over G tokens:
    (B, ceil(T / G), H, D) or (B, H, ceil(T / G), D)); scale_dtype "f16" or "bf16" for int and fp8
    scales of that dtype; zero_dtype "f16", "bf16", "f32" (float zero points: (q - z) * s) or "u8"
    (uint8's own); packed "low" or "high": int4, int2, nvfp4 and mxfp4 codes two (int2: four) to a
    byte along the last axis, the first code in the low (high) bits, D // per bytes a row."""

    def __init__(self, format, codes=None, scales=None, *, granularity=None, mins=None, zeros=None,
                 tensor_scale=None, ggml=None, scale_dtype=None, zero_dtype=None, packed=None):
        name = _ALIASES.get(format, format)
        if name not in FORMATS:
            raise ValueError("format: unknown quantized format %r (%s)" % (format, ", ".join(FORMATS)))
        self.format = name
        num, block, sdt, aux, dgran, grans, gbytes = FORMATS[name]
        kind, self.block, self.token_group = _parse_granularity(name, granularity or dgran, block)
        if kind not in grans:
            raise ValueError("granularity: %s takes %s, not %r" % (name, ", ".join(grans), granularity))
        self.granularity = "block" if kind == "group" else kind
        if scale_dtype not in (None, sdt) and not (sdt == "f32" and scale_dtype in ("f16", "bf16")):
            raise ValueError("scale_dtype: %s takes %s, not %r" % (name, sdt if sdt != "f32" else "f32, f16, bf16",
                                                                   scale_dtype))
        if zero_dtype is not None and (aux != "zero" or zero_dtype not in ("i8", "u8", "f16", "bf16", "f32")):
            raise ValueError("zero_dtype: %r (%s)" % (zero_dtype, "i8 or u8 integers, f16, bf16, f32 floats" if aux == "zero"
                                                      else name + " has no zero points"))
        if packed not in _PACKING or (packed and name not in _BITS):
            raise ValueError("packed: %r (low or high, for %s)" % (packed, ", ".join(_BITS)))
        self.scale_dtype = scale_dtype or sdt
        self.zero_dtype = zero_dtype or ("u8" if name == "uint8" else "i8")
        self.packed = packed
        self.codes, self.scales, self.mins, self.zeros = codes, scales, mins, zeros
        self.tensor_scale, self.ggml = tensor_scale, ggml
        if ggml is not None:
            if not gbytes:
                raise ValueError("ggml: %s has no ggml block layout (pass codes and scales)" % name)
            if codes is not None or scales is not None:
                raise ValueError("%s: pass codes and scales, or ggml blocks, not both" % name)
        elif codes is None or scales is None:
            raise ValueError("%s: codes and scales are required (or ggml= blocks for a ggml format)" % name)
        want = {"min": ("mins", mins), "zero": ("zeros", zeros), "tscale": ("tensor_scale", tensor_scale)}
        for kind, (arg, val) in want.items():
            if aux == kind and val is None and ggml is None:
                raise ValueError("%s: %s is required" % (name, arg))
            if aux != kind and val is not None:
                raise ValueError("%s: takes no %s" % (name, arg))

    def __repr__(self):
        return "Quantized(%r, granularity=%r)" % (self.format, self.granularity)


def stand_in(name, qt, copy_to_host):
    """The Array check() lays out in place of quantized tensor qt: its codes, or for ggml blocks
    alone an array-less stand-in with the tensor's shape; the shape gives the layout. The numpy
    arrays are kept on qt._np."""
    gbytes = FORMATS[qt.format][6]
    if qt.ggml is not None:
        g = as_array(name + ".ggml", qt.ggml, kind="bytes", copy_cuda=copy_to_host)
        a = np.ascontiguousarray(g.a)
        if a.ndim == 5 and a.shape[-1] == gbytes:   # (..., D/32, bytes) of a 4-D tensor
            a = a.reshape(a.shape[:-2] + (a.shape[-2] * gbytes,))
        if a.ndim not in (3, 4) or a.shape[-1] % gbytes:
            raise ValueError("%s.ggml: shape %s: rows of whole %d-byte %s blocks expected" % (name, g.shape, gbytes,
                                                                                          qt.format))
        shape = a.shape[:-1] + (a.shape[-1] // gbytes * 32,)
        qt._np = {"ggml": a}
        return _FakeArray(name, shape, _contig(shape))
    c = as_array(name, qt.codes, kind="bytes", copy_cuda=copy_to_host)
    qt._np = {"codes": c}
    if qt.packed:   # two or four codes a byte along the last axis: the tensor's shape has D = bytes * per
        per = 8 // _BITS[qt.format]
        c.a = np.ascontiguousarray(c.a)
        shape = c.a.shape[:-1] + (c.a.shape[-1] * per,)
        return _FakeArray(name, shape, _contig(shape))
    return c


class _FakeArray:
    """The shape and strides of a tensor given as ggml blocks alone (no per-element array)."""

    def __init__(self, name, shape, strides):
        self.name, self.shape, self.strides, self.dtype = name, tuple(shape), tuple(strides), None

    def ptr(self):
        return None


def _contig(shape):
    st, n = [], 1
    for s in reversed(shape):
        st.append(n)
        n *= s
    return tuple(reversed(st))


def _exact_f32(name, a):
    if a.dtype == np.float32:
        return a
    if a.dtype.kind != "f":
        raise TypeError("%s: float32 values expected, got dtype %s" % (name, a.dtype))
    b = a.astype(np.float32)
    with np.errstate(invalid="ignore"):
        same = (b.astype(a.dtype) == a) | (np.isnan(a) & np.isnan(b))
    if not same.all():
        raise ValueError("%s: values binary32 does not hold (the scales of this format are float32)" % name)
    return b


def _scale_array(name, x, sdt, copy_to_host):
    if sdt in ("e4m3", "e8m0"):
        return np.ascontiguousarray(as_array(name, x, kind="bytes", copy_cuda=copy_to_host).a)
    a = as_array(name, np.asarray(x) if np.isscalar(x) else x, kind="float", copy_cuda=copy_to_host)
    if sdt == "f16":
        if a.dtype != "f16":
            raise TypeError("%s: float16 values expected (its dtype is f16), got %s" % (name, a.dtype))
        return np.ascontiguousarray(a.a)
    if sdt == "bf16":   # bfloat16 (torch, ml_dtypes) arrives as its bits
        if a.dtype != "bf16":
            raise TypeError("%s: bfloat16 values expected (its dtype is bf16), got %s" % (name, a.dtype))
        return np.ascontiguousarray(a.a)
    if a.dtype not in ("f32", "f64", "f16"):
        raise TypeError("%s: float32 values expected, got %s" % (name, a.dtype))
    return np.ascontiguousarray(_exact_f32(name, np.asarray(a.a)))


def describe(sp, qts, lays, shapes, tok, copy_to_host):
    """Fills sp (check()'s spec) with the Quant struct of the quantized tensors qts ('q', 'k', 'v'
    -> Quantized), their arrays kept alive in sp.keep. lays[x]: 'bthd', 'bhtd', 'thd' (varlen) or
    'paged'; shapes[x]: (B, H, T, D) of tensor x (dense); tok[x]: the token axes of a layout's
    tensor ((total,) for varlen, (num_pages, page_size) for a paged k or v)."""
    q = Quant()
    q.struct_size = ctypes.sizeof(Quant)
    sp.keep.append(q)
    for i, x in enumerate("qkv"):
        if x not in qts:
            continue
        qt, layout = qts[x], lays[x]
        num, block, sdt, aux, dgran, grans, gbytes = FORMATS[qt.format]
        B, H, T, D = shapes[x]
        t = q.t[i]
        t.format, t.granularity, t.block = num, GRANULARITIES[qt.granularity], qt.block
        setattr(sp.p, x + "_format", num)
        qs = sp.p.quant_spec[i]   # ABI 5's quantized layouts: token groups, dtypes, packing
        qs.granularity, qs.block, qs.token_group, qs.packing = t.granularity, qt.block, qt.token_group, _PACKING[qt.packed]
        qs.scale_dtype = _SD[qt.scale_dtype]
        qs.zero_dtype = _SD[qt.zero_dtype] if aux == "zero" else -1
        if qt.ggml is not None:
            a = qt._np["ggml"]
            sp.keep.append(a)
            t.ggml = a.ctypes.data
            t.ggml_stride[:] = _ggml_strides(a, layout) + (gbytes,)
            continue
        c = qt._np["codes"]
        sp.keep.append(c.a)
        t.codes = c.ptr()   # code_stride all zero: the problem's stride of the tensor
        gr = qt.granularity
        want = _scale_shape(gr, layout, B, H, -(-T // qt.token_group) if qt.token_group > 1 else T, D, qt.block,
                            tok.get(x), qt.token_group)
        s = _fit(x + ".scales", _scale_array(x + ".scales", qt.scales, qt.scale_dtype, copy_to_host), want, gr)
        sp.keep.append(s)
        t.scales = s.ctypes.data
        t.scale_stride[:] = _scale_strides(s, gr, layout)
        if aux == "min":
            m = _fit(x + ".mins", _scale_array(x + ".mins", qt.mins, "f16", copy_to_host), want, gr)
            sp.keep.append(m)
            t.aux = m.ctypes.data
        elif aux == "zero" and qt.zero_dtype in ("f16", "bf16", "f32"):   # float zero points
            z = _fit(x + ".zeros", _scale_array(x + ".zeros", qt.zeros, qt.zero_dtype, copy_to_host), want, gr)
            sp.keep.append(z)
            t.aux = z.ctypes.data
        elif aux == "zero":
            z = np.ascontiguousarray(as_array(x + ".zeros", qt.zeros, kind="bytes", copy_cuda=copy_to_host).a)
            z = _fit(x + ".zeros", z.view(np.int8 if qt.zero_dtype == "i8" else np.uint8), want, gr)
            sp.keep.append(z)
            t.aux = z.ctypes.data
        elif aux == "tscale":
            ts = qt.tensor_scale
            ts = np.asarray(ts.detach().cpu().numpy() if hasattr(ts, "detach") else ts, dtype=None)
            if ts.dtype.kind != "f":
                ts = ts.astype(np.float64)
            ts = np.ascontiguousarray(_exact_f32(x + ".tensor_scale", ts).reshape(-1))
            if ts.size != 1:
                raise ValueError("%s.tensor_scale: one value expected, got %d" % (x, ts.size))
            sp.keep.append(ts)
            t.aux = ts.ctypes.data
    sp.t.quant = ctypes.cast(ctypes.pointer(q), ctypes.c_void_p)


def _scale_shape(gr, layout, B, H, T, D, block, tok, token_group=0):
    """The scale shape a caller passes for granularity gr, in the tensor's own axis order (T: the scale
    rows, ceil(T / token_group) over token groups)."""
    if gr == "tensor":
        return (1,)
    if gr == "channel" and token_group > 1:
        return (B, T, H, D) if layout == "bthd" else (B, H, T, D)
    if layout in ("thd", "paged"):
        return {"head": (H,), "channel": (H, D), "token": tuple(tok) + (H,),
                "block": tuple(tok) + (H, D // max(block, 1))}[gr]
    if gr == "head":
        return (B, H)
    if gr == "channel":
        return (B, H, D)
    if gr == "token":
        return (B, T, H) if layout == "bthd" else (B, H, T)
    return (B, T, H, D // block) if layout == "bthd" else (B, H, T, D // block)


def _fit(name, a, want, gr):
    """a checked against the wanted shape, contiguous (a layout's token axes merged: slot t of a
    paged cache is page * page_size + slot, as kernels are handed it); per-head scales (H,) are
    shared by every sequence of a dense batch."""
    a = np.asarray(a)
    if gr == "tensor":
        if a.size != 1:
            raise ValueError("%s: one value for a per-tensor scale, got shape %s" % (name, a.shape))
        return np.ascontiguousarray(a.reshape(1))
    if gr == "head" and len(want) == 2 and a.shape == (want[1],):
        a = np.broadcast_to(a, want)
    if tuple(a.shape) != tuple(want):
        raise ValueError("%s: shape %s, expected %s (%s granularity)" % (name, a.shape, tuple(want), gr))
    return np.ascontiguousarray(a)


def _scale_strides(a, gr, layout):
    """(b, h, t, e) strides in elements of the fitted scale array a."""
    st = [s // a.itemsize for s in a.strides]
    if gr == "tensor":
        return (0, 0, 0, 0)
    if layout in ("thd", "paged"):
        if gr == "head":
            return (0, st[0], 0, 0)
        if gr == "channel":
            return (0, st[0], 0, st[1])
        ts = st[len(st) - (2 if gr == "token" else 3)]   # the last token axis: slot or packed token
        if gr == "token":
            return (0, st[-1], ts, 0)
        return (0, st[-2], ts, st[-1])
    if gr == "head":
        return (st[0], st[1], 0, 0)
    if gr == "channel" and len(st) == 4:   # over token groups: (B, T', H, D) or (B, H, T', D)
        return (st[0], st[2], st[1], st[3]) if layout == "bthd" else tuple(st)
    if gr == "channel":
        return (st[0], st[1], 0, st[2])
    if gr == "token":
        return (st[0], st[2], st[1], 0) if layout == "bthd" else (st[0], st[1], st[2], 0)
    return (st[0], st[2], st[1], st[3]) if layout == "bthd" else tuple(st)


def _ggml_strides(a, layout):
    """(b, h, t) byte strides of a contiguous ggml block array a (rows of blocks) in the layout."""
    s = a.strides
    if layout == "bthd":
        return (s[0], s[2], s[1])
    if layout == "bhtd":
        return (s[0], s[1], s[2])
    if layout == "thd":
        return (0, s[1], s[0])
    return (0, s[2], s[1])   # paged (num_pages, page_size, KVH, bytes): slot page * page_size + slot
