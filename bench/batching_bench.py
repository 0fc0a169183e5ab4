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
stdin from the set's file, stdout kept for the check; and its CPU time (user + system, from
getrusage of the children: less disturbed by other processes than wall time, and for 1 thread
the work done). Reported: the median over repetitions -> sentences/s and sentences per CPU second, the speed-ups sorted / input order and 2 threads / 1 thread, the source padding
of the batches (from the CLI's final progress line) and the 1-minute load average before each
run. Check (fails the run): every run exits 0, and all configurations and repetitions give
byte-identical output.

Work, without timing (needs the Python package: PYTHONPATH=build/python, or found in the CLI's
build tree): one more `--output-ids` run per (set, beam) gives each sentence's output length;
with the source lengths (the model's tokenizer) it counts the decoder steps the batches take in
input order and sorted: the sum over batches of the longest output + 1 (greedy: exactly the
decoder steps, as every row stops at its </s>; beam search: a lower bound), and the mean rows
per step (all outputs + 1 / steps). `--reps 0` measures only this. Time it on an idle machine (`uptime`): with one benchmark process
running, a load of about 1 means nothing else is (2 threads need 2 idle cores).
"""
import argparse
import json
import os
import re
import resource
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
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        p = subprocess.run(cmd, stdin=f, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        secs = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.decode()[-2000:]}")
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    m = PADDING.search(p.stderr.decode())
    return secs, cpu, load, p.stdout, (float(m.group(1)), float(m.group(2))) if m else None


def output_lengths_work(a, inputs, beams):
    """Decoder steps of the batches in input order and sorted by source length (see above)."""
    try:
        import mtlite
    except ImportError:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(a.cli)), "python"))
        try:
            import mtlite
        except ImportError:
            print("(no mtlite Python package: decoder steps not counted)")
            return None, ""
    model = mtlite.Model(a.model)
    window = 64 * a.batch
    rows = []
    for name in SETS:
        path, n = inputs[name]
        with open(path, encoding="utf-8") as f:
            src = [len(model.encode(l.rstrip("\n"))) if l.strip() else 0 for l in f]
        for beam in beams:
            cmd = [a.cli, "translate", "-m", a.model, "--batch", str(a.batch), "--beam", str(beam), "--output-ids",
                   "-q", "--sort-window", "0"]
            with open(path, "rb") as f:
                out = subprocess.run(cmd, stdin=f, stdout=subprocess.PIPE, check=True).stdout.decode()
            tgt = [len(l.split()) + 1 for l in out.split("\n")[:-1]]  # + </s>
            assert len(tgt) == n == len(src)
            sorted_order = []
            for w in range(0, n, window):  # as the CLI: windows of 64 x batch lines, stable by length
                sorted_order += sorted(range(w, min(w + window, n)), key=lambda i: src[i])

            def steps(order):
                return sum(max(tgt[i] for i in order[k:k + a.batch]) for k in range(0, n, a.batch))

            s_in, s_sorted = steps(list(range(n))), steps(sorted_order)
            row = {"set": name, "beam": beam, "steps input order": s_in, "steps sorted": s_sorted,
                   "row steps": sum(tgt)}
            rows.append(row)
    md = [f"Decoder steps at --batch {a.batch} (sum over batches of the longest output + 1; greedy: exact, beam: a "
          "lower bound) and mean rows per step:", "",
          "| set | beam | input order | sorted | ÷ | rows per step, input order → sorted |", "|---|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {r['set']} | {r['beam']} | {r['steps input order']} | {r['steps sorted']} | "
                  f"{r['steps input order'] / r['steps sorted']:.2f}× | {r['row steps'] / r['steps input order']:.1f} → "
                  f"{r['row steps'] / r['steps sorted']:.1f} |")
    text = "\n".join(md) + "\n"
    print(text)
    return rows, text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "mtlite"))
    ap.add_argument("--model", default=os.path.join(ROOT, "build", "models", "demo.int8.mtlite"))
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--beam", default="1,4", help="comma-separated beam sizes")
    ap.add_argument("--reps", type=int, default=3, help="timed repetitions (0: only count the decoder steps)")
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
                secs, cpu, load, out, padding = run_once(a, path, beam, window, threads)
                want = outputs.setdefault((name, beam), out)
                if out != want:
                    raise RuntimeError(f"{name} beam {beam} {cname} rep {rep}: output differs")
                runs.append({"set": name, "beam": beam, "config": cname, "rep": rep, "secs": secs,
                             "cpu_secs": cpu, "load1": load, "padding": padding})
                print(f"rep {rep} {name} beam {beam} {cname:12s} {secs:7.3f} s  {n / secs:7.1f} sent/s  "
                      f"CPU {cpu:7.3f} s  load {load:.2f}", flush=True)

    work, work_md = output_lengths_work(a, inputs, beams)
    summary = []
    for beam in beams if runs else []:
        for name in SETS + ["both"]:
            sets = SETS if name == "both" else [name]
            sentences = sum(inputs[s][1] for s in sets)
            row = {"set": name, "beam": beam, "sentences": sentences}
            for cname, _, _ in CONFIGS:
                for key, col in (("secs", cname), ("cpu_secs", cname + " cpu")):
                    secs = sum(statistics.median(r[key] for r in runs
                                                 if r["set"] == s and r["beam"] == beam and r["config"] == cname)
                               for s in sets)
                    row[col] = sentences / secs
            row["sorted / input order"] = row["sorted"] / row["input order"]
            row["sorted / input order cpu"] = row["sorted cpu"] / row["input order cpu"]
            row["2t / 1t"] = row["sorted 2t"] / row["sorted"]
            if name != "both":
                pad = next(r["padding"] for r in runs if r["set"] == name and r["config"] == "sorted")
                row["padding sorted %"], row["padding input order %"] = pad if pad else (None, None)
            summary.append(row)
    loads = [r["load1"] for r in runs] or [os.getloadavg()[0]]
    header = (f"`mtlite translate --batch {a.batch}`, {os.path.basename(a.model)}, median of {a.reps} interleaved "
              f"runs, sentences/s (1-minute load {min(loads):.2f}-{max(loads):.2f}, {os.cpu_count()} CPUs)")
    md = [header + "; per CPU second: sentences / CPU time of the process (user + system), which "
                   "competing load disturbs less than wall time", "",
          "| set | beam | input order | sorted | sorted ÷ input order | per CPU s: input order → sorted (÷) "
          "| sorted, 2 threads | 2 t ÷ 1 t | source padding sorted / input order |",
          "|---|---|---|---|---|---|---|---|---|"]
    for r in summary:
        pad = (f"{r['padding sorted %']:.1f} % / {r['padding input order %']:.1f} %"
               if r.get("padding sorted %") is not None else "")
        md.append(f"| {r['set']} | {r['beam']} | {r['input order']:.1f} | {r['sorted']:.1f} | "
                  f"**{r['sorted / input order']:.2f}×** | {r['input order cpu']:.1f} → {r['sorted cpu']:.1f} "
                  f"({r['sorted / input order cpu']:.2f}×) | {r['sorted 2t']:.1f} | {r['2t / 1t']:.2f}× | {pad} |")
    text = ("\n".join(md) + "\n\n" if runs else "") + work_md
    print("\n" + text)
    if a.md:
        with open(a.md, "w", encoding="utf-8") as f:
            f.write(text)
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"cli": a.cli, "model": a.model, "batch": a.batch, "beams": beams, "reps": a.reps,
                       "cpus": os.cpu_count(), "runs": runs, "summary": summary, "decoder_steps": work}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
