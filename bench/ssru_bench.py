#!/usr/bin/python3
"""SSRU decoder layers against self-attention on the Bergamot "tiny" student shape, in ONE
interleaved run: batch 1, 1 thread, int8, greedy and beam 4.

Models (random weights, --fixed-length: </s> is never chosen, so every sentence decodes exactly
--max-length tokens; the script checks every output's id count):

  tiny32k-ssru   the students' shape, SSRU decoder layers, 32,000 shared ids:
                   make_ssru_checkpoint.py --shape tiny --decoder ssru --vocab-size 32000 --fixed-length
                   marian_export.py --format bin --vocab yml
                   mtlite convert model.bin --vocab source.spm --vocab vocab.yml --quantize int8
  tiny32k        the tiny32k transformer of bench/run_shapes.py (headline baseline):
                   make_random_checkpoint.py --preset tiny32k --fixed-length
                   mtlite convert DIR --quantize int8
  tiny32k-sa     control: tiny32k-ssru's pipeline with --decoder self_attention (same weights
                 generator and Marian path, self-attention layers): separates the decoder cell
                 from the differences of the two generators and converter paths
  tiny8k-ssru, tiny8k-sa   the same two with the demo's 8,001 ids (no --vocab-size; --vocab spm)

Every configuration (model x length x search) runs twice per repetition, with --max-length L
and with --max-length 1 (tokenizer + encoder + cross K/V + one step): the difference over L-1
steps per sentence is the decoder step. The models' order rotates from one repetition to the
next. Recorded per run: tokens/s and tokens per CPU second of e2e_bench's timed calls (its
cpu_s: on a shared machine, the work without the waiting for a core), the process's wall and
CPU time (user + system) and the 1-minute load average before it. Reported: medians over --reps
(>= 3), and per pair (SSRU / tiny32k, the control / tiny32k, the 8k pair) the median and range
of the per-repetition ratios (the two runs of a ratio are at most minutes apart). Static per
model: decoder-step weight bytes (e2e_bench --roofline) and the translator arena (mtlite info
--limits 1,128,L,beam).

  /usr/bin/python3 bench/ssru_bench.py              # 9 repetitions, about 6 min on a 2-core machine
  /usr/bin/python3 bench/ssru_bench.py --smoke      # 8 sentences, 1 rep (checks the pipeline)

Outputs: bench/results/ssru/ssru.{json,md} (--smoke: --out-dir or build-ssru/smoke/).
Work files (checkpoints, models, run logs): --work-dir (build-ssru/).
Exit: 0 ok, 1 a run or a check failed (the report is still written), 2 setup error.
"""
import argparse
import datetime
import json
import os
import shutil
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import bench_common as bc  # noqa: E402
from bench_common import PY, SetupError, fmt, run, sha256  # noqa: E402

REF = os.path.join(ROOT, "tests", "reference")
MAKE_SSRU = os.path.join(REF, "make_ssru_checkpoint.py")
MAKE_RANDOM = os.path.join(REF, "make_random_checkpoint.py")
EXPORT = os.path.join(REF, "marian_export.py")
MODELS = {
    # name: (label, generator, decoder kind, shared vocabulary size)
    "tiny32k-ssru": ("SSRU (W, Wf), 32k ids", "ssru", "ssru", 32000),
    "tiny32k": ("self-attention (q, k, v, o), 32k ids: run_shapes.py tiny32k", "random", "self_attention", 32000),
    "tiny32k-sa": ("self-attention, 32k ids, SSRU generator + Marian path (control)", "ssru", "self_attention",
                   32000),
    "tiny8k-ssru": ("SSRU (W, Wf), 8k ids", "ssru", "ssru", 8001),
    "tiny8k-sa": ("self-attention (q, k, v, o), 8k ids", "ssru", "self_attention", 8001),
}
HEADLINE = ("tiny32k-ssru", "tiny32k")
# (model, against): compared per repetition (the two runs minutes apart at most), then the median
PAIRS = [HEADLINE, ("tiny32k-sa", "tiny32k"), ("tiny8k-ssru", "tiny8k-sa")]
METRICS = ("tokens_per_s", "tokens_per_cpu_s", "step_ms", "step_cpu_ms")


