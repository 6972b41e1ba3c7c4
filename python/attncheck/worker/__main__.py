"""python -m attncheck.worker torch|numpy [options] [IN OUT]: an attncheck exec worker.

  numpy   the float64 reference of numpy_sdpa.py: every dtype, variant and layout, a backward
  torch   PyTorch's scaled_dot_product_attention (torch_sdpa.py); --backend flash|efficient|
          cudnn|math (default: flash on CUDA, math on the CPU), --device (default: auto, cuda
          when available, else cpu, said in the declaration's note), --compile, --lse
  --dtype D[,D...]   declare only these dtypes (cases of others are SKIP)

Without IN OUT it serves the persistent protocol (exec-persistent:); with them it answers one
case (exec:... {in} {out}).
"""
import sys

try:
    from . import numpy_sdpa, protocol, torch_sdpa
except ImportError:  # run as a file (the re-exec under a python3 with numpy): its folder is on sys.path
    import numpy_sdpa
    import protocol
    import torch_sdpa


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
    if hasattr(torch_sdpa, "attncheck_worker"):
        torch_sdpa.attncheck_worker.run = run_only


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
    sys.stderr.write("attncheck.worker: unknown worker '%s' (torch or numpy)\n" % which)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
