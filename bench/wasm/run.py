#!/usr/bin/python3
"""mtlite in WebAssembly against Bergamot in WebAssembly and mtlite native, one script run, interleaved.

Engines (every one in its own process, one thread):
  mtlite-wasm         web/dist/mtlite.wasm (kernel table wasm-simd128) in node: bench/wasm_bench.mjs
  mtlite-native-avx2  build/bench/e2e_bench with MTLITE_KERNELS=avx2
  mtlite-native       build/bench/e2e_bench with the CPU's default table
  bergamot-int8       npm @browsermt/bergamot-translator (the engine of Firefox Translations) in node,
                      the package's portable integer GEMM: bench/wasm/bergamot_bench.mjs, the demo
                      model exported to Marian's binary format (float32) by tests/reference/marian_export.py,
                      quantized by Bergamot at load (gemm-precision int8shiftAll)
  bergamot-fp32       the same with gemm-precision float32 (by default in the first repetition only:
                      --once; it gives the float32 agreement)
mtlite runs build/models/demo.int8.mtlite (the same checkpoint, models/marian-en-de-tiny).

One run loops repetitions -> beam (1, 4) -> engines, the engine order rotating from one repetition to
the next. Batch 1 (one sentence per translate call). Every process translates the input --passes
times (after a one-sentence warm-up) and the last pass is timed. Reported per engine and beam: the
median over the repetitions of sentences/s and target tokens/s (translate calls only),
the load (module instantiation + model + translator; e2e_bench maps the file), the peak RSS of the
process (wait4 ru_maxrss) and the 1-minute load average before each run.

Target tokens: mtlite counts its generated tokens (with </s>); Bergamot does not return them, so every
engine's output is also counted by re-encoding it with the target SentencePiece model + 1 (</s>), and
tokens/s uses that count for all engines (the report gives both counts for mtlite).

Agreement: the share of identical output lines between Bergamot and mtlite (int8 with int8, fp32 with
fp32 via `mtlite translate`). Marian's semantics differ from HF MarianMT's (sinusoid, layer-norm eps,
a zero start vector), which mtlite's model of an HF checkpoint computes. Checks (failing the run):
mtlite WebAssembly and native give identical lines; every run exits 0 with one line per input.

  bench/wasm/run.py [--build-dir build] [--limit 150] [--reps 3] [--engines ...] [--beam 1,4]
Needs: the host build (e2e_bench, mtlite, demo_models), scripts/wasm_build.sh's web/dist/mtlite.wasm,
`npm ci` in tests/reference/bergamot. Writes bench/results/wasm/wasm.{json,md}.
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from bench_common import (PY, ROOT, SetupError, child_env, cpu_name, csv_ints, csv_names, fmt,  # noqa: E402
                          git_dirty_sources, git_rev, load1, raise_interrupt, read_lines, repo_relative, run,
                          run_child, _build_revision)

ENGINES = ["mtlite-wasm", "mtlite-native-avx2", "mtlite-native", "bergamot-int8", "bergamot-fp32"]
SETS = ["multi30k.val", "tatoeba.dev"]
DEMO = os.path.join(ROOT, "models", "marian-en-de-tiny")


def parse_args(argv):
    ap = argparse.ArgumentParser(description="mtlite WebAssembly vs Bergamot WebAssembly vs mtlite native",
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--limit", type=int, default=150, help="first N sentences of each dev set")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--beam", type=csv_ints, default=[1, 4])
    ap.add_argument("--engines", type=csv_names(ENGINES), default=ENGINES)
    ap.add_argument("--passes", type=int, default=2,
                    help="passes over the input per process; the last one is timed (the ones before warm up "
                         "the engine: V8 compiles a module's hot functions again, optimized, while it runs)")
    ap.add_argument("--once", type=csv_names(ENGINES), default=["bergamot-fp32"],
                    help="engines run in the first repetition only (their figures are one run)")
    ap.add_argument("--convert-cli", default=None,
                    help="the mtlite that converts the Marian checkpoint into Marian-semantics models (default: "
                         "this build's; skipped when its convert has no --semantics)")
    ap.add_argument("--reuse", default=None,
                    help="a previous run's wasm.json: its timings and the translations it left in the build "
                         "directory are reported again (agreement recomputed), nothing is timed")
    ap.add_argument("--out-dir", default=os.path.join(ROOT, "bench", "results", "wasm"))
    ap.add_argument("--timeout", type=float, default=1800)
    return ap.parse_args(argv)


def engine_cmd(a, engine, model_dir, src, out, beam):
    """(command, environment) of one run."""
    env = child_env(1)
    if engine == "mtlite-wasm":
        return ["node", os.path.join(ROOT, "bench", "wasm_bench.mjs"), "-m", a.int8, "--input", src, "--beam", str(beam),
                "--repeat", str(a.passes), "--output", out], env
    if engine.startswith("mtlite-native"):
        if engine == "mtlite-native-avx2":
            env["MTLITE_KERNELS"] = "avx2"
        return [os.path.join(a.build_dir, "bench", "e2e_bench"), "-m", a.int8, "--input", src, "--output", out,
                "--beam", str(beam), "--repeat", str(a.passes)], env
    precision = "int8shiftAll" if engine == "bergamot-int8" else "float32"
    return ["node", os.path.join(HERE, "bergamot_bench.mjs"), "--model", os.path.join(model_dir, "model.bin"),
            "--vocab", os.path.join(model_dir, "vocab.spm"), "--input", src, "--beam", str(beam), "--precision",
            precision, "--repeat", str(a.passes), "--output", out], env


def spm_counter():
    import sentencepiece
    sp = sentencepiece.SentencePieceProcessor(model_file=os.path.join(DEMO, "target.spm"))
    return lambda lines: sum(len(sp.encode(l)) + 1 for l in lines if l.strip())


def same_share(a, b):
    n = min(len(a), len(b))
    return sum(x.strip() == y.strip() for x, y in zip(a, b)) / n if n else None


def translate(cli, model, src, beam):
    """`mtlite translate`'s output lines."""
    with open(src, encoding="utf-8") as fi:
        r = subprocess.run([cli, "translate", "-q", "-m", model, "--beam", str(beam)], stdin=fi,
                           capture_output=True, text=True, check=True)
    return r.stdout.split("\n")[:-1]


