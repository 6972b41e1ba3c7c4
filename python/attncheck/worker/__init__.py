"""attncheck's exec workers: `python -m attncheck.worker WORKER [options]` serves attncheck's exec
protocol (README "Without C") for the float64 numpy reference (numpy_sdpa), PyTorch's SDPA
(torch_sdpa), JAX (jax_sdpa), MLX (mlx_sdpa), ONNX Runtime (onnxruntime_sdpa), OpenVINO
(openvino_sdpa) and public Triton kernels (triton_fa2, triton_vllm); docs/frameworks.md. protocol
turns any function attn(q, k, v, problem) into such a worker:

    attncheck check --kernel 'exec-persistent:python -m attncheck.worker torch --dtype bf16' case.npz
"""
