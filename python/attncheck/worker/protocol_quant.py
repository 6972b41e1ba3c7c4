"""protocol_quant.py: the quantized tensors of the exec protocol (docs/quantized.md): the narrow
formats' bit patterns (decode, encode), a case's codes and scales read back into values (dequantize,
unpack), and the codes, scales and zero points a worker that quantizes its own cache writes
(store_quantize, pack). protocol.py re-exports every name; workers use it through protocol."""
import numpy as np

# quantized tensors (docs/quantized.md): a case's q, k or v as codes and scales, read by dequantize()
QUANT_FORMATS = ("q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl", "e4m3fn", "e4m3fnuz", "e5m2", "int8", "int4",
                 "nvfp4", "mxfp4", "int2", "uint8")
# quantized layouts (the "quant_layout" feature: group and tile scales, token groups, scale and zero-point
# dtypes, packed codes) and kernels that quantize their own cache ("quant_store", with "store_quantizers")
QUANT_FEATURES = ("quant_layout", "quant_store")
STORE_QUANTIZERS = ("absmax-even-f32-sat", "given-even-f32-sat", "minmax-even-f32-sat", "minmax-away-f32-sat", "ggml")
_IQ4NL = (-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113)
_E2M1 = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)

_FP8_TOP = {"e4m3fn": 448.0, "e4m3fnuz": 240.0, "e5m2": 57344.0}   # the largest finite value of each fp8 format
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


def _spread(a, spec, shape):
    """A scale (or zero-point) array of spec's granularity broadcast to the tensor's [B, H, T, D]."""
    gran, block, g = spec.get("granularity", "block"), int(spec.get("block", 0)), int(spec.get("token_group", 0))
    a = np.asarray(a)
    T = shape[2]
    if gran == "block":
        a = np.repeat(a, block, axis=3)
        return np.repeat(a, max(g, 1), axis=2)[:, :, :T] if g > 1 else a
    if gran == "token":
        return a[..., None]
    if gran == "channel":
        return np.repeat(a, g, axis=2)[:, :, :T] if g > 1 else a[:, :, None, :]
    if gran == "head":
        return a[:, :, None, None]
    return np.broadcast_to(a.reshape(()), shape)


def _sd_values(a, dtype):
    """Scales or zero points of a declared dtype (f16, bf16 as uint16 bits, f32, i8, u8) as float64."""
    if dtype == "bf16":
        return _table_bf16(a)
    return np.asarray(a).astype(np.float64)


