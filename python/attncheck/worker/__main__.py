"""python -m attncheck.worker torch|numpy|triton-fa2|triton-vllm-unified [options] [IN OUT]: an attncheck exec worker.

  numpy   the float64 reference of numpy_sdpa.py: every dtype, variant and layout, a backward
  torch   PyTorch's scaled_dot_product_attention (torch_sdpa.py); --backend flash|efficient|
          cudnn|math (default: flash on CUDA, math on the CPU), --device (default: auto, cuda
          when available, else cpu, said in the declaration's note), --compile, --lse
  triton-fa2           the flash-attn-triton package's Triton FlashAttention-2 (triton_fa2.py)
  triton-vllm-unified  vLLM's Triton unified attention, varlen and paged (triton_vllm.py);
                       --segments N: its split-KV (3D) decode path
          both: --device interpret (Triton's interpreter on the CPU, the default) or cuda
  --dtype D[,D...]   declare only these dtypes (cases of others are SKIP)

Without IN OUT it serves the persistent protocol (exec-persistent:); with them it answers one
case (exec:... {in} {out}).
"""
import sys

try:
    from . import numpy_sdpa, protocol, torch_sdpa, triton_fa2, triton_vllm
except ImportError:  # run as a file (the re-exec under a python3 with numpy): its folder is on sys.path
    import numpy_sdpa
    import protocol
    import torch_sdpa
    import triton_fa2
    import triton_vllm


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
    for mod in (torch_sdpa, triton_fa2, triton_vllm):
        if hasattr(mod, "attncheck_worker"):
            mod.attncheck_worker.run = run_only


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write(__doc__)
        return 0 if argv else 2
    which, args = argv[0], list(argv[1:])
    dtypes = _take(args, "--dtype")
    if dtypes:
        _restrict(dtypes)
    if which == "numpy":
        return numpy_sdpa.main(args)
    if which == "torch":
        # without --device, torch_sdpa.py's --device auto: the GPU when PyTorch sees one, else the
        # CPU, which its declaration's note says
        if "--backend" not in args and not any(a.startswith("--backend=") for a in args):
            dev = _take(args, "--device")
            on_cpu = dev == "cpu"
            if dev is None:
                try:
                    import torch
                    on_cpu = not torch.cuda.is_available()
                except ImportError:
                    on_cpu = True
            args = ["--backend", "math" if on_cpu else "flash", "--device", dev or "auto"] + args
        return torch_sdpa.main(args)
    if which == "triton-fa2":
        return triton_fa2.main(args)
    if which == "triton-vllm-unified":
        return triton_vllm.main(args)
    sys.stderr.write("attncheck.worker: unknown worker '%s' (torch, numpy, triton-fa2 or triton-vllm-unified)\n" % which)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
