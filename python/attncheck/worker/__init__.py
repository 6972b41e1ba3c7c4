"""attncheck's exec workers: `python -m attncheck.worker torch|numpy [options]` serves attncheck's
exec protocol (README "Without C") for PyTorch's SDPA backends (torch_sdpa) or the float64 numpy
reference (numpy_sdpa); protocol turns any function attn(q, k, v, problem) into such a worker:

    attncheck check --kernel 'exec-persistent:python -m attncheck.worker torch --dtype bf16' case.npz
"""
