"""The hand tolerances of kernel projects' attention tests, as assertions on the same outputs that
test_flash_style.py judges with attncheck. Each compares the kernel's o with the float32
reference of the stored inputs (fa_kernels.reference on the inputs widened to float32):
  assert_close  torch.testing.assert_close's default tolerances for the dtype
  fa-2x         FlashAttention's rule: max error <= 2 x that of a low-precision reference + 1e-6
  tol-1e-3      atol = rtol = 1e-3 (FlashInfer's tests)
  tol-2e-2      atol = rtol = 2e-2 (the loose end of vLLM's and xformers' 16-bit tolerances)
  nmse-5e-4     sum (o - ref)^2 / sum ref^2 <= 5e-4 (a global error measure)
docs/python.md says where each is used."""
import numpy as np

import fa_kernels as K

RULES = ("assert_close", "fa-2x", "tol-1e-3", "tol-2e-2", "nmse-5e-4")
DEFAULT_TOL = {"f32": (1.3e-6, 1e-5), "f16": (1e-3, 1e-5), "bf16": (1.6e-2, 1e-5)}  # (rtol, atol)
FIXED_TOL = {"tol-1e-3": (1e-3, 1e-3), "tol-2e-2": (2e-2, 2e-2)}
NMSE_MAX = 5e-4


class Reference:
    """The references of one problem, computed once: exact (the float32 reference, as float64)
    and, for the 2x rule, pt_err (the max error of the one-tile low-precision kernel)."""

    def __init__(self, q, k, v, dtype, causal, window, softcap, dropout=None):
        self.args = (q, k, v, dtype, causal, window, softcap)
        self.dropout = dropout   # (p, keep): the reference with the kernel's mask, as FlashAttention's tests
        self._exact = self._pt_err = None

    @property
    def exact(self):
        if self._exact is None:
            q, k, v, dtype, causal, window, softcap = self.args
            w = [K.to_f64(x, dtype).astype(np.float32) for x in (q, k, v)]
            self._exact = K.reference(*w, "f32", causal, window, softcap, self.dropout)[0].astype(np.float64)
        return self._exact

    @property
    def pt_err(self):
        if self._pt_err is None:
            tile, K.TILE = K.TILE, 1 << 30
            try:
                pt = K.flash(*self.args, dropout=self.dropout)[0]
            finally:
                K.TILE = tile
            self._pt_err = np.abs(K.to_f64(pt, self.args[3]) - self.exact).max()
        return self._pt_err


def check(rule, o, ref):
    """Raises AssertionError when rule rejects o (numpy array of the dtype; bf16 as uint16 bits)."""
    dtype = ref.args[3]
    exact = ref.exact
    got = K.to_f64(o, dtype)
    err = np.abs(got - exact)
    if np.isnan(err).any():
        raise AssertionError("%s: %d NaN elements" % (rule, np.isnan(err).sum()))
    if rule == "assert_close" or rule in FIXED_TOL:
        rtol, atol = DEFAULT_TOL[dtype] if rule == "assert_close" else FIXED_TOL[rule]
        bad = ~(err <= atol + rtol * np.abs(exact))
        assert not bad.any(), "%s: %d mismatched elements, max abs err %g" % (rule, bad.sum(), err.max())
    elif rule == "fa-2x":
        assert err.max() <= 2 * ref.pt_err + 1e-6, "fa-2x: max err %g > 2 x %g" % (err.max(), ref.pt_err)
    elif rule == "nmse-5e-4":
        den = (exact ** 2).sum()
        nmse = (err ** 2).sum() / den if den > 0 else (err ** 2).sum()
        assert nmse <= NMSE_MAX, "nmse-5e-4: nmse %g > %g" % (nmse, NMSE_MAX)
    else:
        raise ValueError("unknown hand rule %r (one of %s)" % (rule, ", ".join(RULES)))
