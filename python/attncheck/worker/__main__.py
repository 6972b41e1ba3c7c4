"""python -m attncheck.worker WORKER [options] [IN OUT]: an attncheck exec worker.

  numpy   the float64 reference of numpy_sdpa.py: every dtype, variant and layout, a backward;
          --empty-rows mean-v
  torch   PyTorch's scaled_dot_product_attention (torch_sdpa.py); --backend auto (default: the
          backend PyTorch dispatches each case to on the device, named in the case's class and
          the declaration's note)|flash|efficient|cudnn|math, --device (default: auto, cuda when
          available, else cpu, said in the declaration's note), --compile, --lse
  jax     jax.nn.dot_product_attention (jax_sdpa.py); --x64 for f64
  mlx     MLX's mx.fast.scaled_dot_product_attention (mlx_sdpa.py)
  onnxruntime  ONNX Runtime's opset-23 Attention op (onnxruntime_sdpa.py); --op gqa: the
          com.microsoft GroupQueryAttention contrib op, --op mha: MultiHeadAttention
  openvino     OpenVINO's ScaledDotProductAttention op on the CPU (openvino_sdpa.py)
  triton-fa2           the flash-attn-triton package's Triton FlashAttention-2 (triton_fa2.py)
  triton-vllm-unified  vLLM's Triton unified attention, varlen and paged (triton_vllm.py);
                       --segments N: its split-KV (3D) decode path
          both: --device interpret (Triton's interpreter on the CPU, the default) or cuda
  --dtype D[,D...]   declare only these dtypes (cases of others are SKIP)
  WORKER --help      that worker's own options

Without IN OUT it serves the persistent protocol (exec-persistent:); with them it answers one
case (exec:... {in} {out}).
"""
import sys

try:
    from . import (jax_sdpa, mlx_sdpa, numpy_sdpa, onnxruntime_sdpa, openvino_sdpa, protocol, torch_sdpa, triton_fa2,
                   triton_vllm)
except ImportError:  # run as a file (the re-exec under a python3 with numpy): its folder is on sys.path
    import jax_sdpa
    import mlx_sdpa
    import numpy_sdpa
    import onnxruntime_sdpa
    import openvino_sdpa
    import protocol
    import torch_sdpa
    import triton_fa2
    import triton_vllm

# workers with an argparse main of their own, --dtype and --help included
_MAINS = {"torch": torch_sdpa, "jax": jax_sdpa, "mlx": mlx_sdpa, "onnxruntime": onnxruntime_sdpa,
          "openvino": openvino_sdpa}


def _take(args, opt):
    """Removes --opt VALUE (or --opt=VALUE) from args; its value or None."""
    for i, a in enumerate(args):
        if a == opt and i + 1 < len(args):
            v = args[i + 1]
            del args[i:i + 2]
            return v
        if a.startswith(opt + "="):
            del args[i]
            return a.split("=", 1)[1]
    return None


def _restrict(dtypes):
    """Wraps protocol.run so that the declaration names only the given dtypes."""
    want = [d for d in dtypes.split(",") if d]
    bad = [d for d in want if d not in protocol.ALL_DTYPES]
    if bad:
        sys.stderr.write("attncheck.worker: --dtype: unknown dtype %s (%s)\n" % (",".join(bad), " ".join(protocol.ALL_DTYPES)))
        sys.exit(2)
    run = protocol.run

    def run_only(attn, argv, **kw):
        have = kw.get("dtypes") or protocol.ALL_DTYPES
        kw["dtypes"] = [d for d in have if d in want]
        if not kw["dtypes"]:
            sys.stderr.write("attncheck.worker: --dtype %s: this worker computes none of them\n" % dtypes)
            sys.exit(2)
        return run(attn, argv, **kw)

    protocol.run = run_only
    if hasattr(numpy_sdpa, "attncheck_worker"):
        numpy_sdpa.attncheck_worker.run = run_only
    for mod in (triton_fa2, triton_vllm):
        if hasattr(mod, "attncheck_worker"):
            mod.attncheck_worker.run = run_only


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write(__doc__)
        return 0 if argv else 2
    which, args = argv[0], list(argv[1:])
    if which in _MAINS:
        return _MAINS[which].main(args)
    dtypes = _take(args, "--dtype")
    if dtypes:
        _restrict(dtypes)
    if which == "numpy":
        return numpy_sdpa.main(args)
    if which == "triton-fa2":
        return triton_fa2.main(args)
    if which == "triton-vllm-unified":
        return triton_vllm.main(args)
    sys.stderr.write("attncheck.worker: unknown worker '%s' (numpy, torch, jax, mlx, onnxruntime, openvino, triton-fa2 or "
                     "triton-vllm-unified)\n" % which)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