def convert_marian(a, cli, model_dir, work):
    """{int8, fp32: .mtlite} of the Marian checkpoint with Marian's semantics; {} where the converter
    cannot read Marian checkpoints."""
    conv = a.convert_cli or cli
    if "--semantics" not in subprocess.run([conv, "convert", "--help"], capture_output=True, text=True).stdout:
        return {}
    out = {}
    for q in ("int8", "fp32"):
        out[q] = os.path.join(work, f"marian.{q}.mtlite")
        run([conv, "convert", os.path.join(model_dir, "model.bin"), "--vocab", os.path.join(model_dir, "vocab.spm"),
             "-o", out[q], "--quantize", q, "--semantics", "marian", "--quiet"], "mtlite convert (Marian checkpoint)")
    return out


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def summarize(runs, count_tokens, n):
    """Per (engine, beam): medians over the repetitions."""
    rows = {}
    for r in runs:
        rows.setdefault((r["engine"], r["beam"]), []).append(r)
    out = []
    for (engine, beam), rs in sorted(rows.items(), key=lambda kv: (kv[0][1], ENGINES.index(kv[0][0]))):
        ok = [r for r in rs if r["ok"]]
        if not ok:
            out.append({"engine": engine, "beam": beam, "ok": False})
            continue
        j = [r["json"] for r in ok]
        total = median([x["total_s_runs"][-1] for x in j])
        spm_tokens = count_tokens(read_lines(ok[-1]["output"]))
        own = j[-1].get("target_tokens")
        native = engine.startswith("mtlite-native")
        # node: process CPU time over the timed pass; native: the whole process's over the passes (its
        # load and warm-up call are a few ms)
        cpu = median([r["child_cpu_s"] / len(r["json"]["total_s_runs"]) if native else r["json"]["cpu_s_runs"][-1]
                      for r in ok])
        load = [x["load_s"] + x["create_s"] if native else x["module_s"] + x["model_s"] + x.get("create_s", 0) for x in j]
        out.append({
            "engine": engine, "beam": beam, "ok": True, "reps": len(ok), "sentences": n,
            "kernel_table": j[-1].get("kernels") or j[-1].get("kernel_table") or j[-1].get("precision"),
            "total_s": total, "total_s_runs": [x["total_s_runs"][-1] for x in j],
            "sentences_per_s": n / total, "tokens_spm": spm_tokens, "tokens_per_s": spm_tokens / total,
            "tokens_own": own, "own_tokens_per_s": own / total if own else None,
            "cpu_s": cpu, "sentences_per_cpu_s": n / cpu if cpu else None,
            "load_s": median(load), "peak_rss_kb": median([r["child_maxrss_kb"] for r in ok]),
            "wasm_memory_bytes": j[-1].get("wasm_memory_bytes"), "load1_runs": [r["load1"] for r in ok],
        })
    return out


