"""Shared helpers of the live parity tests (test_parity_*.py): running the mtlite CLI,
comparing id outputs with the reference and telling numerical ties from real differences."""
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("MTLITE_SOURCE_DIR") or os.path.dirname(os.path.dirname(HERE))
GOLDEN = os.path.join(ROOT, "tests", "data", "golden")
DEV = os.path.join(ROOT, "tests", "data", "dev")
DEMO_HF = os.path.join(ROOT, "models", "marian-en-de-tiny")

# A sentence whose output differs is a tie (not a failure) when the reference's own decision
# there was closer than this: greedy: top-1 minus top-2 log-prob at the first differing step;
# beam: the smallest gap between candidate scores whose order decided the search
# (marian_ref.MarianRef.beam(trace=True)); beam scores are float32 sums, hence the larger bound.
GREEDY_TIE = 1e-5
BEAM_TIE = 1e-4
CLI_TIMEOUT = 900


def env_or_fail(tc, name):
    v = os.environ.get(name)
    if not v:
        tc.fail(f"environment variable {name} is not set (run through ctest)")
    return v


def mtlite_bin():
    b = os.environ.get("MTLITE_BIN")
    if not b:
        raise AssertionError("MTLITE_BIN is not set (run through ctest)")
    if not os.access(b, os.X_OK):
        raise AssertionError(f"MTLITE_BIN={b} is not an executable")
    return b


def run_cli(args, stdin_text, what):
    """Runs `mtlite ARGS` with stdin; returns stdout. Raises AssertionError with the command's
    stderr on a non-zero exit (e.g. a CLI that lacks an option)."""
    cmd = [mtlite_bin()] + list(args)
    try:
        p = subprocess.run(cmd, input=stdin_text.encode("utf-8"), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=CLI_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{what}: `{' '.join(cmd)}` timed out after {CLI_TIMEOUT}s")
    if p.returncode != 0:
        raise AssertionError(f"{what}: `{' '.join(cmd)}` exited with {p.returncode}:\n"
                             f"{p.stderr.decode('utf-8', 'replace')[-3000:]}")
    return p.stdout.decode("utf-8")


def parse_id_lines(text, n, what):
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) != n:
        raise AssertionError(f"{what}: expected {n} output lines, got {len(lines)}:\n{text[:500]}")
    out = []
    for i, l in enumerate(lines):
        try:
            out.append([int(x) for x in l.split()])
        except ValueError:
            raise AssertionError(f"{what}: line {i + 1} is not space-separated ids: {l[:200]!r}")
    return out


def translate_ids(model, srcs, beam, max_length, what, batch=16):
    """srcs: lists of ids incl. the final </s>. Returns the generated ids per sentence
    (without the final </s>). max_length: generated tokens including </s>."""
    stdin = "".join(" ".join(map(str, s)) + "\n" for s in srcs)
    out = run_cli(["translate", "-m", model, "--input-ids", "--output-ids", "--beam", str(beam),
                   "--max-length", str(max_length), "--batch", str(batch)], stdin, what)
    return parse_id_lines(out, len(srcs), what)


def forced_logits(model, pairs, path, what):
    """pairs: (source ids incl. </s>, target ids incl. </s>). Returns the raw float32 array
    (numpy) the CLI wrote: [sum of target lengths][vocab] flattened."""
    import numpy as np
    stdin = "".join(" ".join(map(str, s)) + "\n" + " ".join(map(str, t)) + "\n" for s, t in pairs)
    if os.path.exists(path):
        os.remove(path)
    run_cli(["translate", "-m", model, "--input-ids", "--forced-logits", path], stdin, what)
    if not os.path.exists(path):
        raise AssertionError(f"{what}: the CLI wrote no {path}")
    return np.fromfile(path, dtype="<f4")


def read_ids(path):
    with open(path) as f:
        return [[int(x) for x in l.split()] for l in f]


def first_diff(a, b):
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


class Tally:
    """Counts identical / tie / failing sentences of one comparison and prints them."""

    def __init__(self, what):
        self.what = what
        self.same = 0
        self.ties = []
        self.fails = []

    def line(self):
        return (f"{self.what}: {self.same} identical, {len(self.ties)} ties, "
                f"{len(self.fails)} real differences")

    def report(self, tc):
        print("  " + self.line())
        for i, msg in self.ties[:10]:
            print(f"    tie   #{i}: {msg}")
        for i, msg in self.fails[:10]:
            print(f"    DIFF  #{i}: {msg}")
        if self.fails:
            tc.fail(self.line() + "; first: " + "; ".join(f"#{i} {m}" for i, m in self.fails[:3]))


def compare_greedy(tc, what, srcs, got, want, ref_model, max_length, gold_check=True):
    """got/want: id lists. ref_model: a MarianRef used only for differing sentences."""
    t = Tally(what)
    for i, (g, w) in enumerate(zip(got, want)):
        if g == w:
            t.same += 1
            continue
        k = first_diff(g, w)
        rg = ref_model.greedy([srcs[i]], max_length, with_gaps=True)[0]
        if gold_check and rg[0] != w:
            t.fails.append((i, "the live reference, one sentence at a time, does not give the expected ids"))
            continue
        gap = rg[2][k] if k < len(rg[2]) else float("inf")
        msg = f"first difference at step {k + 1}: mtlite {g[k:k + 3]} vs {w[k:k + 3]}, reference top-2 gap {gap:.2e}"
        (t.ties if gap < GREEDY_TIE else t.fails).append((i, msg))
    t.report(tc)
    return t


def compare_beam(tc, what, srcs, got, want, ref_model, beam, max_length, gold_check=True):
    t = Tally(what)
    for i, (g, w) in enumerate(zip(got, want)):
        if g == w:
            t.same += 1
            continue
        hyps, margin = ref_model.beam([srcs[i]], beam, max_length, trace=True)[0]
        if gold_check and hyps[0][0] != w:
            t.fails.append((i, "the live reference, one sentence at a time, does not give the expected ids"))
            continue
        k = first_diff(g, w)
        msg = f"differs from token {k + 1}: mtlite {g[k:k + 3]} vs {w[k:k + 3]}, reference decision margin {margin:.2e}"
        (t.ties if margin < BEAM_TIE else t.fails).append((i, msg))
    t.report(tc)
    return t


def main():
    """unittest main that prints 'N passed, M failed' last and exits non-zero on any failure."""
    prog = unittest.main(module="__main__", exit=False, verbosity=2)
    r = prog.result
    failed = len(r.failures) + len(r.errors) + len(r.unexpectedSuccesses)
    skipped = len(r.skipped)
    print(f"{r.testsRun - failed - skipped} passed, {failed + skipped} failed")
    sys.exit(1 if failed or skipped else 0)