def _table_bf16(a):
    return (np.asarray(a).astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def unpack(c, spec):
    """Codes packed two (int4, nvfp4, mxfp4) or four (int2) to a byte along the last axis, low or high
    bits first (spec "packing"), one code per byte again."""
    order = spec.get("packing")
    if not order:
        return np.asarray(c)
    bits = 2 if spec["format"] == "int2" else 4
    per, m = 8 // bits, (1 << bits) - 1
    b = np.asarray(c).astype(np.uint8)
    sh = [(k if order == "low" else per - 1 - k) * bits for k in range(per)]
    out = np.stack([(b >> s) & m for s in sh], axis=-1)
    return out.reshape(b.shape[:-1] + (b.shape[-1] * per,)).astype(np.uint8)


def pack(c, spec):
    """The inverse of unpack: codes (one per byte) packed as spec "packing" says."""
    order = spec.get("packing")
    if not order:
        return np.asarray(c)
    bits = 2 if spec["format"] == "int2" else 4
    per = 8 // bits
    c = np.asarray(c).astype(np.uint8)
    c = c.reshape(c.shape[:-1] + (c.shape[-1] // per, per))
    out = np.zeros(c.shape[:-1], dtype=np.uint8)
    for k in range(per):
        out |= (c[..., k] & ((1 << bits) - 1)) << ((k if order == "low" else per - 1 - k) * bits)
    return out


def dequantize(arrays, x, spec):
    """The values (float64) of quantized tensor x ('q', 'k' or 'v') from its members x_codes,
    x_scales and x_mins, x_zeros or x_tensor_scale, spec its meta.json quant entry: exact, but for
    float zero points, (code - z) * scale rounded twice in float64."""
    fmt = spec["format"]
    c = unpack(arrays[x + "_codes"], spec)
    s = arrays[x + "_scales"]
    sdt = spec.get("scale_dtype")
    if fmt == "nvfp4":
        sv = _table("e4m3")[s.astype(np.int64)]
    elif fmt == "mxfp4":
        sv = np.where(s == 255, np.nan, np.ldexp(1.0, s.astype(np.int64) - 127))
    else:
        sv = _sd_values(s, sdt)
    S = _spread(sv, spec, c.shape)
    q = _code_values(fmt, c)
    with np.errstate(invalid="ignore", over="ignore"):
        if fmt in ("q4_1", "q5_1"):
            return S * q + _spread(arrays[x + "_mins"].astype(np.float64), spec, c.shape)
        if fmt in ("int8", "int4", "int2", "uint8"):
            z = _sd_values(arrays[x + "_zeros"], spec.get("zero_dtype"))
            return (q - _spread(z, spec, c.shape)) * S
        if fmt == "nvfp4":
            return q * S * float(arrays[x + "_tensor_scale"].reshape(-1)[0])
        return q * S


def _scale_index(spec, shape):
    """The scale element of every element of a tensor of shape [B, H, T, D] (int64, that shape)."""
    B, H, T, D = shape
    gran, block, g = spec.get("granularity", "block"), int(spec.get("block", 0)), int(spec.get("token_group", 0))
    rows = -(-T // g) if g > 1 else (T if gran in ("block", "token") else 1)
    sshape = {"block": (B, H, rows, D // max(block, 1)), "token": (B, H, T), "channel": (B, H, rows, D) if g > 1 else (B, H, D),
              "head": (B, H), "tensor": (1,)}[gran]
    n = int(np.prod(sshape))
    return np.ascontiguousarray(np.broadcast_to(_spread(np.arange(n).reshape(sshape), spec, shape), shape)), sshape, n


def _to_sd(v, dtype):
    """float32 values rounded into a scale or zero-point dtype: (the stored array, its values)."""
    if dtype == "f16":
        a = v.astype(np.float16)
    elif dtype == "bf16":
        a = encode(v.astype(np.float64), "bf16")
    else:
        a = v.astype(np.float32)
    return a, _sd_values(a, dtype)


def _round(v, mode):
    return np.rint(v) if mode == "even" else np.sign(v) * np.floor(np.abs(v) + 0.5) if mode == "away" else np.trunc(v)


def store_quantize(x, spec, given=None):
    """The members a kernel that quantizes its own cache writes for plain tensor x ([B, H, T, D],
    float64 holding binary32 values) by spec's quantizer (docs/quantized.md "Quantize-on-store"), as
    attncheck's reference quantizers compute it in binary32: {"k_codes": ..., "k_scales": ..., "k_zeros": ...}
    for spec's tensor name spec["tensor"]; given: the case's arrays (rule given). The quantizers of
    STORE_QUANTIZERS (absmax for fp8 and int8, ggml for the six ggml formats and mxfp4), the other roundings
    and fp8's nan on overflow; binary32 arithmetic only (exact raises NotImplementedError)."""
    rule = spec["store"]
    words = rule.split("-")
    if rule != "ggml" and (len(words) != 4 or words[0] not in ("absmax", "minmax", "given")
                           or words[1] not in ("even", "away", "trunc") or words[2] != "f32" or words[3] not in ("sat", "nan")):
        raise NotImplementedError("store quantizer %s" % rule)
    fmt, name = spec["format"], spec["tensor"]
    x = np.asarray(x, dtype=np.float64).astype(np.float32)
    if rule == "ggml":
        return _ggml_store(x, fmt, name, spec)
    kind, rnd, sat = words[0], words[1], words[3] == "sat"
    idx, sshape, n = _scale_index(spec, x.shape)
    sdt = spec.get("scale_dtype", "f32")
    fp8 = fmt in _FP8_TOP
    if kind == "given":
        st, sv = given[name + "_scales"], _sd_values(given[name + "_scales"], sdt).reshape(-1)
    elif kind == "absmax":
        if not fp8 and fmt != "int8":
            raise NotImplementedError("absmax for %s" % fmt)
        a = np.zeros(n, dtype=np.float32)
        np.maximum.at(a, idx.reshape(-1), np.abs(x).reshape(-1))
        st, sv = _to_sd(a / np.float32(_FP8_TOP[fmt] if fp8 else 127), sdt)
    else:
        lo, hi = np.full(n, np.inf, dtype=np.float32), np.full(n, -np.inf, dtype=np.float32)
        np.minimum.at(lo, idx.reshape(-1), x.reshape(-1))
        np.maximum.at(hi, idx.reshape(-1), x.reshape(-1))
        qmin, qmax = {"int8": (-128, 127), "uint8": (0, 255), "int4": (0, 15), "int2": (0, 3)}[fmt]
        st, sv = _to_sd((hi - lo) / np.float32(qmax - qmin), sdt)
    bad = ~(np.isfinite(sv) & (sv > 0))
    if bad.any():
        one, _ = _to_sd(np.ones(1, dtype=np.float32), sdt)
        st = np.where(bad.reshape(np.shape(st)), one[0], st).astype(np.asarray(st).dtype)
        sv = np.where(bad, 1.0, sv)
    s32 = sv.astype(np.float32)[idx]
    q = (x / s32).astype(np.float32)
    out = {name + "_scales": np.asarray(st).reshape(sshape)}
    if fp8:   # the nearest fp8 value by the rounding, saturating or not
        top, qd = _FP8_TOP[fmt], q.astype(np.float64)
        qd = np.clip(qd, -top, top) if sat else qd
        out[name + "_codes"] = _encode_fnuz(qd, rnd) if fmt == "e4m3fnuz" else \
            encode(qd, "e4m3" if fmt == "e4m3fn" else "e5m2", rnd)
        return out
    qmin, qmax = {"int8": (-128, 127), "uint8": (0, 255), "int4": (0, 15), "int2": (0, 3)}[fmt]
    zdt = spec.get("zero_dtype", "u8" if fmt == "uint8" else "i8")
    if kind == "absmax":   # int8's symmetric rule: zero point 0, codes -127 .. 127
        qmin, z, zs = -127, np.zeros(n), np.zeros(n, dtype=np.int8)
        c = _round(q.astype(np.float64), rnd)
    elif zdt in ("i8", "u8"):
        z = given[name + "_zeros"].reshape(-1).astype(np.float64) if kind == "given" else \
            np.clip(qmin - _round((lo / sv.astype(np.float32)).astype(np.float32).astype(np.float64), rnd), qmin, qmax)
        zs = z.astype(np.int8 if zdt == "i8" else np.uint8)
        c = _round(q.astype(np.float64), rnd) + z[idx]
    else:
        zs, z = (given[name + "_zeros"], _sd_values(given[name + "_zeros"], zdt).reshape(-1)) if kind == "given" else \
            _to_sd((np.float32(qmin) - (lo / sv.astype(np.float32)).astype(np.float32)).astype(np.float32), zdt)
        c = _round((q + z.astype(np.float32)[idx]).astype(np.float32).astype(np.float64), rnd)
    codes = np.clip(c, qmin, qmax).astype(np.int8 if fmt == "int8" else np.uint8)
    out[name + "_codes"] = pack(codes, spec)
    out[name + "_zeros"] = np.asarray(zs).reshape(sshape)
    return out


def _best_index(x):
    """ggml's best_index_int8 into iq4_nl's table: the nearest entry, ties to the upper (binary32)."""
    val = np.array(_IQ4NL, dtype=np.float32)
    mu = np.clip(np.searchsorted(val, x, side="right"), 1, 15)
    lower = (x - val[mu - 1]).astype(np.float32) < (val[mu] - x).astype(np.float32)
    return np.where(x <= val[0], 0, np.where(x >= val[15], 15, np.where(lower, mu - 1, mu)))


def _iq4nl_blocks(b):
    """ggml's quantize_row_iq4_nl_ref per block of 32 (rows of b, binary32): the scale of the least
    weighted squared error over 15 tries, the codes against it (src/core/quant_ref.c's iq4_nl)."""
    f32, val = np.float32, np.array(_IQ4NL, dtype=np.float32)
    w, first = (b * b).astype(f32), np.argmax(np.abs(b), axis=-1)
    mx = np.take_along_axis(b, first[:, None], axis=-1)[:, 0]
    tiny = np.abs(mx) < f32(1e-15)
    mx1 = np.where(tiny, f32(1), mx)

    def sums(idv):
        sqx, sq2 = np.zeros(len(b), dtype=f32), np.zeros(len(b), dtype=f32)
        q = val[_best_index((idv[:, None] * b).astype(f32))]
        for j in range(b.shape[1]):   # in order, as ggml's loop
            sqx = (sqx + (w[:, j] * q[:, j]).astype(f32) * b[:, j]).astype(f32)
            sq2 = (sq2 + (w[:, j] * q[:, j]).astype(f32) * q[:, j]).astype(f32)
        return sqx, sq2
    with np.errstate(all="ignore"):
        d = (-mx1 / val[0]).astype(f32)
        sqx, sq2 = sums((f32(1) / d).astype(f32))
        d = (sqx / sq2).astype(f32)
        best = (d * sqx).astype(f32)
        for t in range(-7, 8):
            sqx, sq2 = sums((f32(t + _IQ4NL[0]) / mx1).astype(f32))
            take = (sq2 > 0) & ((sqx * sqx).astype(f32) > (best * sq2).astype(f32))
            d = np.where(take, (sqx / sq2).astype(f32), d)
            best = np.where(take, (d * sqx).astype(f32), best)
        d = np.where(tiny, f32(0), d)
        idv = np.where(d != 0, (f32(1) / np.where(d != 0, d, f32(1))).astype(f32), f32(0))
    return d, _best_index((idv[:, None] * b).astype(f32))


def _ggml_store(x, fmt, name, spec):
    """ggml's quantize_row_*_ref of fmt for x (binary32, [B, H, T, D]): the case-file members of the
    blocks (codes unpacked, f16 scales and mins; mxfp4's e8m0 exponents), as src/core/quant_ref.c."""
    f32 = np.float32
    b = x.reshape(-1, 32)
    out_shape = x.shape[:3] + (x.shape[3] // 32,)
    with np.errstate(all="ignore"):
        if fmt == "q8_0":
            d = (np.abs(b).max(axis=-1) / f32(127)).astype(f32)
            idv = np.where(d != 0, (f32(1) / np.where(d != 0, d, f32(1))).astype(f32), f32(0))
            c = _round((b * idv[:, None]).astype(f32).astype(np.float64), "away").astype(np.int8)
            m = None
        elif fmt in ("q4_0", "q5_0"):
            top, off, div = (15, f32(8.5), f32(-8)) if fmt == "q4_0" else (31, f32(16.5), f32(-16))
            mx = np.take_along_axis(b, np.argmax(np.abs(b), axis=-1)[:, None], axis=-1)[:, 0]
            d = (mx / div).astype(f32)
            idv = np.where(d != 0, (f32(1) / np.where(d != 0, d, f32(1))).astype(f32), f32(0))
            v = ((b * idv[:, None]).astype(f32) + off).astype(f32)
            c, m = np.minimum(top, np.trunc(np.where(v >= 0, v, 0))).astype(np.uint8), None
        elif fmt in ("q4_1", "q5_1"):
            top = 15 if fmt == "q4_1" else 31
            lo, hi = b.min(axis=-1), b.max(axis=-1)
            d = ((hi - lo).astype(f32) / f32(top)).astype(f32)
            idv = np.where(d != 0, (f32(1) / np.where(d != 0, d, f32(1))).astype(f32), f32(0))
            v = (((b - lo[:, None]).astype(f32) * idv[:, None]).astype(f32) + f32(0.5)).astype(f32)
            c, m = np.minimum(top, np.trunc(np.where(v >= 0, v, 0))).astype(np.uint8), lo
        elif fmt == "iq4_nl":
            d, c = _iq4nl_blocks(b)
            c, m = c.astype(np.uint8), None
        elif fmt == "mxfp4":   # e = floor(log2f(amax)) - 2 + 127; the first e2m1 code of least error
            amax = np.abs(b).max(axis=-1)
            lg = np.floor(np.log2(np.where(amax > 0, amax, 1).astype(np.float64)).astype(f32))
            e = np.clip(np.where(amax > 0, lg.astype(np.int64) - 2 + 127, 0), 0, 254)
            dd = np.ldexp(f32(1), (e - 127).astype(np.int32)).astype(f32)
            e2 = np.array(_E2M1 + tuple(-v for v in _E2M1), dtype=f32)
            err = np.abs((dd[:, None, None] * e2[None, None, :]).astype(f32) - b[:, :, None])
            c = np.argmin(err, axis=-1).astype(np.uint8)
            return {name + "_codes": pack(c.reshape(x.shape), spec), name + "_scales": e.astype(np.uint8).reshape(out_shape)}
        else:
            raise NotImplementedError("ggml's rule for %s" % fmt)
    res = {name + "_codes": c.reshape(x.shape), name + "_scales": d.astype(np.float16).reshape(out_shape)}
    if m is not None:
        res[name + "_mins"] = m.astype(np.float16).reshape(out_shape)
    return res


def encode(x, dtype, mode="even"):
    """Floats rounded once, to nearest even, to dtype (bit patterns for the narrow formats; those also
    with ties away from zero, mode "away", or toward zero, "trunc")."""
    x = np.asarray(x, dtype=np.float64)
    if dtype in ("f16", "f32", "f64"):
        return x.astype({"f16": np.float16, "f32": np.float32, "f64": np.float64}[dtype])
    nb, m, emin, _, has_inf, nan_bits = _NARROW[dtype]
    return _encode_grid(x, _table(dtype)[: 1 << (nb - 1)], nb, m, emin, has_inf, nan_bits, mode)


def _encode_fnuz(x, mode):
    """e4m3fnuz codes of x (bias 8, largest 240, no inf, NaN only 0x80, no -0) by the rounding mode."""
    x = np.asarray(x, dtype=np.float64)
    mag = _encode_grid(np.abs(x), _code_values("e4m3fnuz", np.arange(128)), 8, 3, -7, False, 0x80, mode)
    return np.where((mag == 0) | (mag == 0x80), mag, mag | np.where(np.signbit(x), 0x80, 0)).astype(np.uint8)


def _encode_grid(x, pos, nb, m, emin, has_inf, nan_bits, mode):
    """x to the codes of a sign-magnitude format whose codes 0 .. 2^(nb-1) - 1 stand for pos."""
    fin = np.isfinite(pos)
    maxf = pos[fin].max()
    ax = np.abs(x)
    with np.errstate(all="ignore"):
        _, e = np.frexp(np.where(np.isfinite(ax), ax, 0.0))
        q = np.ldexp(1.0, np.maximum(e - 1, emin) - m)
        r = _round(ax / q, mode) * q
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