def ratio(rows, eng_a, eng_b, beam, key="sentences_per_s"):
    get = {(r["engine"], r["beam"]): r for r in rows if r["ok"]}
    x, y = get.get((eng_a, beam)), get.get((eng_b, beam))
    return x[key] / y[key] if x and y and x.get(key) and y.get(key) else None


def write_markdown(meta, rows, agree, ratios, failures, path):
    L = ["# mtlite WebAssembly vs Bergamot WebAssembly vs mtlite native\n",
         f"Generated by `bench/wasm/run.py` (git {meta['git']}). {meta['cpu']}, {meta['cpus']} CPUs, "
         f"node {meta['node']}; every engine one thread, batch 1, {meta['sentences']} sentences "
         f"({', '.join(meta['sets'])}, the first {meta['limit']} of each), {meta['reps']} repetitions "
         "interleaved (engine order rotating); "
         f"each process translates the input {meta['passes']} times after a one-sentence warm-up and the last pass is timed. Demo model (models/marian-en-de-tiny): mtlite "
         "`demo.int8.mtlite`; Bergamot the same checkpoint in Marian's binary format (float32), "
         "quantized at load (`gemm-precision: int8shiftAll`, the package's portable GEMM).\n",
         f"Load average (1 min): {meta['load1_start']} at start, {meta['load1_end']} at the end; "
         f"`uptime` at start: `{meta['uptime_start']}`. "
         + ("**A loaded machine** (other jobs running): absolute figures are low and noisy; the ratios come "
            "from interleaved runs.\n" if meta["loaded"] else "\n"),
         "| engine | beam | sentences/s | tokens/s | CPU s (translate) | load s | peak RSS MB | load avg |",
         "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if not r["ok"]:
            L.append(f"| {r['engine']} | {r['beam']} | FAILED | | | | | |")
            continue
        L.append(f"| {r['engine']} ({r['kernel_table']}) | {r['beam']} | {fmt(r['sentences_per_s'], 1)} | "
                 f"{fmt(r['tokens_per_s'], 0)} | {fmt(r['cpu_s'], 2)} | {fmt(r['load_s'], 3)} | "
                 f"{fmt(r['peak_rss_kb'] / 1024, 0)} | {', '.join(str(x) for x in r['load1_runs'])} |")
    L += ["", "tokens/s: output re-encoded with the target SentencePiece model, + 1 (`</s>`) per sentence, "
          "for every engine (mtlite's own count differs by "
          f"{fmt(meta.get('spm_vs_own_pct'), 1, ' %')}). CPU s: process CPU time over the timed pass (node; "
          "V8's compiler and GC threads included), the whole process's per pass for e2e_bench; "
          "on a loaded machine CPU time is the steadier measure. Load: module instantiation + model + translator (Bergamot: its int8 quantization "
          "included; native: the file is mapped). Peak RSS: the whole process (node: V8 included).", "",
          "## Ratios (sentences/s, medians)", "", "| | beam 1 | beam 4 | target |", "|---|---|---|---|"]
    for name, (a, b, target) in ratios["defs"].items():
        v = ratios["values"][name]
        L.append(f"| {name} | {fmt(v.get('1'), 2, 'x')} | {fmt(v.get('4'), 2, 'x')} | {target} |")
    L += ["", "## Agreement (identical output lines)", "", "| | beam 1 | beam 4 |", "|---|---|---|"]
    for name, v in agree.items():
        L.append(f"| {name} | {fmt(v.get('1') and 100 * v['1'], 1, ' %')} | {fmt(v.get('4') and 100 * v['4'], 1, ' %')} |")
    L += ["", meta["marian_semantics_note"], ""]
    if failures:
        L += ["## FAILURES", ""] + [f"- {f}" for f in failures] + [""]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(L))


