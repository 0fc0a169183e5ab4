#!/usr/bin/python3
"""End-to-end benchmark: mtlite (int8, fp32) against PyTorch eager (fp32, dynamic int8).

One run of this script measures every engine on the same inputs, interleaved: each repetition
loops over the configurations and, inside each configuration, runs every engine once (the engine
order rotates from one repetition to the next), so slow drifts in machine load hit all engines
alike. Each engine configuration runs in its own subprocess (bench/e2e_bench or
bench/torch_marian.py) that loads the model, does one untimed warm-up call, translates every
line and prints a JSON object; its peak RSS is taken from os.wait4's rusage.

Reported per (set, batch, threads, beam, engine): median over repetitions of the translation
time (model load excluded) -> target tokens/s and sentences/s; latency p50/p90 per call
(batch 1 = per sentence; median over repetitions); peak RSS (max over repetitions); model
sizes; corpus BLEU (tests/reference/bleu.py, 13a) against the .de references.
Checks: every run succeeds and is deterministic, repetitions give identical text, mtlite's
batch-16 output equals its batch-1 output, and PyTorch fp32 greedy ids equal mtlite fp32's
(share reported; --smoke fails below --min-parity).

  /usr/bin/python3 bench/run_e2e.py --build-dir build-e2e                  # full (~40 min idle)
  /usr/bin/python3 bench/run_e2e.py --build-dir build-e2e --limit 100 --reps 1
  /usr/bin/python3 bench/run_e2e.py --build-dir build-e2e --smoke          # CI, < 2 min
Outputs: bench/results/e2e.json, e2e.md, e2e.png (--smoke: bench/results/smoke/).
"""
import datetime
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "reference"))
import bleu  # noqa: E402
from bench_common import (child_env, cpu_name, csv_names, finish, fmt, git_dirty_sources, git_rev,  # noqa: E402
                          id_parity, load1, md_failures, newest_source, parser, raise_interrupt, read_lines,
                          repo_relative, run_child, torch_peer_cmd)

ENGINES = {
    # name: (kind, variant, label)
    "mtlite-int8": ("mtlite", "int8", "mtlite int8"),
    "mtlite-fp32": ("mtlite", "fp32", "mtlite fp32"),
    "torch-fp32": ("torch", "fp32", "PyTorch fp32 eager"),
    "torch-int8": ("torch", "int8", "PyTorch dynamic int8"),
}
SETS = ["multi30k.val", "tatoeba.dev"]


def parse_args(argv):
    ap = parser("mtlite vs PyTorch end-to-end benchmark", __doc__,
                "host build with bench/e2e_bench and models/demo.{int8,fp32}.mtlite")
    ap.add_argument("--model-dir", default=os.path.join(ROOT, "models", "marian-en-de-tiny"))
    ap.add_argument("--data-dir", default=os.path.join(ROOT, "tests", "data", "dev"))
    ap.add_argument("--sets", type=csv_names(SETS), default=SETS)
    ap.add_argument("--engines", type=csv_names(list(ENGINES)), default=list(ENGINES))
    ap.add_argument("--max-length", type=int, default=256)
    ap.add_argument("--limit", type=int, default=0, help="first N sentences of each set (0 = all)")
    ap.add_argument("--limit-mt", type=int, default=None,
                    help="first N sentences of each set for the configurations with threads > 1 "
                         "(default: --limit); keeps a full run of the 1-thread configurations affordable")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per engine run")
    ap.add_argument("--out-dir", default=None, help="default bench/results (smoke: bench/results/smoke)")
    ap.add_argument("--min-parity", type=float, default=0.9,
                    help="smallest share of sentences whose PyTorch fp32 greedy ids equal mtlite fp32's "
                         "(checked when both engines ran greedy; failing it fails the run)")
    ap.add_argument("--smoke", action="store_true",
                    help="CI: 8 sentences per set, 1 rep, batch 1 greedy + batch 16 beam 4, 1 thread")
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--no-build", action="store_true",
                    help="do not run `cmake --build <build-dir> --target e2e_bench demo_models` first")
    ap.add_argument("--allow-stale", action="store_true",
                    help="run even if runtime/converter sources are newer than the build's e2e_bench")
    a = ap.parse_args(argv)
    if a.smoke:
        a.limit = a.limit or 8
        a.reps = 1
        a.threads = [1]
        a.configs = [(1, 1, 1), (16, 1, 4)]  # (batch, threads, beam)
    else:
        a.configs = [(b, t, k) for b in a.batch for t in a.threads for k in a.beam]
    if a.limit_mt is None:
        a.limit_mt = a.limit
    if a.reps < 1 or a.limit < 0 or a.limit_mt < 0 or a.max_length < 1:
        ap.error("--reps >= 1, --limit >= 0, --limit-mt >= 0, --max-length >= 1")
    if a.out_dir is None:
        a.out_dir = os.path.join(HERE, "results", "smoke" if a.smoke else "")
    return a


