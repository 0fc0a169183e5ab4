#!/usr/bin/python3
"""Vocabulary shortlist quality and speed on the demo model.

Builds a shortlist from parallel training text with `mtlite shortlist` (Multi30k and Tatoeba
en->de training sets under --data: multi30k.train.{en,de}, tatoeba.train.{en,de}), translates
both dev sets (tests/data/dev: Multi30k validation, Tatoeba dev) with and without `--shortlist`
and reports corpus BLEU of each (tests/reference/bleu.py: sacrebleu's defaults, 13a), the BLEU
loss, and how many translations changed. Then, with bench/shortlist_bench, the mean candidate-set
size per translate call and the translation time with and without the shortlist (interleaved).

    /usr/bin/python3 bench/shortlist_bleu.py --data PATH/TO/DATA [--top-k 50] [--frequent 50]
        [--score dice] [--beam 1,4] [--batch 1] [--speed-batch 1,16] [--repeat 1] [--json OUT]

Exit status 1 when a BLEU loss exceeds --max-loss (default 0.2).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "reference"))
import bleu  # noqa: E402

DEV_SETS = [("multi30k", "multi30k.val"), ("tatoeba", "tatoeba.dev")]
TRAIN_SETS = ["multi30k.train", "tatoeba.train"]


def csv_ints(s):
    try:
        v = [int(x) for x in s.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError("comma-separated integers expected")
    if not v or min(v) < 1:
        raise argparse.ArgumentTypeError("integers >= 1 expected")
    return v


def run(cmd, stdin_path=None):
    with open(stdin_path, "rb") if stdin_path else open(os.devnull, "rb") as stdin:
        p = subprocess.run(cmd, stdin=stdin, capture_output=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr.decode(errors='replace')}")
    return p.stdout.decode()


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().splitlines()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="directory with multi30k.train.{en,de} and tatoeba.train.{en,de}")
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--model", default=None, help="default BUILD/models/demo.int8.mtlite")
    ap.add_argument("--dev-dir", default=os.path.join(ROOT, "tests", "data", "dev"))
    ap.add_argument("--top-k", type=int, default=50)
    ap.add_argument("--frequent", type=int, default=50)
    ap.add_argument("--score", choices=["dice", "conditional"], default="dice")
    ap.add_argument("--beam", type=csv_ints, default=[1, 4], help="beam sizes for BLEU (default 1,4)")
    ap.add_argument("--batch", type=int, default=1,
                    help="sentences per call for BLEU (default 1: each sentence gets only its own candidates)")
    ap.add_argument("--speed-batch", type=csv_ints, default=[1, 16], help="batch sizes of the speed runs")
    ap.add_argument("--speed-beam", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=1, help="timed runs of each variant (interleaved)")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--max-loss", type=float, default=0.2)
    ap.add_argument("--keep", default=None, help="write the shortlisted model here (default: a temporary file)")
    ap.add_argument("--json", default=None, help="write the results as JSON here")
    a = ap.parse_args()

    mtlite = os.path.join(a.build_dir, "mtlite")
    bench = os.path.join(a.build_dir, "bench", "shortlist_bench")
    model = a.model or os.path.join(a.build_dir, "models", "demo.int8.mtlite")
    for p in [mtlite, model] + ([] if a.no_speed else [bench]):
        if not os.path.exists(p):
            sys.exit(f"missing {p} (build first)")
    tmp = tempfile.TemporaryDirectory(prefix="shortlist_bleu_")
    out = a.keep or os.path.join(tmp.name, "model.shortlist.mtlite")

    cmd = [mtlite, "shortlist", "-m", model, "-o", out, "--top-k", str(a.top_k), "--frequent", str(a.frequent),
           "--score", a.score]
    for name in TRAIN_SETS:
        cmd += ["--source", os.path.join(a.data, name + ".en"), "--target", os.path.join(a.data, name + ".de")]
    t0 = time.time()
    report = run(cmd)
    build_s = time.time() - t0
    print(report.rstrip())
    print(f"(built in {build_s:.1f} s)")
    info = json.loads(run([mtlite, "info", out, "--json"]))
    results = {"model": os.path.basename(model), "top_k": a.top_k, "frequent": a.frequent, "score": a.score,
               "shortlist": info.get("shortlist"), "build_seconds": round(build_s, 2), "bleu": [], "speed": []}

    worst = 0.0
    print(f"\nBLEU (batch {a.batch}, K={a.top_k}, N={a.frequent}, {a.score}):")
    print(f"{'set':10} {'beam':>4} {'full':>7} {'shortlist':>9} {'loss':>6} {'changed':>9}")
    for label, stem in DEV_SETS:
        src = os.path.join(a.dev_dir, stem + ".en")
        refs = read_lines(os.path.join(a.dev_dir, stem + ".de"))
        for beam in a.beam:
            base = [mtlite, "translate", "-q", "-m", out, "--beam", str(beam), "--batch", str(a.batch)]
            full = run(base, src).splitlines()
            short = run(base + ["--shortlist"], src).splitlines()
            if len(full) != len(refs) or len(short) != len(refs):
                sys.exit(f"{stem}: {len(full)}/{len(short)} translations for {len(refs)} references")
            b_full, b_short = bleu.corpus_bleu(full, refs), bleu.corpus_bleu(short, refs)
            changed = sum(x != y for x, y in zip(full, short))
            loss = b_full - b_short
            worst = max(worst, loss)
            print(f"{label:10} {beam:>4} {b_full:7.2f} {b_short:9.2f} {loss:6.2f} {changed:>4}/{len(refs)}")
            results["bleu"].append({"set": label, "beam": beam, "batch": a.batch, "full": round(b_full, 2),
                                    "shortlist": round(b_short, 2), "loss": round(loss, 2), "changed": changed,
                                    "sentences": len(refs)})

    if not a.no_speed:
        print(f"\nCandidates and speed (beam {a.speed_beam}, best of {a.repeat} interleaved run(s) each):")
        print(f"{'set':10} {'batch':>5} {'candidates':>10} {'columns':>8} {'full s':>8} {'short s':>8} {'speedup':>7}")
        for label, stem in DEV_SETS:
            src = os.path.join(a.dev_dir, stem + ".en")
            lines = run([bench, "-m", out, "--input", src, "--batch", ",".join(map(str, a.speed_batch)),
                         "--beam", str(a.speed_beam), "--repeat", str(a.repeat)])
            for line in lines.splitlines():
                r = json.loads(line)
                r["set"] = label
                r["input"] = os.path.relpath(r["input"], ROOT) if r["input"].startswith(ROOT) else os.path.basename(r["input"])
                results["speed"].append(r)
                print(f"{label:10} {r['batch']:>5} {r['mean_candidates']:>10.1f} {r['mean_columns']:>8.1f} "
                      f"{r['full_s']:>8.3f} {r['shortlist_s']:>8.3f} {r['speedup']:>7.3f}")
        print(f"(vocabulary {results['speed'][0]['vocab']}; columns: logits computed per step, whole 8-row blocks)")

    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
            f.write("\n")
    if worst > a.max_loss:
        print(f"\nFAIL: BLEU loss {worst:.2f} > {a.max_loss}")
        return 1
    print(f"\nok: largest BLEU loss {worst:.2f} <= {a.max_loss}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
