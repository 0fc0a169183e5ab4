#!/usr/bin/python3
"""The profiler's cost, in one interleaved run of three variants of bench/e2e_bench:

  baseline  the previous release (before the profiler existed): --baseline-build / --baseline-rev
  off       this build, profiling compiled in but not requested (the default)
  on        this build with the profiler on (e2e_bench --profile: TranslatorLimits::profiling
            and TranslateOptions::profile on every call)

Every repetition runs each variant once, in rotating order, on the same model file and input
(e2e_bench --repeat 1 after its untimed warm-up call); the medians of the per-run translate time
(e2e_bench's total_s) are compared. Targets: off within 1 % of baseline (noise), on within 3 % of
off, at batch 1 greedy (the defaults). Exit 1 when a target is missed, so run it on an idle
machine (the 1-minute load is printed before every run).

  /usr/bin/python3 bench/profile_overhead.py [--build build] (--baseline-build DIR | --baseline-rev REV)
      [--reps 7] [--lines 300] [--input FILE] [--model FILE] [--beam 1] [--batch 1] [--threads 1] [--cpu N]

--cpu: every run is pinned to CPU N (default: the first CPU this process may use; -1: no pinning).
The cores of a virtual machine need not be equally fast: on the 2-core machine these figures
come from, one vCPU ran the same translation 1.28x slower than the other at the same time, so
unpinned runs land in two clusters and the medians compare the scheduler's choices.

--baseline-build DIR: a build directory of the previous release holding bench/e2e_bench.
--baseline-rev REV (a tag such as v0.1.0, or a commit): the previous release's revision; when
--baseline-build (default build-baseline/) lacks its build, the script makes one from a detached
`git worktree add` of REV (--baseline-src, default in the system temp directory; e2e_bench only,
-j2); later runs reuse it.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import bench_common as bc  # noqa: E402

TARGET_OFF, TARGET_ON = 1.01, 1.03


def run_once(binary, args, profile, out_dir, tag, cpu):
    out = os.path.join(out_dir, tag + ".txt")
    ids = os.path.join(out_dir, tag + ".ids")
    cmd = [binary] + args + ["--output", out, "--ids-output", ids] + (["--profile"] if profile else [])
    pin = (lambda: os.sched_setaffinity(0, {cpu})) if cpu >= 0 else None
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=pin)
    if p.returncode != 0:
        sys.exit(f"profile_overhead: `{' '.join(cmd)}` failed ({p.returncode}):\n{p.stderr.decode()[-2000:]}")
    rep = json.loads(p.stdout)
    with open(ids, encoding="utf-8") as f:
        rep["ids"] = f.read()
    return rep


def main():
    ap = argparse.ArgumentParser(description="profiler overhead: previous release vs profiling off vs on")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="this tree's build directory")
    bc.add_baseline_args(ap, "bench/e2e_bench")
    ap.add_argument("--model", help="model file (default: <build>/models/demo.int8.mtlite)")
    ap.add_argument("--input", default=os.path.join(ROOT, "tests", "data", "dev", "multi30k.val.en"))
    ap.add_argument("--lines", type=int, default=300, help="first N input lines (0: all)")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--beam", type=int, default=1)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cpu", type=int, help="pin every run to this CPU (default: the first allowed; -1: none)")
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args()
    if not bc.has_baseline(a):
        ap.error("name the previous release: --baseline-build DIR or --baseline-rev REV")
    if a.cpu is None:
        a.cpu = min(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else -1
    if a.threads > 1 and a.cpu >= 0:
        sys.exit("profile_overhead: --threads > 1 needs --cpu -1 (no pinning)")

    this = os.path.join(a.build, "bench", "e2e_bench")
    if not os.access(this, os.X_OK):
        sys.exit(f"profile_overhead: {this} missing (cmake --build {a.build} --target e2e_bench)")
    try:
        base = bc.ensure_baseline(a, {"e2e_bench": "bench/e2e_bench"}, ["e2e_bench"],
                                  lambda msg: print(f"profile_overhead: {msg}", file=sys.stderr))[0]["e2e_bench"]
    except bc.SetupError as ex:
        sys.exit(f"profile_overhead: {ex}")
    if not os.access(base, os.X_OK):
        sys.exit(f"profile_overhead: {base} is not an executable")
    model = a.model or os.path.join(a.build, "models", "demo.int8.mtlite")
    tmp = tempfile.TemporaryDirectory()
    inp = a.input
    if a.lines:
        inp = os.path.join(tmp.name, "input.txt")
        with open(a.input, encoding="utf-8") as f, open(inp, "w", encoding="utf-8") as g:
            for i, line in enumerate(f):
                if i >= a.lines:
                    break
                g.write(line)
    args = ["-m", model, "--input", inp, "--repeat", "1", "--beam", str(a.beam), "--batch", str(a.batch),
            "--threads", str(a.threads)]
    variants = [("baseline", base, False), ("off", this, False), ("on", this, True)]
    times = {v[0]: [] for v in variants}
    loads, ids = [], {}
    for r in range(a.reps):
        order = variants[r % 3:] + variants[:r % 3]
        for name, binary, profile in order:
            loads.append(os.getloadavg()[0])
            rep = run_once(binary, args, profile, tmp.name, f"{name}.{r}", a.cpu)
            times[name].append(rep["total_s"])
            ids.setdefault(name, rep["ids"])
            if rep.get("profile", False) != profile:
                sys.exit(f"profile_overhead: {binary} did not report profile={profile}")
        print(f"rep {r + 1}/{a.reps}: " + ", ".join(f"{n} {times[n][-1]:.4f} s" for n, _, _ in variants)
              + f" (load {loads[-1]:.2f})", file=sys.stderr)

    med = {n: statistics.median(t) for n, t in times.items()}
    off_ratio, on_ratio = med["off"] / med["baseline"], med["on"] / med["off"]
    # Per repetition (same conditions): the spread shows the noise of the machine.
    rep_off = [o / b for o, b in zip(times["off"], times["baseline"])]
    rep_on = [o / f for o, f in zip(times["on"], times["off"])]
    same = ids["baseline"] == ids["off"] == ids["on"]
    ok = off_ratio <= TARGET_OFF and on_ratio <= TARGET_ON
    print(f"profiler overhead: {os.path.basename(model)}, {a.lines or 'all'} lines, beam {a.beam}, batch {a.batch}, "
          f"{a.threads} thread(s), {a.reps} interleaved repetitions, "
          f"{'pinned to CPU ' + str(a.cpu) if a.cpu >= 0 else 'not pinned'}, load {min(loads):.2f}-{max(loads):.2f}")
    print("| variant | median s | runs (s) |")
    print("|---|---|---|")
    for n, _, _ in variants:
        print(f"| {n} | {med[n]:.4f} | {', '.join(f'{t:.4f}' for t in times[n])} |")
    print(f"off / baseline = {off_ratio:.4f} (target <= {TARGET_OFF}; per repetition {min(rep_off):.3f}-{max(rep_off):.3f})")
    print(f"on / off       = {on_ratio:.4f} (target <= {TARGET_ON}; per repetition {min(rep_on):.3f}-{max(rep_on):.3f})")
    print(f"translations identical across the three: {'yes' if same else 'NO'}")
    print("within targets" if ok else "TARGET MISSED (timings on a busy machine are noise: check the load)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"times": times, "median": med, "off_over_baseline": off_ratio, "on_over_off": on_ratio,
                       "load": loads, "identical": same, "args": vars(a)}, f, indent=1)
    return 0 if ok and same else 1


if __name__ == "__main__":
    sys.exit(main())
