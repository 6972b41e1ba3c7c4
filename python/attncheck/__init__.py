"""attncheck: judge attention kernels against the exact answer (an MPFR oracle) from Python.

    import attncheck
    attncheck.assert_attention_close(q, k, v, o, lse, causal=True, layout="bthd")

check() returns a Result (verdict, err_w, worst, explain()); assert_attention_close() raises
AssertionError with the verdict line and the worst element explained, and writes a reproducer
case file that `attncheck check FILE` judges again; check_grad() and assert_grad_close() do the
same for dQ, dK, dV (and dsinks). Inputs are numpy arrays or torch tensors (CPU, or CUDA copied
to the host) in FlashAttention's B,T,H,D or PyTorch's B,H,T,D layout (layout=; inferred only
when the shapes allow one reading), varlen (total, H, D) with cu_seqlens_q/k, or a paged KV
cache with block_table and cache_seqlens; f64, f32, f16, bf16, e4m3 and e5m2; a quantized q, k or
v as attncheck.Quantized (codes and scales, or ggml blocks, of the formats of docs/quantized.md).
The judging is libattncheck's, the one the attncheck command uses (docs/python.md).
"""
import os
import re
import tempfile
import threading

from ._check import AttncheckError, Result, Worst, check, check_grad
from ._quant import Quantized

__version__ = "0.1.0"
__all__ = ["check", "check_grad", "assert_attention_close", "assert_grad_close", "Quantized", "Result", "Worst",
           "AttncheckError", "save_dir"]

_counter = [0]
_counter_lock = threading.Lock()
# Where failing cases are written: save_dir= of the call, else this (the pytest plugin's
# --attncheck-save-dir), else $ATTNCHECK_SAVE_DIR, else TMPDIR/attncheck-failures.
save_dir = None


def _reproducer_path(where, name):
    d = where or save_dir or os.environ.get("ATTNCHECK_SAVE_DIR") or os.path.join(tempfile.gettempdir(),
                                                                                  "attncheck-failures")
    os.makedirs(d, exist_ok=True)
    with _counter_lock:
        _counter[0] += 1
        n = _counter[0]
    stem = re.sub(r"[^A-Za-z0-9_.+-]+", "_", name or "case").strip("_")[:120] or "case"
    return os.path.abspath(os.path.join(d, "%s-%d-%d.npz" % (stem, os.getpid(), n)))


def _assert(fn, args, kw, what):
    where = kw.pop("save_dir", None)
    path = _reproducer_path(where, kw.get("name"))
    kw.setdefault("repro", "attncheck check %s%s" % ("--grad " if what == "grad" else "", path))
    kw.setdefault("case_name", os.path.basename(path))
    r = fn(*args, **kw)
    if r.ok:
        return r
    r.save(path)
    raise AssertionError("%s\nreproducer: %s (attncheck check %s%s)" % (r.explain(), path,
                                                                      "--grad " if what == "grad" else "", path))


def assert_attention_close(q, k, v, o, lse=None, **kw):
    """check() that raises AssertionError unless the verdict's exit code is 0 (a FAIL, or an
    ERROR such as an undecided oracle element); the message is the verdict line and the worst
    element explained, and the case with o and lse is written (save_dir=, else the module's
    save_dir, $ATTNCHECK_SAVE_DIR or TMPDIR/attncheck-failures). Returns the Result."""
    return _assert(check, (q, k, v, o, lse), kw, "forward")


def assert_grad_close(q, k, v, do, dq, dk, dv, dsinks=None, **kw):
    """check_grad() that raises AssertionError as assert_attention_close does."""
    return _assert(check_grad, (q, k, v, do, dq, dk, dv, dsinks), kw, "grad")
