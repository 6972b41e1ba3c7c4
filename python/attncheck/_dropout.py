"""Dropout (docs/dropout.md): the drop probability as FlashAttention takes it, and the kernel's
keep-mask, from booleans, 0/1 integers or FlashAttention's S_dmask."""
import numpy as np

from ._arrays import Array, _NAMED, _torch_to_numpy


def probability(p):
    """p rounded to binary32, as FlashAttention's C++ binding takes a Python float; in [0, 1)."""
    if isinstance(p, bool) or not isinstance(p, (int, float, np.floating)):
        raise ValueError("dropout_p: expected a number in [0, 1), got %r" % (p,))
    p32 = float(np.float32(p))
    if not 0.0 <= p32 < 1.0:
        raise ValueError("dropout_p: %r is not in [0, 1) (as binary32: %r)" % (p, p32))
    return p32


def all_kept(shape):
    """The keep-mask of p = 0 given without one: every entry kept."""
    return Array("dropout_mask", np.ones(shape, dtype=np.uint8), "u8")


def keep_mask(x, shape, copy_to_host=True):
    """The keep-mask bytes (uint8, 1 kept, 0 dropped) [B, H, tq, tk] of x: booleans (True = kept),
    integers 0 and 1, or a floating array such as FlashAttention's S_dmask (return_attn_probs=True),
    whose sign bit marks the dropped entries (-0.0 included). x may be larger in its last two
    dimensions (FlashAttention pads S_dmask to its tile sizes): its leading tq x tk block is read."""
    name = "dropout_mask"
    if type(x).__module__.startswith("torch"):
        a, named = _torch_to_numpy(name, x, copy_to_host)
    elif isinstance(x, np.ndarray):
        a, named = x, _NAMED.get(x.dtype.name)
        if named:
            a = a.view(np.uint16 if named == "bf16" else np.uint8)
    else:
        raise TypeError("%s: expected a numpy array or a torch tensor, got %s" % (name, type(x).__name__))
    B, H, tq, tk = shape
    if a.ndim != 4 or a.shape[:2] != (B, H) or a.shape[2] < tq or a.shape[3] < tk:
        raise ValueError("%s: shape %s, expected (%d, %d, %d, %d) (B, H, tq, tk; larger tq, tk are cropped)"
                         % (name, tuple(a.shape), B, H, tq, tk))
    a = a[:, :, :tq, :tk]
    if named == "bool" or a.dtype == np.bool_:
        m = a.astype(np.uint8)
    elif named in ("bf16", "e4m3", "e5m2"):   # their bits: the top one is the sign
        m = ((a >> (8 * a.itemsize - 1)) & 1 == 0).astype(np.uint8)
    elif a.dtype.kind == "f":
        m = (~np.signbit(a)).astype(np.uint8)
    elif a.dtype.kind in "iu":
        if a.size and (a.min() < 0 or a.max() > 1):
            raise ValueError("%s: integer entries must be 0 (dropped) or 1 (kept)" % name)
        m = a.astype(np.uint8)
    else:
        raise TypeError("%s: unsupported dtype %s (bool, 0/1 integers, or floats whose sign marks dropped entries)"
                        % (name, named or a.dtype))
    return Array(name, np.ascontiguousarray(m), "u8")