# ----------------------------------------------------------------------------- running


def engine_cmd(a, engine, src, out, ids, batch, threads, beam):
    kind, variant, _ = ENGINES[engine]
    common = ["--input", src, "--output", out, "--ids-output", ids, "--batch", str(batch),
              "--beam", str(beam), "--threads", str(threads), "--max-length", str(a.max_length),
              "--repeat", "1"]
    if kind == "mtlite":
        return [os.path.join(a.build_dir, "bench", "e2e_bench"), "-m",
                os.path.join(a.build_dir, "models", f"demo.{variant}.mtlite")] + common
    return torch_peer_cmd(variant, a.model_dir) + common


def phase_split(a, srcs, runs, work, failures):
    """mtlite, batch 1, 1 thread, greedy: the same sentences with --max-length 1 (encoder, tokenizer
    and one decoder step per sentence) against the full run gives the encoder's share and the
    mean time of one decoder step: step = (T_full - T_len1) / (tokens_full - sentences)."""
    out = []
    if (1, 1, 1) not in a.configs:
        return out
    for e in a.engines:
        if ENGINES[e][0] != "mtlite":
            continue
        for s in a.sets:
            full = [r for r in runs if r["ok"] and r["engine"] == e and r["set"] == s and r["batch"] == 1
                    and r["threads"] == 1 and r["beam"] == 1]
            if not full:
                continue
            tag = f"{s}.{e}.len1"
            cmd = engine_cmd(a, e, srcs[(s, 1)], os.path.join(work, tag + ".txt"), os.path.join(work, tag + ".ids"),
                             1, 1, 1)
            cmd[cmd.index("--max-length") + 1] = "1"
            cmd[cmd.index("--repeat") + 1] = str(max(3, a.reps))
            rc, stdout, _, _ = run_child(cmd, child_env(1), a.timeout, os.path.join(work, tag))
            try:
                js = json.loads(stdout)
            except json.JSONDecodeError:
                failures.append(f"{tag}: exit {rc}")
                continue
            t_full = statistics.median(r["total_s"] for r in full)
            tok, n = full[0]["target_tokens"], full[0]["sentences"]
            t1 = js["total_s"]
            step = (t_full - t1) / max(1, tok - n)
            out.append({"engine": e, "set": s, "sentences": n, "target_tokens": tok, "total_s": t_full,
                        "len1_total_s": t1, "encoder_and_first_step_ms_per_sentence": 1e3 * t1 / n,
                        "decoder_step_us": 1e6 * step, "encoder_share": t1 / t_full,
                        "source_note": "len1 = --max-length 1: tokenizer + encoder + cross K/V + one step"})
    return out


# ----------------------------------------------------------------------------- report


def ratio(x, y):
    return x / y if x and y else None


