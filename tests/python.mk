# tests/python.mk: the Python package (python/attncheck, pyproject.toml) and its pytest tests.
TESTS += tests/tpython.sh tests/tmeanv.sh tests/tpip.sh tests/tparams_dtype.sh
# the framework workers (docs/frameworks.md); each SKIPs without its framework
TESTS += tests/tworker_torch.sh tests/tworker_jax.sh tests/tworker_mlx.sh tests/tworker_onnxruntime.sh \
	tests/tworker_openvino.sh
EXTRA_DIST += tests/tworker.sh tests/tworker_torch.sh tests/tworker_jax.sh tests/tworker_mlx.sh \
	tests/tworker_onnxruntime.sh tests/tworker_openvino.sh docs/frameworks.md python/attncheck/_cli.py \
	python/attncheck/worker/jax_sdpa.py python/attncheck/worker/mlx_sdpa.py \
	python/attncheck/worker/onnxruntime_sdpa.py python/attncheck/worker/openvino_sdpa.py
EXTRA_DIST += tests/tpython.sh tests/tmeanv.sh tests/tpip.sh tests/tparams_dtype.sh pyproject.toml setup.py docs/python.md \
	python/attncheck/__init__.py python/attncheck/_lib.py python/attncheck/_arrays.py python/attncheck/_check.py \
	python/attncheck/_quant.py python/attncheck/_dropout.py tests/python/test_quant.py tests/python/test_dropout.py \
	tests/python/fa_grid.py \
	python/attncheck/pytest_plugin.py python/attncheck/worker/__init__.py python/attncheck/worker/__main__.py \
	tests/python/conftest.py tests/python/fa_kernels.py tests/python/test_api.py tests/python/test_flash_style.py \
	tests/python/hand_rules.py tests/python/test_hand_tolerances.py \
	tests/python/defect_table.py bench/python_overhead.py
# libattncheck's public API, linked against the shared library alone (as a client is).
check_PROGRAMS += tests/tapi
TESTS += tests/tapi
tests_tapi_LDADD = $(AC_TEST_LIBS) libattncheck.la
# Triton kernels of PyPI packages through Triton's interpreter (docs/triton.md); SKIP without triton.
TESTS += tests/ttriton.sh
EXTRA_DIST += tests/ttriton.sh docs/triton.md python/attncheck/worker/triton_common.py \
	python/attncheck/worker/triton_fa2.py python/attncheck/worker/triton_vllm.py \
	tests/data/triton_vllm_window_symmetric.npz tests/data/triton_fa2_bwd_scaled_k.npz
