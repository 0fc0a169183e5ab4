#!/usr/bin/python3
"""Batching benchmark: `mtlite translate --batch 16` with and without sorting by length, and with 1
vs 2 threads (sorted), on the dev sets.

  /usr/bin/python3 bench/batching_bench.py [--cli build/mtlite] [--model build/models/demo.int8.mtlite]
      [--batch 16] [--beam 1,4] [--reps 3] [--limit N] [--json out.json] [--md out.md]

Configurations per (set, beam), all at --batch B:
  input order   --sort-window 0 (batches of B consecutive lines)      --threads 1
  sorted        the default window (64 x B lines sorted by length)    --threads 1
  sorted 2t     the same                                               --threads 2
Each repetition runs every configuration once, in an order that rotates from one repetition to
the next (interleaved, so slow drifts of machine load hit all alike). Time = wall time of the
whole `mtlite translate` process (model load and translator creation included: a few ms),
stdin from the set's file, stdout kept for the check. Reported: the median over repetitions ->
sentences/s, the speed-ups sorted / input order and 2 threads / 1 thread, the source padding
of the batches (from the CLI's final progress line) and the 1-minute load average before each
run. Check (fails the run): every run exits 0, and all configurations and repetitions give
byte-identical output. Time it on an idle machine (`uptime`): with one benchmark process
running, a load of about 1 means nothing else is (2 threads need 2 idle cores).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SETS = ["multi30k.val", "tatoeba.dev"]
CONFIGS = [  # name, --sort-window (None: the default), --threads
    ("input order", "0", 1),
    ("sorted", None, 1),
    ("sorted 2t", None, 2),
]
PADDING = re.compile(r"source padding ([0-9.]+) % sorted by length, ([0-9.]+) % in input order")


def run_once(a, path, beam, window, threads):
    cmd = [a.cli, "translate", "-m", a.model, "--batch", str(a.batch), "--beam", str(beam), "--threads", str(threads)]
    if window is not None:
        cmd += ["--sort-window", window]
    with open(path, "rb") as f:
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        p = subprocess.run(cmd, stdin=f, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        secs = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.decode()[-2000:]}")
    m = PADDING.search(p.stderr.decode())
    return secs, load, p.stdout, (float(m.group(1)), float(m.group(2))) if m else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "mtlite"))
    ap.add_argument("--model", default=os.path.join(ROOT, "build", "models", "demo.int8.mtlite"))
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--beam", default="1,4", help="comma-separated beam sizes")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--limit", type=int, default=0, help="first N lines per set (0 = all)")
    ap.add_argument("--json", help="write all runs and the summary here")
    ap.add_argument("--md", help="write the summary table (markdown) here")
    a = ap.parse_args()
    beams = [int(b) for b in a.beam.split(",") if b.strip()]

    tmp = tempfile.mkdtemp(prefix="mtlite_batching_")
    inputs = {}
    for name in SETS:
        with open(os.path.join(ROOT, "tests", "data", "dev", name + ".en"), encoding="utf-8") as f:
            lines = f.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if a.limit:
            lines = lines[:a.limit]
        inputs[name] = (os.path.join(tmp, name + ".en"), len(lines))
        with open(inputs[name][0], "w", encoding="utf-8") as f:
            f.write("".join(l + "\n" for l in lines))

    runs = []  # dicts: set, beam, config, rep, secs, load, padding
    outputs = {}  # (set, beam) -> stdout of the first run
    for rep in range(a.reps):
        groups = [(name, beam) for name in SETS for beam in beams]
        for gi, (name, beam) in enumerate(groups):
            path, n = inputs[name]
            k = (rep + gi) % len(CONFIGS)  # every group sees every order over 3 repetitions
            for cname, window, threads in CONFIGS[k:] + CONFIGS[:k]:
                secs, load, out, padding = run_once(a, path, beam, window, threads)
                want = outputs.setdefault((name, beam), out)
                if out != want:
                    raise RuntimeError(f"{name} beam {beam} {cname} rep {rep}: output differs")
                runs.append({"set": name, "beam": beam, "config": cname, "rep": rep, "secs": secs,
                             "load1": load, "padding": padding})
                print(f"rep {rep} {name} beam {beam} {cname:12s} {secs:7.3f} s  {n / secs:7.1f} sent/s  "
                      f"load {load:.2f}", flush=True)

    summary = []
    for beam in beams:
        for name in SETS + ["both"]:
            sets = SETS if name == "both" else [name]
            sentences = sum(inputs[s][1] for s in sets)
            row = {"set": name, "beam": beam, "sentences": sentences}
            for cname, _, _ in CONFIGS:
                secs = sum(statistics.median(r["secs"] for r in runs
                                             if r["set"] == s and r["beam"] == beam and r["config"] == cname)
                           for s in sets)
                row[cname] = sentences / secs
            row["sorted / input order"] = row["sorted"] / row["input order"]
            row["2t / 1t"] = row["sorted 2t"] / row["sorted"]
            if name != "both":
                pad = next(r["padding"] for r in runs if r["set"] == name and r["config"] == "sorted")
                row["padding sorted %"], row["padding input order %"] = pad if pad else (None, None)
            summary.append(row)
    loads = [r["load1"] for r in runs]
    header = (f"`mtlite translate --batch {a.batch}`, {os.path.basename(a.model)}, median of {a.reps} interleaved "
              f"runs, sentences/s (1-minute load {min(loads):.2f}-{max(loads):.2f}, {os.cpu_count()} CPUs)")
    md = [header, "", "| set | beam | input order | sorted | sorted ÷ input order | sorted, 2 threads | 2 t ÷ 1 t "
                      "| source padding sorted / input order |",
          "|---|---|---|---|---|---|---|---|"]
    for r in summary:
        pad = (f"{r['padding sorted %']:.1f} % / {r['padding input order %']:.1f} %"
               if r.get("padding sorted %") is not None else "")
        md.append(f"| {r['set']} | {r['beam']} | {r['input order']:.1f} | {r['sorted']:.1f} | "
                  f"**{r['sorted / input order']:.2f}×** | {r['sorted 2t']:.1f} | {r['2t / 1t']:.2f}× | {pad} |")
    text = "\n".join(md) + "\n"
    print("\n" + text)
    if a.md:
        with open(a.md, "w", encoding="utf-8") as f:
            f.write(text)
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"cli": a.cli, "model": a.model, "batch": a.batch, "beams": beams, "reps": a.reps,
                       "cpus": os.cpu_count(), "runs": runs, "summary": summary}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