def aggregate(a, runs, refs, work):
    """runs: list of per-run dicts. Returns result rows keyed (set, batch, threads, beam, engine)."""
    rows = {}
    for r in runs:
        key = (r["set"], r["batch"], r["threads"], r["beam"], r["engine"])
        rows.setdefault(key, []).append(r)
    res = []
    for key, rs in sorted(rows.items()):
        s, b, t, k, e = key
        ok = [r for r in rs if r["ok"]]
        row = {"set": s, "batch": b, "threads": t, "beam": k, "engine": e, "runs": len(rs), "ok_runs": len(ok)}
        if ok:
            med = statistics.median(r["total_s"] for r in ok)
            toks = ok[0]["target_tokens"]
            n = ok[0]["sentences"]
            texts = [tuple(read_lines(r["output"])) for r in ok]
            hyps = list(texts[-1])
            row.update({
                "sentences": n, "target_tokens": toks, "total_s_median": med,
                "total_s_runs": [r["total_s"] for r in ok],
                "target_tokens_per_s": toks / med, "sentences_per_s": n / med,
                "latency_p50_ms": statistics.median(r["latency_p50_ms"] for r in ok),
                "latency_p90_ms": statistics.median(r["latency_p90_ms"] for r in ok),
                "peak_rss_kb": max(r["child_maxrss_kb"] for r in ok),
                "vm_hwm_kb": max(r.get("vm_hwm_kb", 0) for r in ok),
                "model_file_bytes": ok[0].get("model_file_bytes"),
                "state_dict_bytes": ok[0].get("state_dict_bytes"),
                "arena_bytes": ok[0].get("arena_bytes"),
                "bleu": round(bleu.corpus_bleu(hyps, refs[s][:len(hyps)]), 2),
                "identical_across_reps": all(x == texts[0] for x in texts),
                "tokens_identical_across_reps": all(r["target_tokens"] == toks for r in ok),
                "output": ok[-1]["output"], "ids": ok[-1]["ids"],
                "load1_runs": [r["load1"] for r in ok],
                "kernels": ok[0].get("kernels"),
            })
        res.append(row)
    return res


def combine_sets(rows, sets):
    """Adds rows with set '+'.join(sets): summed tokens / summed median times."""
    out = []
    by = {}
    for r in rows:
        if "total_s_median" in r:
            by.setdefault((r["batch"], r["threads"], r["beam"], r["engine"]), []).append(r)
    for (b, t, k, e), rs in sorted(by.items()):
        if len(rs) != len(sets) or len(sets) < 2:
            continue
        tot = sum(r["total_s_median"] for r in rs)
        toks = sum(r["target_tokens"] for r in rs)
        n = sum(r["sentences"] for r in rs)
        out.append({"set": "all", "batch": b, "threads": t, "beam": k, "engine": e,
                    "sentences": n, "target_tokens": toks, "total_s_median": tot,
                    "target_tokens_per_s": toks / tot, "sentences_per_s": n / tot,
                    "peak_rss_kb": max(r["peak_rss_kb"] for r in rs)})
    return out


def checks(a, rows):
    """Cross-engine checks; returns (list of check dicts, list of failure strings)."""
    out, fails = [], []
    idx = {(r["set"], r["batch"], r["threads"], r["beam"], r["engine"]): r for r in rows if "ids" in r}
    for r in rows:
        if r["ok_runs"] != r["runs"]:
            fails.append(f"{r['set']} b{r['batch']} t{r['threads']} beam{r['beam']} {r['engine']}: "
                         f"{r['runs'] - r['ok_runs']} of {r['runs']} runs failed")
        elif not r["identical_across_reps"] or not r["tokens_identical_across_reps"]:
            fails.append(f"{r['set']} b{r['batch']} t{r['threads']} beam{r['beam']} {r['engine']}: "
                         "output differs between repetitions")
    for (s, b, t, k, e), r in sorted(idx.items()):
        if e == "torch-fp32" and (s, b, t, k, "mtlite-fp32") in idx:
            p = id_parity(r["ids"], idx[(s, b, t, k, "mtlite-fp32")]["ids"])
            c = {"check": "torch-fp32 ids == mtlite-fp32 ids", "set": s, "batch": b, "threads": t, "beam": k,
                 "share": p}
            out.append(c)
            if k == 1 and (p is None or p < a.min_parity):
                fails.append(f"parity {s} b{b} t{t} greedy: PyTorch fp32 vs mtlite fp32 identical ids "
                             f"{p} < {a.min_parity}")
        if e == "mtlite-int8" and (s, b, t, k, "mtlite-fp32") in idx:
            out.append({"check": "mtlite-int8 ids == mtlite-fp32 ids", "set": s, "batch": b, "threads": t,
                        "beam": k, "share": id_parity(r["ids"], idx[(s, b, t, k, "mtlite-fp32")]["ids"])})
        if e.startswith("mtlite") and b != 1 and (s, 1, t, k, e) in idx:
            p = id_parity(r["ids"], idx[(s, 1, t, k, e)]["ids"])
            out.append({"check": f"{e} batch {b} ids == batch 1 ids", "set": s, "batch": b, "threads": t,
                        "beam": k, "share": p})
            if p != 1.0:
                fails.append(f"{e} {s} t{t} beam{k}: batch {b} output differs from batch 1 (share {p})")
        if e.startswith("mtlite") and t != 1 and (s, b, 1, k, e) in idx:
            p = id_parity(r["ids"], idx[(s, b, 1, k, e)]["ids"])
            out.append({"check": f"{e} {t} threads ids == 1 thread ids", "set": s, "batch": b, "threads": t,
                        "beam": k, "share": p})
            if p != 1.0:
                fails.append(f"{e} {s} b{b} beam{k}: {t} threads output differs from 1 thread (share {p})")
    return out, fails


