#!/usr/bin/python3
"""Two Python threads with two mtlite.Translators vs one: does the package scale across cores?

  PYTHONPATH=build/python /usr/bin/python3 bench/python_threads.py --model build/models/demo.int8.mtlite
      [--limit 200] [--beam 1] [--batch 1] [--reps 3] [--json out.json] [--cli build/mtlite]

Work unit W = the first --limit sentences of each dev set (multi30k.val + tatoeba.dev), translated
with translate_batch in chunks of --batch. Serial: one thread translates W (time t1). Parallel: two
threads, each with its own Translator over one shared Model, each translate W at the same time
(wall time t2, from a common start barrier to the last thread's end). Speed-up = 2 * t1 / t2
(1.0 = no parallelism; 2.0 = perfect on 2 cores). Reported: the median of --reps interleaved
(serial, parallel) pairs, the 1-minute load average before each, and the outputs are checked to be
identical to the serial run. Needs >= 2 idle cores to mean anything: with --cli, each rep also runs
the same work as one `mtlite translate` process and as two concurrent ones (control: the speed-up
the machine allows right now, without Python).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def read_lines(path, limit):
    with open(path, encoding="utf-8") as f:
        lines = [l.rstrip("\n") for l in f]
    return lines[:limit] if limit else lines


def cli_speedup(a, lines):
    data = "".join(l + "\n" for l in lines).encode("utf-8")
    cmd = [a.cli, "translate", "-m", a.model, "--beam", str(a.beam), "--batch", str(a.batch), "-q"]

    def start():
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
        p.stdin.write(data)
        p.stdin.close()
        return p

    t0 = time.perf_counter()
    if start().wait() != 0:
        raise RuntimeError("mtlite translate failed")
    t1 = time.perf_counter() - t0
    t0 = time.perf_counter()
    procs = [start(), start()]
    if any(p.wait() != 0 for p in procs):
        raise RuntimeError("mtlite translate failed")
    return 2 * t1 / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=os.path.join(ROOT, "build", "models", "demo.int8.mtlite"))
    ap.add_argument("--limit", type=int, default=200, help="sentences per dev set (0 = all)")
    ap.add_argument("--beam", type=int, default=1)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--cli", help="the mtlite CLI: also measure one vs two concurrent processes (control)")
    a = ap.parse_args()
    import mtlite

    lines = []
    for name in ("multi30k.val", "tatoeba.dev"):
        lines += read_lines(os.path.join(ROOT, "tests", "data", "dev", name + ".en"), a.limit)
    model = mtlite.Model(a.model)
    translators = [mtlite.Translator(model, max_batch=a.batch, max_beam=a.beam) for _ in range(2)]

    def work(tr):
        out = []
        for i in range(0, len(lines), a.batch):
            out += [r.text for r in tr.translate_batch(lines[i:i + a.batch], beam_size=a.beam)]
        return out

    reference = work(translators[0])  # warm-up (page cache, arena pages) and the expected output
    # Share of a single-thread run spent inside the runtime without the GIL: with two cores, two
    # threads can overlap everything but the rest (the Python side, which holds the GIL).
    before = translators[0]._impl.runtime_seconds()
    t0 = time.perf_counter()
    work(translators[0])
    gil_free = (translators[0]._impl.runtime_seconds() - before) / (time.perf_counter() - t0)
    print(f"single thread: {100 * gil_free:.1f} % of the time inside the runtime without the GIL", flush=True)
    rows = []
    for rep in range(a.reps):
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        serial_out = work(translators[0])
        t1 = time.perf_counter() - t0
        assert serial_out == reference

        barrier = threading.Barrier(3)
        outs, ends = [None, None], [0.0, 0.0]

        def run(k):
            barrier.wait()
            outs[k] = work(translators[k])
            ends[k] = time.perf_counter()

        threads = [threading.Thread(target=run, args=(k,)) for k in range(2)]
        for t in threads:
            t.start()
        barrier.wait()
        start = time.perf_counter()
        for t in threads:
            t.join()
        t2 = max(ends) - start
        assert outs[0] == reference and outs[1] == reference, "parallel outputs differ from serial"
        row = {"rep": rep, "load1": load, "serial_s": t1, "parallel_s": t2, "speedup": 2 * t1 / t2}
        msg = f"rep {rep}: load {load:.2f}  serial {t1:.3f} s  two threads {t2:.3f} s  speed-up {2 * t1 / t2:.2f}x"
        if a.cli:
            row["cli_speedup"] = cli_speedup(a, lines)
            msg += f"  (control, two CLI processes: {row['cli_speedup']:.2f}x)"
        rows.append(row)
        print(msg, flush=True)
    med = statistics.median(r["speedup"] for r in rows)
    if a.cli:
        print(f"control: median speed-up of two CLI processes {statistics.median(r['cli_speedup'] for r in rows):.2f}x")
    tokens = sum(len(model.encode(r, target=True, add_eos=False)) for r in reference)
    summary = {"model": a.model, "sentences": len(lines), "target_tokens": tokens, "beam": a.beam, "batch": a.batch,
               "cpus": os.cpu_count(), "median_speedup": med, "gil_free_fraction": gil_free, "runs": rows, "mtlite": mtlite.__version__}
    print(f"{len(lines)} sentences, beam {a.beam}, batch {a.batch}: median speed-up with two threads {med:.2f}x "
          f"(serial {statistics.median(r['serial_s'] for r in rows):.3f} s, "
          f"{tokens / statistics.median(r['serial_s'] for r in rows):.0f} target tokens/s)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(summary, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
