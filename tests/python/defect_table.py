"""Judges every case of tests/python/test_flash_style.py (grid()) on each kernel (the correct
ones and the four defects of fa_kernels.py) under each assertion (the hand rules of
hand_rules.py and attncheck) and prints the markdown tables of docs/python.md: runs rejected
out of runs per kernel, and per defect the runs a hand rule accepts and attncheck rejects (and
the reverse), then each reverse run and each correct run attncheck rejects, with its verdict.
Each kernel's output is computed once a case and judged by every assertion; attncheck's
verdict is attncheck.check's with the arguments the test module passes to
assert_attention_close (which raises exactly when that verdict's exit code is not 0).
Usage: python tests/python/defect_table.py [--json FILE] [SUBSTRING of the test ids] (attncheck
installed; torch optional)."""
import argparse
import json
import sys
import time

import numpy as np
import pytest

import attncheck
import hand_rules
import test_flash_style as T

CORRECT = ["numpy-ref", "numpy-flash", "torch-math", "torch-flash"]
DEFECTS = ["sentinel-1e4", "no-rescale", "causal-off-by-one", "f16-acc"]
MODES = list(hand_rules.RULES) + ["attncheck", "attncheck-o"]


def judge_all(case, o, lse):
    """{mode: rejected}, attncheck's Result, its Result on o alone."""
    rej = {}
    for m in hand_rules.RULES:
        try:
            case.judge(m, o, lse)
            rej[m] = False
        except AssertionError:
            rej[m] = True
    a, kw = case.attncheck_args(o, lse)
    r = attncheck.check(*a, **kw)
    rej["attncheck"] = not r.ok
    a, kw = case.attncheck_args(o, None)  # o alone, as the hand rules judge it
    ro = attncheck.check(*a, **kw)
    rej["attncheck-o"] = not ro.ok
    return rej, r, ro


def same(a, b):
    if isinstance(a, list):
        return all(same(x, y) for x, y in zip(a, b))
    return np.array_equal(np.asarray(a).view(np.uint8), np.asarray(b).view(np.uint8))


def collect(kernels, only=None):
    runs = []  # (test id, kernel, {mode: rejected}, verdict, err/W, o equal to numpy-flash's, the same on o alone)
    t0 = time.time()
    for n, (name, build) in enumerate(T.grid()):
        if only and only not in name:
            continue
        case = build()
        flash = None
        for kern in kernels:
            try:
                o, lse = case.run(kern)
            except pytest.skip.Exception:
                continue
            if kern == "numpy-flash":
                flash = o
            rej, r, ro = judge_all(case, o, lse)
            runs.append((name, kern, rej, r.verdict, r.err_w, bool(flash is not None and same(o, flash)), ro.verdict,
                         ro.err_w))
        print("%4d %s (%.0f s)" % (n + 1, name, time.time() - t0), file=sys.stderr, flush=True)
    return runs


def kernel_table(runs, kernels):
    print("| kernel | " + " | ".join(MODES) + " |")
    print("|---|" + "---|" * len(MODES))
    for k in kernels:
        mine = [r for r in runs if r[1] == k]
        cells = ["%d/%d" % (sum(r[2][m] for r in mine), len(mine)) for m in MODES]
        warn = sum(r[3] == "WARN" for r in mine)
        if warn:
            cells[MODES.index("attncheck")] += " (%d WARN)" % warn
        print("| %s | %s |" % (k, " | ".join(cells)))


def cross_table(runs, ac):
    """Per defect and hand rule: runs the rule accepts and ac rejects / runs the rule rejects and
    ac accepts; returns the latter."""
    print("\n%s: accepted by the rule and rejected by %s / rejected by the rule and accepted by %s\n"
          % ("with the LSE" if ac == "attncheck" else "o alone", ac, ac))
    print("| defect | o changed | %s |" % " | ".join(hand_rules.RULES))
    print("|---|---|" + "---|" * len(hand_rules.RULES))
    reverse = []
    for k in DEFECTS:
        mine = [r for r in runs if r[1] == k]
        cells = []
        for m in hand_rules.RULES:
            missed = sum(not r[2][m] and r[2][ac] for r in mine)
            rev = [r for r in mine if r[2][m] and not r[2][ac]]
            reverse += [(m, r) for r in rev]
            cells.append("%d / %d" % (missed, len(rev)))
        print("| %s | %d/%d | %s |" % (k, sum(not r[5] for r in mine), len(mine), " | ".join(cells)))
    return reverse


def print_reverse(runs, reverse, ac):
    """The reverse runs: o bit for bit numpy-flash's, the rule rejecting numpy-flash there too,
    and one by one the others."""
    flash_rej = {(r[0], m): r[2][m] for r in runs if r[1] == "numpy-flash" for m in hand_rules.RULES}
    same, also, rest = {}, {}, []
    for m, r in reverse:
        if r[5]:
            same[m, r[1]] = same.get((m, r[1]), 0) + 1
        elif flash_rej.get((r[0], m)):
            also[m, r[1]] = also.get((m, r[1]), 0) + 1
        else:
            rest.append((m, r))

    def fmt(d):
        return ", ".join("%s %s %d" % (m, k, n) for (m, k), n in sorted(d.items())) or "none"
    print("\nrejected by a hand rule, accepted by %s:" % ac)
    print("- o bit for bit numpy-flash's (the rule rejects the correct kernel there): %s" % fmt(same))
    print("- o not numpy-flash's, but the rule rejects numpy-flash on the same case: %s" % fmt(also))
    print("- the rule accepts numpy-flash on the case (rule, kernel, test, verdict and err/W with the LSE; "
          "on o alone):")
    for m, r in rest:
        print("    %s %s %s %s err/W=%.3g; %s err/W=%.3g" % (m, r[1], r[0], r[3], r[4], r[6], r[7]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("only", nargs="?", help="judge only the tests whose id holds this string")
    ap.add_argument("--json", help="also write every run (test, kernel, rejections, verdict, err/W) to this file")
    args = ap.parse_args()
    kernels = CORRECT + DEFECTS
    runs = collect(kernels, args.only)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(runs, f, indent=0)
    kernel_table(runs, kernels)
    long = [r for r in runs if "long_output" in r[0]]
    if long and len(long) < len(runs):
        print("\nthe long cases alone (test_flash_attn_long_output):\n")
        kernel_table(long, kernels)
    for ac in ("attncheck", "attncheck-o"):
        print_reverse(runs, cross_table(runs, ac), ac)
    bad = [r for r in runs if r[1] in CORRECT and (r[2]["attncheck"] or r[2]["attncheck-o"])]
    print("\ncorrect kernels rejected by attncheck: %d" % len(bad))
    for r in bad:
        print("  %s %s %s err/W=%.3g; o alone %s err/W=%.3g" % (r[1], r[0], r[3], r[4], r[6], r[7]))


if __name__ == "__main__":
    main()