def write_markdown(a, meta, rows, combined, chk, path):
    E = a.engines
    lab = {e: ENGINES[e][2] for e in E}
    idx = {(r["set"], r["batch"], r["threads"], r["beam"], r["engine"]): r for r in rows + combined}
    sets = ([s for s in a.sets] + (["all"] if combined else []))
    cfgs = sorted({(b, t, k) for b, t, k in a.configs})
    L = []
    L.append("# mtlite end-to-end benchmark\n")
    L.append(f"Generated by `bench/run_e2e.py` on {meta['date']} — {meta['cpu']}, {meta['cpus']} CPUs; "
             f"git {meta['git']}" + (f" (uncommitted changes: {', '.join(meta['dirty_sources'])})"
                                     if meta.get("dirty_sources") else "") +
             f"; torch {meta.get('torch', '?')}. "
             f"{meta['sentences_note']}; {a.reps} repetition(s), median time; max length {a.max_length}.")
    L.append(f"Load average (1 min): {meta['load1_start']} at start, {meta['load1_end']} at the end "
             f"(per-run values in e2e.json).\n")
    L.append("Tokens/s = generated target tokens (best hypothesis, incl. `</s>`) / translation time "
             "(tokenization + search + detokenization, text in → text out; model load excluded).\n")
    # --- speed
    L.append("## Target tokens/s\n")
    hdr = "| set | sentences | batch | threads | beam | " + " | ".join(lab[e] for e in E)
    have_ratio = "mtlite-int8" in E
    if have_ratio and "torch-fp32" in E:
        hdr += " | int8 ÷ PT fp32"
    if have_ratio and "torch-int8" in E:
        hdr += " | int8 ÷ PT int8"
    if have_ratio and "mtlite-fp32" in E:
        hdr += " | int8 ÷ mtlite fp32"
    L.append(hdr + " |")
    L.append("|" + "---|" * (hdr.count("|")))
    for s in sets:
        for b, t, k in cfgs:
            cells = [idx.get((s, b, t, k, e), {}).get("target_tokens_per_s") for e in E]
            if all(c is None for c in cells):
                continue
            ns = next((idx[(s, b, t, k, e)].get("sentences") for e in E if (s, b, t, k, e) in idx), None)
            line = f"| {s} | {ns} | {b} | {t} | {k} | " + " | ".join(fmt(c) for c in cells)
            mi = idx.get((s, b, t, k, "mtlite-int8"), {}).get("target_tokens_per_s")
            for other in ("torch-fp32", "torch-int8", "mtlite-fp32"):
                if have_ratio and other in E:
                    rr = ratio(mi, idx.get((s, b, t, k, other), {}).get("target_tokens_per_s"))
                    line += f" | {fmt(rr, 1)}×" if rr else " | –"
            L.append(line + " |")
    L.append("")
    # --- sentences/s + latency
    L.append("## Sentences/s and latency per call (batch 1: per sentence), ms p50 / p90\n")
    L.append("| set | batch | threads | beam | " + " | ".join(f"{lab[e]} sent/s | {lab[e]} p50/p90" for e in E) + " |")
    L.append("|" + "---|" * (4 + 2 * len(E)))
    for s in a.sets:
        for b, t, k in cfgs:
            rs = [idx.get((s, b, t, k, e), {}) for e in E]
            if all("sentences_per_s" not in r for r in rs):
                continue
            cells = []
            for r in rs:
                cells.append(fmt(r.get("sentences_per_s"), 1))
                cells.append(f"{fmt(r.get('latency_p50_ms'), 1)} / {fmt(r.get('latency_p90_ms'), 1)}"
                             if "latency_p50_ms" in r else "–")
            L.append(f"| {s} | {b} | {t} | {k} | " + " | ".join(cells) + " |")
    L.append("")
    # --- BLEU
    L.append("## Corpus BLEU (13a, `tests/reference/bleu.py`) vs the `.de` references\n")
    hdr = "| set | sentences | batch | threads | beam | " + " | ".join(lab[e] for e in E)
    if "mtlite-int8" in E and "mtlite-fp32" in E:
        hdr += " | Δ mtlite int8 − fp32"
    if "torch-int8" in E and "torch-fp32" in E:
        hdr += " | Δ PT int8 − fp32"
    L.append(hdr + " |")
    L.append("|" + "---|" * hdr.count("|"))
    for s in a.sets:
        for b, t, k in cfgs:
            rs = {e: idx.get((s, b, t, k, e), {}) for e in E}
            if all("bleu" not in r for r in rs.values()):
                continue
            ns = next((r.get("sentences") for r in rs.values() if r.get("sentences")), None)
            line = f"| {s} | {ns} | {b} | {t} | {k} | " + " | ".join(fmt(rs[e].get("bleu"), 2) for e in E)
            for x, y in (("mtlite-int8", "mtlite-fp32"), ("torch-int8", "torch-fp32")):
                if x in E and y in E:
                    bx, by = rs[x].get("bleu"), rs[y].get("bleu")
                    line += f" | {bx - by:+.2f}" if bx is not None and by is not None else " | –"
            L.append(line + " |")
    L.append("")
    # --- memory
    L.append("## Memory and model size\n")
    L.append("Peak RSS = the child process's `ru_maxrss` (os.wait4), max over its runs; for PyTorch it "
             "includes the Python interpreter and libtorch.\n")
    L.append("| engine | model file | in-memory weights | peak RSS batch 1 beam 1 (MiB) | peak RSS max over configs (MiB) | arena (MiB, max) |")
    L.append("|---|---|---|---|---|---|")
    for e in E:
        rs = [r for r in rows if r["engine"] == e and "peak_rss_kb" in r]
        if not rs:
            continue
        r1 = [r for r in rs if r["batch"] == 1 and r["beam"] == 1]
        mf = rs[0].get("model_file_bytes")
        sd = rs[0].get("state_dict_bytes")
        arena = max((r.get("arena_bytes") or 0) for r in rs)
        weights = (f"{sd / 2**20:.1f} MiB (quantized state_dict)" if ENGINES[e][0] == "torch" and sd and sd != mf
                   else f"{mf / 2**20:.1f} MiB" + (" (mmap, in place)" if ENGINES[e][0] == "mtlite" else ""))
        L.append(f"| {lab[e]} | {mf / 2**20:.1f} MiB | {weights} | "
                 f"{fmt(max(r['peak_rss_kb'] for r in r1) / 1024, 1) if r1 else '–'} | "
                 f"{max(r['peak_rss_kb'] for r in rs) / 1024:.1f} | "
                 f"{fmt(arena / 2**20, 1) if arena else '–'} |")
    L.append("")
    # --- checks
    L.append("## Checks\n")
    L.append("| check | set | batch | threads | beam | share of sentences |")
    L.append("|---|---|---|---|---|---|")
    for c in chk:
        L.append(f"| {c['check']} | {c['set']} | {c['batch']} | {c['threads']} | {c['beam']} | "
                 f"{fmt(None if c['share'] is None else 100 * c['share'], 1)}% |")
    L.append("")
    L += md_failures(meta.get("failures"))
    if meta.get("phase_split"):
        L.append("## Where mtlite's batch-1 greedy time goes (1 thread)\n")
        L.append("`--max-length 1` rerun: tokenizer + encoder + cross-attention K/V + one decoder step per "
                 "sentence; the rest of the full run's time, divided by the remaining generated tokens, is "
                 "the mean decoder step.\n")
        L.append("| engine | set | encoder + 1st step, ms/sentence | share of total | decoder step, µs | "
                 "weight bytes/step ÷ step time |")
        L.append("|---|---|---|---|---|---|")
        rf_bytes = (meta.get("roofline") or {}).get("decoder_step_bytes", {}).get("total")
        for p in meta["phase_split"]:
            bw = (f"{rf_bytes / (p['decoder_step_us'] * 1e-6) / 1e9:.1f} GB/s"
                  if rf_bytes and p["engine"] == "mtlite-int8" and p["decoder_step_us"] > 0 else "–")
            L.append(f"| {lab.get(p['engine'], p['engine'])} | {p['set']} | "
                     f"{p['encoder_and_first_step_ms_per_sentence']:.2f} | {100 * p['encoder_share']:.0f}% | "
                     f"{p['decoder_step_us']:.0f} | {bw} |")
        L.append("")
    if meta.get("roofline"):
        rf = meta["roofline"]
        st = rf["decoder_step_bytes"]
        L.append("## Roofline inputs (`e2e_bench --roofline`, int8 model)\n")
        L.append(f"Bytes one batch-1 decoder step reads: {st['total']:,} "
                 f"(self-attn q/k/v/o {st['self_attn_qkvo']:,}, cross-attn q/o {st['cross_attn_q_o']:,}, "
                 f"FFN {st['ffn']:,}, output projection {st['output_projection']:,}, biases/norms "
                 f"{st['biases_norms']:,}). Single-thread read bandwidth (GB/s): "
                 + ", ".join(f"{k} {v}" for k, v in rf["read_bandwidth_gbs"].items()) + ". See bench/README.md.")
        L.append("")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(L))


