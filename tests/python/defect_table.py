"""Runs tests/python/test_flash_style.py under each assertion (attncheck, torch.testing.assert_close's
default tolerances, FlashAttention's 2x rule) on each kernel (the correct ones and the four
defects of fa_kernels.py) and prints the markdown table of docs/python.md: failed/run tests.
Usage: python tests/python/defect_table.py (with attncheck installed; torch optional)."""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = ["numpy-ref", "numpy-flash", "torch-math", "torch-flash", "sentinel-1e4", "no-rescale",
           "causal-off-by-one", "f16-acc"]
MODES = ["assert_close", "fa-2x", "attncheck"]


def run(mode, kernel):
    env = dict(os.environ, ATTNCHECK_FA_ASSERT=mode)
    sel = []
    if kernel.startswith("numpy") or kernel.startswith("torch"):
        sel = ["-k", kernel]
    else:
        env["ATTNCHECK_FA_KERNEL"] = kernel
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", os.path.join(HERE, "test_flash_style.py")]
                         + sel, env=env, capture_output=True, text=True, cwd=HERE).stdout
    last = out.strip().splitlines()[-1] if out.strip() else ""
    n = {w: int(c) for c, w in re.findall(r"(\d+) (passed|failed|skipped|error)", last)}
    return n.get("failed", 0) + n.get("error", 0), n.get("failed", 0) + n.get("error", 0) + n.get("passed", 0)


def main():
    print("| kernel | " + " | ".join(MODES) + " |")
    print("|---|" + "---|" * len(MODES))
    for k in KERNELS:
        cells = []
        for m in MODES:
            f, n = run(m, k)
            cells.append("%d/%d rejected" % (f, n) if n else "not run")
        print("| %s | %s |" % (k, " | ".join(cells)), flush=True)


if __name__ == "__main__":
    main()
