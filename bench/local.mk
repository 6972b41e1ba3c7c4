# bench/: benchmark programs printing ratios against an in-process baseline.
include bench/oracle.mk
include bench/calibrate.mk
include bench/mutants.mk
include bench/oracle_fast.mk
include bench/oracle_blas.mk
include bench/oracle_mem.mk
include bench/grad_fast.mk
include bench/grad_blas.mk
include bench/quant_judge.mk
# The serving-layout decode case (a script: gen, check, oracle with their time and memory).
EXTRA_DIST += bench/layout_decode.sh
# assert_attention_close on FlashAttention's test shape against numpy's float64 reference (a script).
EXTRA_DIST += bench/python_fa.py
# check_grad on FlashAttention's case against numpy (a script: the Python package installed)
EXTRA_DIST += bench/python_grad.py
