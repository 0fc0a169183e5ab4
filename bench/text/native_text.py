#!/usr/bin/python3
"""mtlite native, the Python API (build/python), on one HTML page: the timing child of
bench/text_bench.py (one process per run).

  native_text.py --model M --page P [--batch B] [--passes N] [--shortlist] [--ratio R --offset O]
                 [--output F] [--overhead K]

One Model, one Translator(threads=1, max_batch=B, alignments=True), then
`translate_text(page, html=True, beam_size=1)` --passes times (pass 1 is the warm-up; every pass
is timed and reported). --output: the HTML of the last pass.

--overhead K: the text layer's cost. After the passes, the sentences the text layer gave the
model (`r.sentences[i].source`) are translated directly, K rounds of three calls each, the order
rotating from round to round: `translate_text(page, html=True)`, `translate_batch(sources)` and
`translate_batch(sources, return_alignments=True)` (the same translator, beam 1, the same caps
and shortlist; translate_batch cuts the list into max_batch calls of sentences of similar length,
as the text layer does); wall and process CPU time of every call. Checked: the batch translations equal the text layer's sentences.

Prints one JSON object.
"""
import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cpu():
    t = os.times()
    return t.user + t.system


def vm_hwm_kb():
    try:
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) for l in f if l.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--page", required=True)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--passes", type=int, default=2)
    ap.add_argument("--shortlist", action="store_true")
    ap.add_argument("--ratio", type=float, default=0.0)
    ap.add_argument("--offset", type=int, default=10)
    ap.add_argument("--output", default=None)
    ap.add_argument("--overhead", type=int, default=0)
    ap.add_argument("--python-dir", default=os.path.join(ROOT, "build", "python"))
    a = ap.parse_args()
    sys.path.insert(0, a.python_dir)
    import mtlite

    with open(a.page, encoding="utf-8") as f:
        page = f.read()
    t0 = time.perf_counter()
    model = mtlite.Model(a.model)
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    tr = mtlite.Translator(model, threads=1, max_batch=a.batch, alignments=True)
    create_s = time.perf_counter() - t0
    opts = dict(beam_size=1, max_length_ratio=a.ratio, max_length_offset=a.offset, use_shortlist=a.shortlist)

    runs, cpu_runs, r = [], [], None
    for _ in range(a.passes):
        c0, t0 = cpu(), time.perf_counter()
        r = tr.translate_text(page, html=True, **opts)
        runs.append(time.perf_counter() - t0)
        cpu_runs.append(cpu() - c0)
    if a.output:
        with open(a.output, "w", encoding="utf-8") as f:
            f.write(r.text)
    sources = [s.source for s in r.sentences]
    out = {"engine": "mtlite-native", "batch": a.batch, "load_s": load_s, "create_s": create_s, "runs": runs,
           "cpu_runs": cpu_runs, "sentences": len(sources), "pieces": sum(s.pieces for s in r.sentences),
           "failed": r.failed, "source_words": sum(len(s.split()) for s in sources),
           "vm_hwm_kb": vm_hwm_kb()}
    if a.overhead:
        calls = {
            "text": lambda: tr.translate_text(page, html=True, **opts),
            "batch": lambda: tr.translate_batch(sources, **opts),
            "batch_align": lambda: tr.translate_batch(sources, return_alignments=True, **opts),
        }
        names = list(calls)
        res = {n: calls[n]() for n in names}  # warm-up of each
        times = {n: [] for n in names}
        cpu_times = {n: [] for n in names}
        for k in range(a.overhead):
            order = names[k % 3:] + names[:k % 3]
            for n in order:
                c0, t0 = time.process_time(), time.perf_counter()
                calls[n]()
                times[n].append(time.perf_counter() - t0)
                cpu_times[n].append(time.process_time() - c0)
        batch = res["batch"]
        same = sum(b.text == s.translation for b, s in zip(batch, r.sentences))
        out["overhead"] = {"rounds": a.overhead, "times": times, "cpu_times": cpu_times, "same_translations": same,
                           "target_tokens": sum(len(b.ids[0]) + 1 for b in batch)}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