def measure(a, work, model_dir, src, n):
    """Runs every engine, interleaved: (meta, runs, failures)."""
    uptime = run(["uptime"], "uptime").strip()
    meta = {"git": git_rev(), "dirty_sources": git_dirty_sources(), "cpu": cpu_name(), "cpus": os.cpu_count(),
            "node": run(["node", "--version"], "node").strip(), "sets": SETS, "limit": a.limit, "sentences": n,
            "reps": a.reps, "passes": a.passes, "engines": a.engines, "once": a.once, "beams": a.beam, "load1_start": load1(), "uptime_start": uptime,
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    print(f"wasm bench: {n} sentences, {a.reps} reps, engines {a.engines}; {uptime}", file=sys.stderr)
    runs, failures = [], []
    t0 = time.time()
    for rep in range(a.reps):
        for beam in a.beam:
            k = rep % len(a.engines)
            for engine in a.engines[k:] + a.engines[:k]:
                if rep > 0 and engine in a.once:
                    continue
                out = os.path.join(work, f"{engine}.beam{beam}.rep{rep}.de")
                cmd, env = engine_cmd(a, engine, model_dir, src, out, beam)
                l1 = load1()
                code, stdout, ru, wall = run_child(cmd, env, a.timeout, os.path.join(work, f"{engine}.beam{beam}.rep{rep}"))
                r = {"engine": engine, "beam": beam, "rep": rep, "load1": l1, "wall_s": wall, "exit": code,
                     "child_maxrss_kb": ru.ru_maxrss,
                     "child_cpu_s": ru.ru_utime + ru.ru_stime, "output": out, "ok": False}
                try:
                    r["json"] = json.loads(stdout)
                    r["ok"] = code == 0 and len(read_lines(out)) == n
                except (ValueError, OSError):
                    pass
                if not r["ok"]:
                    failures.append(f"{engine} beam {beam} rep {rep}: exit {code}, see {r['output']}")
                runs.append(r)
                print(f"  rep {rep} beam {beam} {engine}: {wall:.1f} s wall, load {l1}", file=sys.stderr)
    meta["load1_end"] = load1()
    meta["uptime_end"] = run(["uptime"], "uptime").strip()
    meta["elapsed_s"] = round(time.time() - t0, 1)
    meta["loaded"] = max([meta["load1_start"], meta["load1_end"]] + [r["load1"] for r in runs]) > 1.5

    return meta, runs, failures


def main(argv):
    a = parse_args(argv)
    signal.signal(signal.SIGTERM, raise_interrupt)
    a.build_dir = os.path.abspath(a.build_dir)
    a.int8 = os.path.join(a.build_dir, "models", "demo.int8.mtlite")
    fp32 = os.path.join(a.build_dir, "models", "demo.fp32.mtlite")
    cli = os.path.join(a.build_dir, "mtlite")
    need = [a.int8, fp32, cli, os.path.join(a.build_dir, "bench", "e2e_bench"),
            *([os.path.join(ROOT, "web", "dist", "mtlite.wasm")] if "mtlite-wasm" in a.engines else []),
            os.path.join(ROOT, "tests", "reference", "bergamot", "node_modules", "@browsermt", "bergamot-translator")]
    missing = [p for p in need if not os.path.exists(p)]
    if missing:
        raise SetupError("missing (host build, scripts/wasm_build.sh, npm ci in tests/reference/bergamot): " +
                         ", ".join(missing))
    work = os.path.join(a.build_dir, "bench-wasm")
    model_dir = os.path.join(work, "marian")
    os.makedirs(work, exist_ok=True)
    run([PY, os.path.join(ROOT, "tests", "reference", "marian_export.py"), DEMO, model_dir, "--format", "bin"],
        "marian_export.py")
    src = os.path.join(work, "input.en")
    lines = []
    for s in SETS:
        lines += read_lines(os.path.join(ROOT, "tests", "data", "dev", s + ".en"))[:a.limit]
    with open(src, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    n = len(lines)
    if a.reuse:
        with open(a.reuse, encoding="utf-8") as f:
            old = json.load(f)
        meta, runs = old["meta"], old["runs"]
        failures = [x for x in old["failures"] if "differs" not in x]
        for r in runs:
            r["output"] = os.path.join(work, f"{r['engine']}.beam{r['beam']}.rep{r['rep']}.de")
        meta["reused"] = True
    else:
        meta, runs, failures = measure(a, work, model_dir, src, n)

    count = spm_counter()
    rows = summarize(runs, count, n)
    own = [(r["tokens_own"], r["tokens_spm"]) for r in rows if r["ok"] and r.get("tokens_own")]
    meta["spm_vs_own_pct"] = 100 * (sum(s for _, s in own) / sum(o for o, _ in own) - 1) if own else None

    def last(engine, beam):
        ok = [r for r in runs if r["engine"] == engine and r["beam"] == beam and r["ok"]]
        return read_lines(ok[-1]["output"]) if ok else None

    agree = {"Bergamot int8shiftAll = mtlite int8 (HF semantics)": {},
             "Bergamot float32 = mtlite fp32 (HF semantics)": {}}
    for beam in a.beam:
        ref_fp32 = translate(cli, fp32, src, beam)
        wasm, b8, b32 = last("mtlite-wasm", beam), last("bergamot-int8", beam), last("bergamot-fp32", beam)
        for native in ("mtlite-native", "mtlite-native-avx2"):
            nat = last(native, beam)
            if wasm and nat and wasm != nat:
                failures.append(f"beam {beam}: mtlite-wasm output differs from {native} "
                                f"({100 * (1 - same_share(wasm, nat)):.1f} % of lines)")
        if b8 and wasm:
            agree["Bergamot int8shiftAll = mtlite int8 (HF semantics)"][str(beam)] = same_share(b8, wasm)
        if b32:
            agree["Bergamot float32 = mtlite fp32 (HF semantics)"][str(beam)] = same_share(b32, ref_fp32)
        if b8 and b32:
            agree.setdefault("Bergamot int8shiftAll = Bergamot float32", {})[str(beam)] = same_share(b8, b32)
    marian_models = convert_marian(a, cli, model_dir, work)
    if marian_models:
        for beam in a.beam:
            b8, b32 = last("bergamot-int8", beam), last("bergamot-fp32", beam)
            for q, berg, name in (("int8", b8, "Bergamot int8shiftAll = mtlite int8 (Marian semantics)"),
                                  ("fp32", b32, "Bergamot float32 = mtlite fp32 (Marian semantics)")):
                if berg:
                    agree.setdefault(name, {})[str(beam)] = same_share(berg, translate(cli, marian_models[q], src, beam))
        conv_rev = _build_revision(os.path.dirname(os.path.abspath(a.convert_cli or cli)))[:7] or "?"
        meta["marian_convert_git"] = conv_rev
        meta["marian_semantics_note"] = (
            "Marian semantics: the exported Marian checkpoint (model.bin, vocab.spm) converted by `mtlite convert "
            f"--semantics marian` (int8 and fp32, converter of git {conv_rev}), translated by this build's "
            "`mtlite translate`.")
    else:
        meta["marian_semantics_note"] = (
            "A Marian-semantics mtlite model (converted from the Marian checkpoint) is not measured: `mtlite convert` "
            "of this revision reads HF checkpoints only (or name one that reads Marian's: --convert-cli).")
    defs = {"mtlite-wasm / bergamot-int8": ("mtlite-wasm", "bergamot-int8", ">= 4x at beam 1"),
            "mtlite-wasm / mtlite-native-avx2": ("mtlite-wasm", "mtlite-native-avx2", ">= 0.4x at beam 1"),
            "mtlite-wasm / mtlite-native": ("mtlite-wasm", "mtlite-native", ""),
            "mtlite-wasm / bergamot-int8 (CPU time)": ("mtlite-wasm", "bergamot-int8", ""),
            "mtlite-wasm / mtlite-native-avx2 (CPU time)": ("mtlite-wasm", "mtlite-native-avx2", "")}
    values = {}
    for name, (x, y, _) in defs.items():
        key = "sentences_per_cpu_s" if "CPU" in name else "sentences_per_s"
        values[name] = {str(b): ratio(rows, x, y, b, key) for b in a.beam}
    ratios = {"defs": defs, "values": values}

    os.makedirs(a.out_dir, exist_ok=True)
    report = {"meta": meta, "rows": rows, "ratios": values, "agreement": agree, "failures": failures,
              "runs": [{k: v for k, v in r.items() if k != "output"} for r in runs]}
    with open(os.path.join(a.out_dir, "wasm.json"), "w", encoding="utf-8") as f:
        json.dump(repo_relative(report), f, indent=1)
    write_markdown(meta, rows, agree, ratios, failures, os.path.join(a.out_dir, "wasm.md"))
    with open(os.path.join(a.out_dir, "wasm.md"), encoding="utf-8") as f:
        print(f.read())
    return 1 if failures else 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except SetupError as e:
        print(f"run.py: {e}", file=sys.stderr)
        sys.exit(2)
