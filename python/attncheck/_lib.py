"""ctypes bindings of libattncheck (<attncheck/attncheck.h>, API version 1).

The library is the one shipped inside the package (attncheck/_lib/libattncheck.so.0), or the
file $ATTNCHECK_LIBRARY names (a build tree's .libs/libattncheck.so.0, say). It is loaded on
first use, so that `import attncheck` (and the exec workers in attncheck.worker) never need it.
"""
import ctypes
import os
import threading

API_VERSION = 1

c_i64p = ctypes.POINTER(ctypes.c_int64)


class QSpec(ctypes.Structure):
    """attncheck_qspec of <attncheck/kernel.h> (ABI 5, quantized layouts and stores)."""
    _fields_ = [("granularity", ctypes.c_int32), ("packing", ctypes.c_int32), ("block", ctypes.c_int64),
                ("token_group", ctypes.c_int64), ("scale_dtype", ctypes.c_int32), ("zero_dtype", ctypes.c_int32),
                ("store_rule", ctypes.c_int32), ("store_round", ctypes.c_int32), ("store_arith", ctypes.c_int32),
                ("store_overflow", ctypes.c_int32)]


class Problem(ctypes.Structure):
    """attncheck_problem of <attncheck/kernel.h> (ABI 5, with the quantized formats, dropout and the
    quantized layouts)."""
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("dtype", ctypes.c_int32), ("mask", ctypes.c_int32),
        ("reserved0", ctypes.c_int32),
        ("batch", ctypes.c_int64), ("heads", ctypes.c_int64), ("kv_heads", ctypes.c_int64),
        ("tq", ctypes.c_int64), ("tk", ctypes.c_int64), ("dk", ctypes.c_int64), ("dv", ctypes.c_int64),
        ("scale", ctypes.c_double),
        ("q_stride", ctypes.c_int64 * 4), ("k_stride", ctypes.c_int64 * 4), ("v_stride", ctypes.c_int64 * 4),
        ("o_stride", ctypes.c_int64 * 4),
        ("features", ctypes.c_uint32), ("q_dtype", ctypes.c_int32), ("k_dtype", ctypes.c_int32),
        ("v_dtype", ctypes.c_int32), ("o_dtype", ctypes.c_int32), ("window_align", ctypes.c_int32),
        ("window_left", ctypes.c_int64), ("window_right", ctypes.c_int64), ("softcap", ctypes.c_double),
        ("alibi_per_batch", ctypes.c_int32), ("bias_dtype", ctypes.c_int32),
        ("bias_stride", ctypes.c_int64 * 4), ("bool_mask_stride", ctypes.c_int64 * 4),
        ("reserved2", ctypes.c_int64 * 4),
        ("total_q", ctypes.c_int64), ("total_k", ctypes.c_int64), ("page_size", ctypes.c_int64),
        ("num_pages", ctypes.c_int64), ("max_pages", ctypes.c_int64), ("reserved3", ctypes.c_int64 * 3),
        ("q_format", ctypes.c_int32), ("k_format", ctypes.c_int32), ("v_format", ctypes.c_int32),
        ("reserved4", ctypes.c_int32),
        ("dropout_p", ctypes.c_float), ("reserved5", ctypes.c_uint32), ("dropout_seed", ctypes.c_uint64),
        ("quant_spec", QSpec * 3),
    ]


class Tensors(ctypes.Structure):
    """attncheck_tensors of <attncheck/kernel.h>."""
    _fields_ = [(n, ctypes.c_void_p) for n in (
        "q", "k", "v", "o", "lse", "stream", "bias", "bool_mask", "alibi_slopes", "sinks", "descale_q",
        "descale_k", "descale_v", "cu_seqlens_q", "cu_seqlens_k", "block_table", "cache_seqlens", "quant",
        "dropout_mask", "store")]


class CaseDesc(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("flags", ctypes.c_uint32),
                ("problem", ctypes.POINTER(Problem)), ("tensors", ctypes.POINTER(Tensors)),
                ("dout", ctypes.c_void_p), ("do_stride", ctypes.c_int64 * 4)]


class Outputs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("reserved0", ctypes.c_uint32), ("o", ctypes.c_void_p),
                ("o_stride", ctypes.c_int64 * 4), ("lse", ctypes.c_void_p), ("lse_stride", ctypes.c_int64 * 3)]