def plot(a, rows, combined, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    use = combined if combined else rows
    setname = "all" if combined else a.sets[0]
    idx = {(r["batch"], r["threads"], r["beam"], r["engine"]): r for r in use if r["set"] == setname}
    cfgs = sorted({(b, t, k) for b, t, k in a.configs})
    E = a.engines
    fig, ax = plt.subplots(figsize=(max(8, 1.4 * len(cfgs) * len(E) / 2), 5))
    w = 0.8 / len(E)
    colors = {"mtlite-int8": "#1b7837", "mtlite-fp32": "#7fbf7b", "torch-fp32": "#762a83", "torch-int8": "#c2a5cf"}
    for j, e in enumerate(E):
        xs = [i + (j - (len(E) - 1) / 2) * w for i in range(len(cfgs))]
        ys = [idx.get((b, t, k, e), {}).get("target_tokens_per_s") or 0 for b, t, k in cfgs]
        bars = ax.bar(xs, ys, w, label=ENGINES[e][2], color=colors.get(e))
        for x, y in zip(xs, ys):
            if y:
                ax.text(x, y, f"{y:.0f}", ha="center", va="bottom", fontsize=7, rotation=90)
        del bars
    ax.set_xticks(range(len(cfgs)))
    ax.set_xticklabels([f"batch {b}\n{t} thr\n{'greedy' if k == 1 else f'beam {k}'}" for b, t, k in cfgs],
                       fontsize=8)
    ax.set_yscale("log")
    top = max([r.get("target_tokens_per_s") or 0 for r in idx.values()] + [1])
    ax.set_ylim(top=top * 2.5)
    ax.set_ylabel("target tokens/s (log scale)")
    ax.set_title(f"End-to-end translation speed ({setname}; median of {a.reps})")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ----------------------------------------------------------------------------- main


def ensure_build(a):
    """Builds e2e_bench and the demo models (unless --no-build) and refuses a stale build.
    Returns an error string or None."""
    if not a.no_build and any(os.path.exists(os.path.join(a.build_dir, f)) for f in ("build.ninja", "Makefile")):
        r = subprocess.run(["cmake", "--build", a.build_dir, "-j", "2", "--target", "e2e_bench", "demo_models"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return "build failed:\n" + (r.stdout + r.stderr)[-3000:]
    exe = os.path.join(a.build_dir, "bench", "e2e_bench")
    if not os.path.exists(exe):
        return f"{exe} not found (configure {a.build_dir} with MTLITE_BUILD_BENCH=ON)"
    mt, path = newest_source()
    built = min(os.path.getmtime(p) for p in [exe] + [os.path.join(a.build_dir, "models", f"demo.{q}.mtlite")
                                                      for q in ("int8", "fp32")] if os.path.exists(p))
    if mt > built and not a.allow_stale:
        return (f"stale build: {os.path.relpath(path, ROOT)} is newer than {a.build_dir}'s e2e_bench/models "
                f"(rebuild, or --allow-stale)")
    return None


def main(argv):
    signal.signal(signal.SIGTERM, raise_interrupt)
    a = parse_args(argv)
    t_start = time.perf_counter()
    failures = []
    exe = os.path.join(a.build_dir, "bench", "e2e_bench")
    if any(ENGINES[e][0] == "mtlite" for e in a.engines):
        err = ensure_build(a)
        if err:
            print(f"run_e2e.py: {err}", file=sys.stderr)
            return 2
    need = []
    if any(ENGINES[e][0] == "mtlite" for e in a.engines):
        need.append(exe)
        need += [os.path.join(a.build_dir, "models", f"demo.{ENGINES[e][1]}.mtlite")
                 for e in a.engines if ENGINES[e][0] == "mtlite"]
    need += [os.path.join(a.data_dir, f"{s}.{l}") for s in a.sets for l in ("en", "de")]
    missing = [p for p in need if not os.path.exists(p)]
    if missing:
        print("run_e2e.py: missing " + ", ".join(missing) +
              "\n  build first: cmake --build <build-dir> --target e2e_bench demo_models", file=sys.stderr)
        return 2
    os.makedirs(a.out_dir, exist_ok=True)
    work = tempfile.mkdtemp(prefix="mtlite_e2e_")
    refs, srcs, nsent = {}, {}, {}   # srcs / nsent keyed (set, threads); refs: the full set
    for s in a.sets:
        en = read_lines(os.path.join(a.data_dir, f"{s}.en"))
        de = read_lines(os.path.join(a.data_dir, f"{s}.de"))
        if len(en) != len(de):
            print(f"run_e2e.py: {s}: {len(en)} sources but {len(de)} references", file=sys.stderr)
            return 2
        refs[s] = de
        for t in sorted({t for _, t, _ in a.configs} | {1}):
            lim = a.limit if t == 1 else a.limit_mt
            part = en[:lim] if lim else en
            srcs[(s, t)] = os.path.join(work, f"{s}.t{t}.en")
            nsent[(s, t)] = len(part)
            with open(srcs[(s, t)], "w", encoding="utf-8") as f:
                f.write("\n".join(part) + "\n")

    meta = {
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "cpu": cpu_name(), "cpus": os.cpu_count(), "git": git_rev(), "dirty_sources": git_dirty_sources(),
        "build_dir": os.path.abspath(a.build_dir), "args": {k: v for k, v in vars(a).items()},
        "load1_start": load1(), "loadavg_start": os.getloadavg(),
        "sentences_note": ("full dev sets" if not a.limit else f"first {a.limit} sentences per set")
                          + " (" + ", ".join(f"{s}: {nsent[(s, 1)]}" for s in a.sets) + ")"
                          + (f"; configurations with threads > 1: "
                             + ("full sets" if not a.limit_mt else f"first {a.limit_mt} sentences per set")
                             if a.limit_mt != a.limit and any(t > 1 for _, t, _ in a.configs) else ""),
    }
    try:
        meta["torch"] = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                                       capture_output=True, text=True, timeout=120).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        meta["torch"] = "?"
    if any(ENGINES[e][0] == "mtlite" for e in a.engines) and "mtlite-int8" in a.engines:
        rc, out, _, _ = run_child([exe, "-m", os.path.join(a.build_dir, "models", "demo.int8.mtlite"),
                                   "--roofline", "--bw-reps", "2" if a.smoke else "5"],
                                  child_env(1), 300, os.path.join(work, "roofline"))
        try:
            meta["roofline"] = json.loads(out)
        except json.JSONDecodeError:
            failures.append(f"e2e_bench --roofline failed (exit {rc})")

    configs = [(s, b, t, k) for s in a.sets for (b, t, k) in a.configs]
    total = a.reps * len(configs) * len(a.engines)
    print(f"run_e2e.py: {len(configs)} configurations x {len(a.engines)} engines x {a.reps} reps = {total} runs; "
          f"load {meta['load1_start']}", file=sys.stderr)
    runs = []
    done = 0
    for rep in range(a.reps):
        for ci, (s, b, t, k) in enumerate(configs):
            shift = (rep + ci) % len(a.engines)
            order = a.engines[shift:] + a.engines[:shift]
            for e in order:
                tag = f"{s}.b{b}.t{t}.k{k}.{e}.r{rep}"
                out = os.path.join(work, tag + ".txt")
                ids = os.path.join(work, tag + ".ids")
                l1 = load1()
                rc, stdout, ru, wall = run_child(engine_cmd(a, e, srcs[(s, t)], out, ids, b, t, k), child_env(t),
                                                 a.timeout, os.path.join(work, tag))
                rec = {"set": s, "batch": b, "threads": t, "beam": k, "engine": e, "rep": rep, "rc": rc,
                       "wall_s": wall, "load1": l1, "child_maxrss_kb": ru.ru_maxrss, "output": out, "ids": ids,
                       "ok": False}
                try:
                    js = json.loads(stdout) if stdout.strip() else None
                except json.JSONDecodeError:
                    js = None
                if rc == 0 and js and js.get("target_tokens", 0) > 0 and os.path.exists(out) \
                        and len(read_lines(out)) == nsent[(s, t)] and js.get("deterministic", False):
                    rec.update({k2: v for k2, v in js.items() if k2 not in rec})
                    rec["ok"] = True
                else:
                    with open(os.path.join(work, tag) + ".err", encoding="utf-8", errors="replace") as f:
                        err = f.read()[-2000:]
                    rec["error"] = err
                    failures.append(f"{tag}: exit {rc}: {err.strip().splitlines()[-1] if err.strip() else 'bad output'}")
                runs.append(rec)
                done += 1
                tps = rec.get("target_tokens_per_s")
                print(f"[{done}/{total}] {tag}: " + (f"{tps:,.0f} tok/s, {rec['total_s']:.2f} s, "
                      f"rss {ru.ru_maxrss / 1024:.0f} MiB, load {l1}" if rec["ok"] else "FAILED"),
                      file=sys.stderr, flush=True)

    meta["phase_split"] = phase_split(a, srcs, runs, work, failures)
    rows = aggregate(a, runs, refs, work)
    combined = combine_sets(rows, a.sets)
    chk, fails = checks(a, rows)
    failures += fails
    meta["load1_end"] = load1()
    meta["loadavg_end"] = os.getloadavg()
    meta["elapsed_s"] = round(time.perf_counter() - t_start, 1)
    meta["failures"] = failures

    # keep the last repetition's translations next to the results
    tr_dir = os.path.join(a.out_dir, "translations")
    if not a.smoke:
        os.makedirs(tr_dir, exist_ok=True)
    for r in rows:
        if "output" in r and a.smoke:
            r.pop("output")
            r.pop("ids", None)
        elif "output" in r:
            name = f"{r['set']}.b{r['batch']}.t{r['threads']}.k{r['beam']}.{r['engine']}.de"
            shutil.copyfile(r["output"], os.path.join(tr_dir, name))
            r["output"] = os.path.relpath(os.path.join(tr_dir, name), a.out_dir)
            r.pop("ids", None)
    for r in runs:
        r.pop("output", None)
        r.pop("ids", None)
    result = {"meta": meta, "results": rows, "all_sets": combined, "checks": chk, "runs": runs}
    with open(os.path.join(a.out_dir, "e2e.json"), "w", encoding="utf-8") as f:
        json.dump(repo_relative(json.loads(json.dumps(result, default=str))), f, indent=1)
    write_markdown(a, meta, rows, combined, chk, os.path.join(a.out_dir, "e2e.md"))
    if not a.no_plot:
        try:
            plot(a, rows, combined, os.path.join(a.out_dir, "e2e.png"))
        except Exception as ex:  # noqa: BLE001 -- a failed plot fails the run, with the reason
            failures.append(f"plot failed: {ex!r}")
    shutil.rmtree(work, ignore_errors=True)
    return finish(os.path.join(a.out_dir, "e2e.md"), lambda msg: print(f"run_e2e.py: {msg}", file=sys.stderr),
                  f"{meta['elapsed_s']} s, load {meta['load1_start']} -> {meta['load1_end']}; results in {a.out_dir}",
                  failures)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
