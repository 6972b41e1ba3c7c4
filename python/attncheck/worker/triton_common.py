"""triton_common.py: what the Triton workers (triton_fa2.py, triton_vllm.py) share.

A Triton worker runs a public Triton attention kernel, installed from PyPI, either through
Triton's interpreter (--device interpret, the default: TRITON_INTERPRET=1, CPU torch tensors,
no GPU needed) or compiled on a GPU (--device cuda). The interpreter runs the kernel's own
source: its indexing, masks, tiling, online softmax and paged or varlen addressing; its
arithmetic is numpy on the host, which docs/triton.md compares with the device's.

The environment variable must be set before triton is first imported, so setup() comes
before any import of triton or of a kernel package.
"""
import os
import sys
import types

DEVICES = ("interpret", "cuda")


def setup(device):
    """Selects the interpreter (TRITON_INTERPRET=1) or the GPU; call before importing triton."""
    if device not in DEVICES:
        raise ValueError("device %s (interpret or cuda)" % device)
    if device == "interpret":
        os.environ["TRITON_INTERPRET"] = "1"
    else:
        os.environ.pop("TRITON_INTERPRET", None)


def torch_device(device):
    return "cpu" if device == "interpret" else "cuda"


def shim_removed_module(name):
    """Registers an empty module for an import that a kernel package makes but never uses,
    where this Triton no longer has it (flash-attn-triton imports
    triton.tools.experimental_descriptor, gone from Triton 3.4 on)."""
    try:
        __import__(name)
    except ImportError:
        sys.modules[name] = types.ModuleType(name)


def pin_autotune(fn, config):
    """Restricts a @triton.autotune kernel to one of its own configs (the interpreter would
    otherwise time every config on every new shape). Returns the config."""
    fn.configs = [config]
    if hasattr(fn, "cache"):
        fn.cache.clear()
    return config


class Loader:
    """Imports a kernel package once, on the first case; a failure is kept and every case is
    then refused with it (SKIP), as a worker without PyTorch refuses."""

    def __init__(self, load):
        self._load = load
        self._mod = None
        self._err = None

    def get(self):
        if self._mod is None and self._err is None:
            try:
                self._mod = self._load()
            except Exception as e:  # ImportError, or a kernel package that fails on import
                self._err = "%s: %s" % (type(e).__name__, " ".join(str(e).split())[:300])
        if self._err is not None:
            raise NotImplementedError("the kernel cannot be imported here (%s)" % self._err)
        return self._mod


def versions(*names):
    """'name version' of each importable distribution, for the worker's description."""
    out = []
    try:
        from importlib import metadata
    except ImportError:
        return ""
    for n in names:
        try:
            out.append("%s %s" % (n, metadata.version(n)))
        except Exception:
            out.append("%s missing" % n)
    return ", ".join(out)


def probe(loader, *packages):
    """--probe: 0 and the packages' versions when the kernel imports, else 77 and why."""
    try:
        loader.get()
    except NotImplementedError as e:
        sys.stderr.write("%s\n" % e)
        return 77
    sys.stdout.write("%s\n" % versions(*packages))
    return 0


def interpreter_budget(device, seconds, limit):
    """Refuses a case whose estimated time under the interpreter passes limit seconds (0: no
    limit): the interpreter runs each program of the grid in Python, ~0.1 s a program and
    ~0.01 s a tile of vLLM's kernel on two shared cores, so a case of thousands of programs
    would only end in a TIMEOUT of attncheck's 60 s limit."""
    if device == "interpret" and limit and seconds > limit:
        raise NotImplementedError("too slow for Triton's interpreter here (about %.0f s estimated, over %g s; "
                                  "--max-seconds 0 runs it, --device cuda on a GPU)" % (seconds, limit))