class Grads(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("reserved0", ctypes.c_uint32),
                ("dq", ctypes.c_void_p), ("dk", ctypes.c_void_p), ("dv", ctypes.c_void_p),
                ("dq_stride", ctypes.c_int64 * 4), ("dk_stride", ctypes.c_int64 * 4),
                ("dv_stride", ctypes.c_int64 * 4), ("dsinks", ctypes.c_void_p)]


class Summary(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("status", ctypes.c_int32), ("kinds", ctypes.c_uint32),
                ("exit_code", ctypes.c_int32), ("err_w", ctypes.c_double), ("err_e", ctypes.c_double),
                ("ulps", ctypes.c_double), ("nmse", ctypes.c_double), ("bad", ctypes.c_int64),
                ("judged", ctypes.c_int64), ("rows_judged", ctypes.c_int64), ("rows_total", ctypes.c_int64),
                ("worst_tensor", ctypes.c_int32), ("reserved0", ctypes.c_int32),
                ("worst_index", ctypes.c_int64 * 4), ("worst_exact", ctypes.c_double),
                ("worst_got", ctypes.c_double), ("worst_err", ctypes.c_double), ("worst_W", ctypes.c_double),
                ("worst_E", ctypes.c_double)]


CASE_DEFAULT_SCALE = 1
FEAT = {"window": 1 << 0, "softcap": 1 << 1, "alibi": 1 << 2, "bias": 1 << 3, "bool_mask": 1 << 4,
        "sinks": 1 << 5, "mixed_dtypes": 1 << 6, "descale": 1 << 7, "varlen": 1 << 8, "paged": 1 << 9,
        "dropout": 1 << 10}
DTYPES = {"f64": 0, "f32": 1, "f16": 2, "bf16": 3, "e4m3": 4, "e5m2": 5}
MASKS = {"none": 0, "causal": 1, "causal-bottom-right": 2}
STATUS = ("PASS", "WARN", "FAIL", "SKIP", "ERROR")
TENSOR = (None, "o", "lse", "dq", "dk", "dv", "dsinks")

_lock = threading.Lock()
_lib = None


def library_path():
    env = os.environ.get("ATTNCHECK_LIBRARY")
    if env:
        return env
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_lib", "libattncheck.so.0")


def _declare(lib):
    P, V, I, C = ctypes.c_void_p, None, ctypes.c_int, ctypes.c_char_p
    sigs = {
        "attncheck_api_version": (I, []), "attncheck_version": (C, []),
        "attncheck_ctx_new": (P, []), "attncheck_ctx_free": (V, [P]), "attncheck_ctx_error": (C, [P]),
        "attncheck_ctx_set": (I, [P, C, C]),
        "attncheck_case_new": (I, [P, ctypes.POINTER(CaseDesc), ctypes.POINTER(P)]),
        "attncheck_case_read": (I, [P, C, ctypes.POINTER(P)]), "attncheck_case_free": (V, [P]),
        "attncheck_case_problem": (I, [P, ctypes.POINTER(Problem)]), "attncheck_oracle": (I, [P, P]),
        "attncheck_judge": (I, [P, P, ctypes.POINTER(Outputs), ctypes.POINTER(P)]),
        "attncheck_judge_grad": (I, [P, P, ctypes.POINTER(Grads), ctypes.POINTER(P)]),
        "attncheck_result_summary": (I, [P, ctypes.POINTER(Summary)]),
        "attncheck_result_line": (C, [P]), "attncheck_result_detail": (C, [P]), "attncheck_result_json": (C, [P]),
        "attncheck_result_write_case": (I, [P, P, C]), "attncheck_result_free": (V, [P]),
        "attncheck_kind_name": (C, [I]),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args


def lib():
    """The loaded library (loaded and checked once)."""
    global _lib
    with _lock:
        if _lib is None:
            path = library_path()
            try:
                handle = ctypes.CDLL(path)
            except OSError as e:
                raise ImportError("attncheck: cannot load libattncheck (%s): %s" % (path, e)) from None
            _declare(handle)
            got = handle.attncheck_api_version()
            if got != API_VERSION:
                raise ImportError("attncheck: %s has API version %d, this package needs %d" % (path, got, API_VERSION))
            _lib = handle
        return _lib


def kind_names(bits):
    out, k = [], 0
    while True:
        name = lib().attncheck_kind_name(k)
        if name is None:
            return out
        if bits & (1 << k):
            out.append(name.decode())
        k += 1
