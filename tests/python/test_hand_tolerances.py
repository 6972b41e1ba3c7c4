"""The headline of docs/python.md's table, pinned: on cases of test_flash_style.py's long grid,
the loose hand tolerances kernel projects use (atol = rtol = 2e-2; NMSE 5e-4; atol = rtol = 1e-3
for the f16 accumulator) accept a defect of fa_kernels.py that assert_attention_close rejects,
(given the LSE or o alone), and assert_attention_close accepts the correct kernels on the same
inputs."""
import numpy as np
import pytest

import attncheck
import hand_rules
import test_flash_style as T

# (defect, dtype, causal, (seqlen_q, seqlen_k), values, the hand rules that accept it)
HEADLINE = [
    # one key too many among 4096: an error of 1/4096 of a value in 63 of the 64 rows
    ("causal-off-by-one", "bf16", True, (64, 4096), "randn", ["tol-2e-2", "nmse-5e-4"]),
    # an f32 kernel accumulating P.V in float16: 2^-11 relative, 2^13 times the f32 class's error
    ("f16-acc", "f32", True, (64, 1024), "randn", ["tol-1e-3", "tol-2e-2", "nmse-5e-4"]),
    # no rescale when a near-uniform softmax's running maximum grows by ~0.1
    ("no-rescale", "bf16", True, (64, 1024), "flat", ["tol-2e-2"]),
]


def judged(case, o, lse, tmp_path):
    a, kw = case.attncheck_args(o, lse)
    return attncheck.assert_attention_close(*a, save_dir=str(tmp_path), **kw)


@pytest.mark.parametrize("defect,dtype,causal,seqlens,values,accepting", HEADLINE,
                         ids=["%s-%s" % (h[0], h[1]) for h in HEADLINE])
def test_loose_tolerance_accepts_what_attncheck_rejects(defect, dtype, causal, seqlens, values, accepting, tmp_path):
    case = T.long_case(dtype, causal, seqlens, values)
    o, lse = case.run(defect)
    ok_o = case.run("numpy-flash")[0]
    assert not np.array_equal(o.view(np.uint8), ok_o.view(np.uint8)), "the defect changes no bit here"
    for rule in accepting:
        hand_rules.check(rule, o, case.ref)  # the hand tolerance accepts the defect
    for with_lse in (lse, None):  # with the LSE, and on o alone as the hand rules judge it
        with pytest.raises(AssertionError) as e:
            judged(case, o, with_lse, tmp_path)
        assert str(e.value).startswith("FAIL "), str(e.value)
    for kernel in ["numpy-ref", "numpy-flash"] + (["torch-math"] if T.have_torch() else []):
        r = judged(case, *case.run(kernel), tmp_path)
        assert r.ok, (kernel, r.line)
