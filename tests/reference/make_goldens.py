#!/usr/bin/python3
"""Writes tests/data/golden/ for the demo model (models/marian-en-de-tiny) with marian_ref.py.
Not run by the tests (the outputs are committed). Run:

  OMP_NUM_THREADS=1 /usr/bin/python3 tests/reference/make_goldens.py [--verify] [--only greedy|beam|logits]

Dev text comes from tests/data/dev/ when it is there, else from ../shared/data (script only).
Files (NAME = multi30k.val | tatoeba.dev), one line per dev sentence:
  demo.NAME.src.ids          source ids incl. the final </s> (python sentencepiece + vocab.json)
  demo.NAME.greedy.ids       greedy ids, without the final </s>       (max_length 256)
  demo.NAME.greedy.scores    greedy score (sum log-prob / len^1.0), 6 decimals
  demo.NAME.beam4.ids        beam-4 best ids                           (max_length 256, lp 1.0)
  demo.NAME.beam4.nbest.tsv  sentence<TAB>rank<TAB>score(6 decimals)<TAB>ids, 4 per sentence
  demo.forced.f32 / .json    teacher-forced logits (see the json)
--verify also decodes every sentence one at a time and checks that batching changes nothing.
"""
import argparse
import json
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from marian_ref import MarianRef, TextTools  # noqa: E402

MODEL = os.path.join(ROOT, "models", "marian-en-de-tiny")
OUT = os.path.join(ROOT, "tests", "data", "golden")
SETS = ["multi30k.val", "tatoeba.dev"]
MAX_LENGTH = 256
BEAM = 4
BATCH = 32
# Teacher-forced logits: (set, line index, target kind) -- "ref": the human reference
# translation tokenized with target.spm; "greedy": the reference model's greedy output.
FORCED = [("tatoeba.dev", 1, "ref"), ("tatoeba.dev", 7, "greedy"),
          ("multi30k.val", 1, "greedy"), ("multi30k.val", 3, "ref")]


def dev_path(name, lang):
    p = os.path.join(ROOT, "tests", "data", "dev", f"{name}.{lang}")
    if os.path.exists(p):
        return p
    return os.path.join(ROOT, "..", "shared", "data", f"{name}.{lang}")


def read_lines(p):
    with open(p, encoding="utf-8") as f:
        return [l.rstrip("\n") for l in f]


def ids_line(ids):
    return " ".join(str(i) for i in ids)


def batched(fn, srcs):
    """Runs fn on length-sorted batches, returns results in input order."""
    order = sorted(range(len(srcs)), key=lambda i: len(srcs[i]))
    res = [None] * len(srcs)
    for s in range(0, len(order), BATCH):
        chunk = order[s:s + BATCH]
        for i, r in zip(chunk, fn([srcs[i] for i in chunk])):
            res[i] = r
    return res


def write(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        for l in lines:
            f.write(l + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--verify", action="store_true")
    ap.add_argument("--only", choices=["greedy", "beam", "logits"])
    a = ap.parse_args()
    torch.set_num_threads(1)
    os.makedirs(OUT, exist_ok=True)
    m = MarianRef(MODEL)
    tt = TextTools(MODEL)
    srcs = {}
    for name in SETS:
        srcs[name] = [tt.encode(l) for l in read_lines(dev_path(name, "en"))]
        write(os.path.join(OUT, f"demo.{name}.src.ids"), [ids_line(s) for s in srcs[name]])

    if a.only in (None, "greedy"):
        for name in SETS:
            t0 = time.time()
            g = batched(lambda b: m.greedy(b, MAX_LENGTH), srcs[name])
            print(f"greedy {name}: {len(g)} sentences {time.time() - t0:.1f}s", flush=True)
            write(os.path.join(OUT, f"demo.{name}.greedy.ids"), [ids_line(x[0]) for x in g])
            write(os.path.join(OUT, f"demo.{name}.greedy.scores"), [f"{x[1]:.6f}" for x in g])
            if a.verify:
                t0 = time.time()
                same = sum(m.greedy([s], MAX_LENGTH)[0][0] == x[0] for s, x in zip(srcs[name], g))
                print(f"  one at a time: {same}/{len(g)} identical ({time.time() - t0:.1f}s)", flush=True)

    if a.only in (None, "beam"):
        for name in SETS:
            t0 = time.time()
            b = batched(lambda x: m.beam(x, BEAM, MAX_LENGTH, 1.0, n_best=BEAM), srcs[name])
            print(f"beam{BEAM} {name}: {len(b)} sentences {time.time() - t0:.1f}s", flush=True)
            write(os.path.join(OUT, f"demo.{name}.beam{BEAM}.ids"), [ids_line(h[0][0]) for h in b])
            rows = []
            for i, hyps in enumerate(b):
                for r, (ids, sc) in enumerate(hyps):
                    rows.append(f"{i}\t{r}\t{sc:.6f}\t{ids_line(ids)}")
            write(os.path.join(OUT, f"demo.{name}.beam{BEAM}.nbest.tsv"), rows)
            if a.verify:
                t0 = time.time()
                same, worst = 0, 0.0
                for s, hyps in zip(srcs[name], b):
                    one = m.beam([s], BEAM, MAX_LENGTH, 1.0, n_best=BEAM)[0]
                    if [h[0] for h in one] == [h[0] for h in hyps]:
                        same += 1
                        worst = max(worst, max(abs(x[1] - y[1]) for x, y in zip(one, hyps)))
                print(f"  one at a time: {same}/{len(b)} identical n-best id lists, max score "
                      f"difference {worst:.2e} ({time.time() - t0:.1f}s)", flush=True)

    if a.only in (None, "logits"):
        entries = []
        blobs = []
        offset = 0
        for name, idx, kind in FORCED:
            src = srcs[name][idx]
            if kind == "ref":
                tgt = tt.encode(read_lines(dev_path(name, "de"))[idx])  # target.spm == source.spm
            else:
                tgt = m.greedy([src], MAX_LENGTH)[0][0] + [m.eos]
            lg = m.forced_logits(src, tgt).contiguous()
            blobs.append(lg.numpy().astype("<f4").tobytes())
            entries.append({"set": name, "line": idx, "target": kind, "source_ids": src,
                            "target_ids": tgt, "shape": list(lg.shape), "offset_floats": offset})
            offset += lg.numel()
        with open(os.path.join(OUT, "demo.forced.f32"), "wb") as f:
            for b in blobs:
                f.write(b)
        meta = {"model": "models/marian-en-de-tiny", "dtype": "float32 little-endian, row-major",
                "layout": "entries concatenated; each [len(target_ids)][vocab] raw logits for decoder "
                          "inputs (decoder_start, t0, ..., t_{n-2}); target_ids exclude the decoder "
                          "start and end with </s>",
                "entries": entries}
        with open(os.path.join(OUT, "demo.forced.json"), "w") as f:  # one line per entry
            head = json.dumps({k: v for k, v in meta.items() if k != "entries"}, indent=1)[:-2]
            f.write(head + ',\n "entries": [\n')
            f.write(",\n".join("  " + json.dumps(e, ensure_ascii=False) for e in entries))
            f.write("\n ]\n}\n")
        print(f"forced logits: {len(entries)} entries, {offset * 4} bytes")


if __name__ == "__main__":
    main()
