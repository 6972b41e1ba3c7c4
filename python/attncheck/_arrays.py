"""Arrays in: numpy arrays and torch tensors (CPU, or CUDA copied to the host) as numpy views
of their bits, with their attncheck dtype and strides in elements. Every refusal names the
argument."""
import numpy as np

# numpy dtype names of third-party float types (ml_dtypes) and torch dtype names
_NAMED = {"bfloat16": "bf16", "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2"}
_NUMPY = {np.dtype(np.float64): "f64", np.dtype(np.float32): "f32", np.dtype(np.float16): "f16"}
_BITS = {"bf16": np.uint16, "e4m3": np.uint8, "e5m2": np.uint8, "f16": np.uint16}


class Array:
    """One input: `a` a numpy array (for bf16 and fp8: their bit patterns), `dtype` its attncheck
    dtype name, `shape`, and `strides` in elements (non-negative)."""

    def __init__(self, name, a, dtype):
        self.name, self.a, self.dtype = name, a, dtype
        self.shape = tuple(a.shape)
        self.strides = tuple(s // a.itemsize for s in a.strides)

    def ptr(self):
        return self.a.ctypes.data


def _torch_to_numpy(name, t, copy_cuda):
    import torch
    t = t.detach()
    dev = t.device.type
    if dev != "cpu":
        if dev == "cuda" and copy_cuda:
            t = t.cpu()
        else:
            raise ValueError("%s: a tensor on device '%s' (only CPU tensors, and CUDA tensors copied to the host "
                             "with copy_to_host=True, are read)" % (name, t.device))
    if t.is_sparse or t.layout != torch.strided:
        raise ValueError("%s: a %s tensor (only dense strided tensors are read)" % (name, t.layout))
    if t.is_complex():
        raise TypeError("%s: complex dtype %s" % (name, t.dtype))
    tn = str(t.dtype).replace("torch.", "")
    if tn in _NAMED:
        bits = torch.int16 if tn == "bfloat16" else torch.uint8
        return t.view(bits).numpy().view(np.uint16 if tn == "bfloat16" else np.uint8), _NAMED[tn]
    if tn == "bool":
        return t.numpy(), "bool"
    return t.numpy(), None


def as_array(name, x, *, bits_dtype=None, copy_cuda=True, kind="float"):
    """x as an Array. kind "float": a floating tensor (f64, f32, f16, bf16, e4m3, e5m2; an unsigned
    integer array with bits_dtype naming the format of its bits); "bool": a boolean mask; "f32":
    binary32 values (float64 arrays are rounded to binary32); "i32": int32 indices; "bytes": one-byte
    codes (uint8, int8, fp8 bits) as uint8."""
    if x is None:
        return None
    mod = type(x).__module__
    if mod.startswith("torch"):
        a, named = _torch_to_numpy(name, x, copy_cuda)
    elif isinstance(x, np.ndarray):
        a, named = x, None
        if a.dtype.name in _NAMED:
            named = _NAMED[a.dtype.name]
            a = a.view(np.uint16 if named == "bf16" else np.uint8)
    elif isinstance(x, (list, tuple)) and kind in ("i32", "f32"):
        a, named = np.asarray(x, dtype=np.int32 if kind == "i32" else np.float32), None
    else:
        raise TypeError("%s: expected a numpy array or a torch tensor, got %s" % (name, type(x).__name__))
    if a.ndim and (any(s < 0 for s in a.strides) or any(s % a.itemsize for s in a.strides)):
        a = np.ascontiguousarray(a)   # negative or unaligned strides: read a copy
    if kind == "bytes":   # codes, ggml blocks, e4m3 / e8m0 scale bits, int8 zero points: their bytes as they are
        if not ((named in ("e4m3", "e5m2")) or (not named and a.dtype.itemsize == 1 and a.dtype.kind in "iu")):
            raise TypeError("%s: one-byte codes are expected (uint8, int8, or fp8 bits), got dtype %s"
                            % (name, named or a.dtype))
        return Array(name, a.view(np.uint8), "u8")
    if kind == "bool":
        if a.dtype != np.bool_ and named != "bool":
            raise TypeError("%s: a boolean mask is expected (True = visible), got dtype %s" % (name, a.dtype))
        return Array(name, a.view(np.uint8), "u8")
    if kind == "i32":
        if a.dtype.kind not in "iu":
            raise TypeError("%s: integer indices are expected, got dtype %s" % (name, a.dtype))
        if a.dtype != np.int32:
            if a.size and (a.min() < -2**31 or a.max() >= 2**31):
                raise ValueError("%s: values beyond int32" % name)
            a = a.astype(np.int32)
        return Array(name, np.ascontiguousarray(a), "i32")
    if kind == "f32":
        if named or a.dtype.kind != "f":
            raise TypeError("%s: float32 values are expected, got dtype %s" % (name, named or a.dtype))
        if a.dtype != np.float32:
            a = a.astype(np.float32)
        return Array(name, np.ascontiguousarray(a), "f32")
    if named:
        return Array(name, a, named)
    if a.dtype in _NUMPY:
        if bits_dtype and bits_dtype != _NUMPY[a.dtype]:
            raise TypeError("%s: dtype=%r was given but the array holds %s values" % (name, bits_dtype, a.dtype))
        return Array(name, a, _NUMPY[a.dtype])
    if a.dtype.kind == "u" and bits_dtype in _BITS and np.dtype(_BITS[bits_dtype]).itemsize == a.itemsize:
        return Array(name, a, bits_dtype)
    if a.dtype.kind == "u":
        raise TypeError("%s: unsigned integers of %d bytes: pass dtype= naming the format of their bits "
                        "(bf16 for uint16, e4m3 or e5m2 for uint8)" % (name, a.itemsize))
    raise TypeError("%s: unsupported dtype %s (float64, float32, float16, bfloat16, float8_e4m3fn, float8_e5m2)"
                    % (name, named or a.dtype))