def lengths_arg(s):
    """'64:100,256:30': --max-length L over the first N sentences, per pair."""
    try:
        out = [tuple(int(x) for x in part.split(":")) for part in s.split(",")]
        if not out or any(len(p) != 2 or p[0] < 2 or p[1] < 1 for p in out):
            raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected L:N,... with L >= 2, N >= 1, got '{s}'")
    return out


def parse_args(argv):
    ap = argparse.ArgumentParser(description="SSRU vs self-attention decoder layers, tiny student shape",
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"),
                    help="this build: bench/e2e_bench and mtlite")
    ap.add_argument("--models", type=bc.csv_names(list(MODELS)), default=list(MODELS))
    ap.add_argument("--lengths", type=lengths_arg, default=lengths_arg("64:100,256:30"),
                    help="L:N,...: --max-length L (decoded tokens incl. the forced </s>) over the first N lines")
    ap.add_argument("--beam", type=bc.csv_ints, default=[1, 4])
    ap.add_argument("--input", default=os.path.join(ROOT, "tests", "data", "dev", "multi30k.val.en"))
    ap.add_argument("--reps", type=int, default=9, help="repetitions (>= 3; this machine class is noisy)")
    ap.add_argument("--seed", type=int, default=1, help="checkpoint seed")
    ap.add_argument("--cpu", type=int, default=None,
                    help="pin the runs to this CPU (default: the first this process may use; -1: no pinning)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per run")
    ap.add_argument("--work-dir", default=os.path.join(ROOT, "build-ssru"))
    ap.add_argument("--out-dir", default=None, help="default bench/results/ssru (--smoke: WORK_DIR/smoke)")
    ap.add_argument("--smoke", action="store_true", help="8 sentences per length, 1 repetition")
    ap.add_argument("--allow-stale", action="store_true", help="run a build older than the sources")
    a = ap.parse_args(argv)
    for h in HEADLINE:
        if h not in a.models:
            ap.error(f"--models must include the headline pair {','.join(HEADLINE)}")
    if a.smoke:
        a.lengths = [(L, min(n, 8)) for L, n in a.lengths]
        a.reps = 1
    if a.reps < 1:
        ap.error("--reps >= 1")
    if a.out_dir is None:
        a.out_dir = os.path.join(a.work_dir, "smoke") if a.smoke else os.path.join(HERE, "results", "ssru")
    if a.cpu is None:
        a.cpu = min(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else -1
    a.pin_cpu = a.cpu if a.cpu >= 0 else None
    return a


def log(msg):
    print(f"ssru_bench.py: {msg}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- models


def model_commands(a, name, d, mtlite):
    """The commands that make model `name` in directory d, and the model file."""
    _, gen, dec, vocab = MODELS[name]
    out = os.path.join(d, "model.int8.mtlite")
    if gen == "random":
        ckpt = os.path.join(d, "hf")
        return [[PY, MAKE_RANDOM, ckpt, "--preset", "tiny32k", "--seed", str(a.seed), "--fixed-length"],
                [mtlite, "convert", ckpt, "-o", out, "--quantize", "int8"]], out
    hf, marian = os.path.join(d, "hf"), os.path.join(d, "marian")
    make = [PY, MAKE_SSRU, hf, "--shape", "tiny", "--decoder", dec, "--seed", str(a.seed), "--fixed-length"]
    if vocab != 8001:
        make += ["--vocab-size", str(vocab)]
        return [make, [PY, EXPORT, hf, marian, "--format", "bin", "--vocab", "yml"],
                [mtlite, "convert", os.path.join(marian, "model.bin"), "--vocab", os.path.join(hf, "source.spm"),
                 "--vocab", os.path.join(marian, "vocab.yml"), "-o", out, "--quantize", "int8"]], out
    return [make, [PY, EXPORT, hf, marian, "--format", "bin", "--vocab", "spm"],
            [mtlite, "convert", os.path.join(marian, "model.bin"), "--vocab", os.path.join(marian, "vocab.spm"),
             "-o", out, "--quantize", "int8"]], out


def ensure_model(a, name, mtlite):
    """Makes the model unless the work dir holds one made by the same commands, generators and
    converter."""
    d = os.path.join(a.work_dir, name)
    cmds, out = model_commands(a, name, d, mtlite)
    spec = {"commands": cmds, "generators": [sha256(p) for p in (MAKE_SSRU, MAKE_RANDOM, EXPORT, mtlite)]}
    spec_path = os.path.join(d, "bench_spec.json")
    try:
        with open(spec_path) as f:
            if json.load(f) == spec and os.path.exists(out):
                return out, cmds
    except (OSError, ValueError):
        pass
    log(f"making {name}")
    shutil.rmtree(d, ignore_errors=True)
    for c in cmds:
        run(c, f"{name}: {os.path.basename(c[1] if c[0] == PY else c[0])}")
    with open(spec_path, "w") as f:
        json.dump(spec, f)
    return out, cmds


def static_info(a, exes, model, beams):
    """Decoder-step weight bytes (e2e_bench --roofline) and the arena per (L, beam)."""
    rf = json.loads(run([exes["e2e_bench"], "-m", model, "--roofline", "--bw-mib", "16", "--bw-reps", "1"],
                        "e2e_bench --roofline"))
    info = {"step_bytes": rf["decoder_step_bytes"], "target_vocab": rf["target_vocab"], "kernels": rf["kernels"],
            "file_bytes": os.path.getsize(model), "arena": {}}
    for L, _ in a.lengths:
        for k in beams:
            lim = f"1,128,{L},{k}"
            js = json.loads(run([exes["mtlite"], "info", model, "--json", "--limits", lim], "mtlite info --limits"))
            bufs = {b["name"]: b["bytes"] for b in js["arena_plan"]["buffers"]}
            info["arena"][lim] = {"total": js["arena_bytes"], "peak_phase": js["budget"].get("arena_peak_phase"),
                                  "kv_cache": bufs.get("decoder.k_cache", 0) + bufs.get("decoder.v_cache", 0),
                                  "ssru_state": bufs.get("decoder.ssru_state", 0)}
    return info


# ----------------------------------------------------------------------------- runs


def run_one(a, exes, model, name, src, n, L, beam, rep, of_length):
    """One e2e_bench process: --max-length L over n sentences (L = 1: the one-step run of
    of_length's configuration)."""
    tag = f"{name}.len{of_length}.k{beam}.r{rep}" + (".step1" if L == 1 else "")
    out_txt, out_ids = (os.path.join(a.runs_dir, tag + ext) for ext in (".txt", ".ids"))
    cmd = [exes["e2e_bench"], "-m", model, "--input", src, "--output", out_txt, "--ids-output", out_ids,
           "--batch", "1", "--threads", "1", "--beam", str(beam), "--max-length", str(L), "--repeat", "1"]
    load1 = bc.load1()
    rc, stdout, ru, wall = bc.run_child(cmd, bc.child_env(1), a.timeout, os.path.join(a.runs_dir, tag), a.pin_cpu)
    rec = {"model": name, "length": of_length, "max_length": L, "beam": beam, "rep": rep, "sentences": n,
           "load1": load1,
           "wall_s": round(wall, 4), "cpu_s": round(ru.ru_utime + ru.ru_stime, 4), "rc": rc}
    try:
        js = json.loads(stdout)
        rec.update({"total_s": js["total_s"], "tokens_per_s": js["target_tokens_per_s"],
                    "timed_cpu_s": js["cpu_s"], "tokens_per_cpu_s": js["target_tokens_per_cpu_s"],
                    "target_tokens": js["target_tokens"], "arena_bytes_run": js["arena_bytes"]})
    except (ValueError, KeyError):
        rec["error"] = f"e2e_bench exit {rc}: {open(os.path.join(a.runs_dir, tag + '.err')).read()[-400:]}"
        return rec
    lines = bc.read_lines(out_ids)
    bad = sum(1 for line in lines if len(line.split()) != L - 1)
    if len(lines) != n or bad or js["target_tokens"] != n * L:
        rec["error"] = (f"{len(lines)} output lines (want {n}), {bad} not of {L - 1} ids + </s>, "
                        f"target_tokens {js['target_tokens']} (want {n * L})")
    return rec


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def per_rep(a, records, name, L, n, k):
    """{rep: {metric: value}} of one configuration: tokens/s, tokens / CPU s, and the decoder
    step: (L run - 1 run) of e2e_bench's timed wall and CPU time over sentences x (L - 1) steps."""
    mine = [r for r in records if (r["model"], r["length"], r["beam"]) == (name, L, k) and "error" not in r]
    one = {r["rep"]: r for r in mine if r["max_length"] == 1}
    out = {}
    for r in mine:
        if r["max_length"] != L:
            continue
        v = {"tokens_per_s": r["tokens_per_s"], "tokens_per_cpu_s": r["tokens_per_cpu_s"], "wall_s": r["wall_s"],
             "cpu_s": r["cpu_s"], "load1": r["load1"]}
        o = one.get(r["rep"])
        if o:
            v["step_ms"] = (r["total_s"] - o["total_s"]) / (n * (L - 1)) * 1e3
            v["step_cpu_ms"] = (r["timed_cpu_s"] - o["timed_cpu_s"]) / (n * (L - 1)) * 1e3
        out[r["rep"]] = v
    return out


def summarize(a, records, beams):
    """Per (model, L, beam): the medians over the repetitions; per pair of PAIRS: the medians
    (and ranges) of the per-repetition ratios."""
    out, reps = {}, {}
    for name in a.models:
        for L, n in a.lengths:
            for k in beams:
                pr = reps[(name, L, k)] = per_rep(a, records, name, L, n, k)
                s = {"model": name, "length": L, "sentences": n, "beam": k, "runs": len(pr)}
                for key in METRICS + ("wall_s", "cpu_s", "load1"):
                    s[key] = med([v.get(key) for v in pr.values()])
                s["runs_by_rep"] = pr
                out[f"{name}|{L}|{k}"] = s
    ratios = {}
    for m, b in PAIRS:
        if m not in a.models or b not in a.models:
            continue
        for L, n in a.lengths:
            for k in beams:
                pm, pb = reps[(m, L, k)], reps[(b, L, k)]
                r = {}
                for key in METRICS:
                    xs = [pm[i][key] / pb[i][key] for i in pm if i in pb and pm[i].get(key) and pb[i].get(key)]
                    r[key] = {"median": med(xs), "min": min(xs) if xs else None, "max": max(xs) if xs else None}
                ratios[f"{m}/{b}|{L}|{k}"] = r
    return {"configs": out, "ratios": ratios}


def pct(new, old):
    return None if new is None or old is None or not old else (new / old - 1) * 100


def search_name(k):
    return "greedy" if k == 1 else f"beam {k}"


def write_report(a, info, summary, records, failures, started, elapsed, model_cmds):
    os.makedirs(a.out_dir, exist_ok=True)
    beams = a.beam
    ssru, base = HEADLINE
    loads = [r["load1"] for r in records]
    load = [min(loads), med(loads), max(loads)] if loads else [None] * 3
    result = {"date": started, "git": bc.git_rev(), "cpu": bc.cpu_name(), "kernels": info[ssru]["kernels"],
              "cores": os.cpu_count(), "pinned_cpu": a.pin_cpu, "reps": a.reps, "lengths": a.lengths,
              "beams": beams, "input": bc.repo_relative(a.input), "elapsed_s": round(elapsed),
              "load1_min_median_max": load,
              "models": {m: {"label": MODELS[m][0], **info[m], "commands": bc.repo_relative(model_cmds[m])}
                         for m in a.models},
              "summary": summary, "runs": records, "failures": failures}
    with open(os.path.join(a.out_dir, "ssru.json"), "w") as f:
        json.dump(result, f, indent=1, default=str)

    def row(m, L, k):
        return summary["configs"].get(f"{m}|{L}|{k}", {})

    def ratio_pct(m, b, L, k, key):
        r = summary["ratios"].get(f"{m}/{b}|{L}|{k}", {}).get(key, {})
        if r.get("median") is None:
            return "–"
        return f"{(r['median'] - 1) * 100:+.1f} % ({(r['min'] - 1) * 100:+.0f}…{(r['max'] - 1) * 100:+.0f})"

    Ls = [L for L, _ in a.lengths]
    lims = [f"1,128,{Ls[0]},{min(beams)}", f"1,128,{Ls[-1]},{max(beams)}"]
    md = [f"# SSRU vs self-attention decoder layers, tiny student shape ({started})", "",
          f"git {result['git']}, {result['cpu']}, {result['cores']} cores, kernels `{result['kernels']}`; "
          f"batch 1, 1 thread{f' (pinned to CPU {a.pin_cpu})' if a.pin_cpu is not None else ''}, int8; "
          f"medians of {a.reps} interleaved repetitions; 1-minute load average before the runs "
          f"{fmt(load[0], 2)} / {fmt(load[1], 2)} / {fmt(load[2], 2)} (min / median / max); "
          f"{result['elapsed_s']} s in all.", "",
          "| model | bytes / step | vs tiny32k | " + " | ".join(f"arena `{x}`" for x in lims) + " |",
          "|---|---:|---:|" + "---:|" * len(lims)]
    bb = info[base]["step_bytes"]["total"]
    for m in a.models:
        b = info[m]["step_bytes"]["total"]
        md.append(f"| {MODELS[m][0]} | {b:,} | {fmt(pct(b, bb), 1, ' %')} | " +
                  " | ".join(f"{info[m]['arena'][x]['total']:,}" for x in lims) + " |")
    md += ["", "Speed: tokens/s from e2e_bench's timed calls (wall), tokens per CPU second of the same calls "
           "(the work without the waiting for a core); the decoder step from the run at --max-length L minus "
           "the run at --max-length 1, per further step; the e2e_bench process's wall and CPU time (load, "
           "warm-up call included) and the load average before it:", "",
           "| model | L | search | tokens/s | tokens / CPU s | step ms | step CPU ms | process wall s | "
           "process CPU s | load1 |", "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for L in Ls:
        for k in beams:
            for m in a.models:
                r = row(m, L, k)
                md.append(f"| {m} | {L} | {search_name(k)} | {fmt(r.get('tokens_per_s'))} | "
                          f"{fmt(r.get('tokens_per_cpu_s'))} | {fmt(r.get('step_ms'), 3)} | "
                          f"{fmt(r.get('step_cpu_ms'), 3)} | {fmt(r.get('wall_s'), 2)} | {fmt(r.get('cpu_s'), 2)} | "
                          f"{fmt(r.get('load1'), 2)} |")
    md += ["", "Paired: per repetition the ratio of the two models' runs (minutes apart at most), median "
           "(min…max over the repetitions):", "",
           "| model / against | L | search | bytes / step | tokens/s | tokens / CPU s | step | step CPU |",
           "|---|---:|---|---:|---:|---:|---:|---:|"]
    for m, b in PAIRS:
        if m not in a.models or b not in a.models:
            continue
        sb, bb2 = info[m]["step_bytes"]["total"], info[b]["step_bytes"]["total"]
        for L in Ls:
            for k in beams:
                md.append(f"| {m} / {b} | {L} | {search_name(k)} | {pct(sb, bb2):+.1f} % | " +
                          " | ".join(ratio_pct(m, b, L, k, key) for key in METRICS) + " |")
    sb = info[ssru]["step_bytes"]["total"]
    md += ["", f"**{ssru} against {base}**: bytes / step {pct(sb, bb):+.1f} % ({sb - bb:+,} B)."]
    for lim in lims:
        s, b = info[ssru]["arena"][lim], info[base]["arena"][lim]
        md.append(f"- arena `{lim}`: {s['total']:,} B against {b['total']:,} B ({pct(s['total'], b['total']):+.0f} %; "
                  f"SSRU state {s['ssru_state']:,} B, K/V cache {b['kv_cache']:,} B)")
    md += ["", "Bytes / step: the int8 weights a batch-1 decoder step reads (e2e_bench --roofline), by part:", "",
           "| model | self-attn q,k,v,o | SSRU W,Wf | cross q,o | FFN | biases, norms | output projection |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for m in a.models:
        b = info[m]["step_bytes"]
        md.append(f"| {m} | {b['self_attn_qkvo']:,} | {b.get('ssru_w_wf', 0):,} | {b['cross_attn_q_o']:,} | "
                  f"{b['ffn']:,} | {b['biases_norms']:,} | {b['output_projection']:,} |")
    md += ["", "Models:", ""]
    for m in a.models:
        md.append(f"- `{m}`: " + "; ".join("`" + " ".join(bc.repo_relative(c)) + "`" for c in model_cmds[m]))
    if failures:
        md += [""] + bc.md_failures(failures)
    with open(os.path.join(a.out_dir, "ssru.md"), "w") as f:
        f.write("\n".join(md) + "\n")


def main(argv=None):
    a = parse_args(argv)
    exes = {"e2e_bench": os.path.join(a.build_dir, "bench", "e2e_bench"), "mtlite": os.path.join(a.build_dir, "mtlite")}
    try:
        for p in exes.values():
            if not os.path.exists(p):
                raise SetupError(f"missing {p} (build the e2e_bench and mtlite_cli targets)")
        mt, newest = bc.newest_source()
        if mt > os.path.getmtime(exes["e2e_bench"]) and not a.allow_stale:
            raise SetupError(f"stale build: {os.path.relpath(newest, ROOT)} is newer than {exes['e2e_bench']} "
                             "(rebuild the e2e_bench and mtlite_cli targets, or --allow-stale)")
        a.runs_dir = os.path.join(a.work_dir, "runs")
        shutil.rmtree(a.runs_dir, ignore_errors=True)
        os.makedirs(a.runs_dir)
        models, info, cmds = {}, {}, {}
        for m in a.models:
            models[m], cmds[m] = ensure_model(a, m, exes["mtlite"])
            info[m] = static_info(a, exes, models[m], a.beam)
        lines = bc.read_lines(a.input)
        srcs = {}
        for L, n in a.lengths:
            if len(lines) < n:
                raise SetupError(f"{a.input} has {len(lines)} lines, --lengths wants {n}")
            srcs[n] = os.path.join(a.runs_dir, f"input.{n}.txt")
            with open(srcs[n], "w", encoding="utf-8") as f:
                f.write("\n".join(lines[:n]) + "\n")
    except SetupError as e:
        log(str(e))
        return 2
    started = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    t0 = time.time()
    records, failures = [], []
    total = a.reps * len(a.lengths) * len(a.beam) * len(a.models) * 2
    done = 0
    for rep in range(a.reps):
        order = a.models[rep % len(a.models):] + a.models[:rep % len(a.models)]
        for L, n in a.lengths:
            for k in a.beam:
                for m in order:
                    for length in (L, 1):
                        r = run_one(a, exes, models[m], m, srcs[n], n, length, k, rep, L)
                        records.append(r)
                        done += 1
                        if "error" in r:
                            failures.append(f"{m} L{length} beam {k} rep {rep}: {r['error']}")
                        elif length == L:
                            log(f"[{done}/{total}] rep {rep} {m} L{L} beam {k}: {r['tokens_per_s']:.0f} tok/s, "
                                f"wall {r['wall_s']:.2f} s, cpu {r['cpu_s']:.2f} s, load {r['load1']}")
    summary = summarize(a, records, a.beam)
    write_report(a, info, summary, records, failures, started, time.time() - t0, cmds)
    return bc.finish(os.path.join(a.out_dir, "ssru.md"), log,
                     f"{len(records)} runs in {time.time() - t0:.0f} s -> {bc.repo_relative(a.out_dir)}", failures)


if __name__ == "__main__":
    sys.exit(main())
