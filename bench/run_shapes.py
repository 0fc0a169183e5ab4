#!/usr/bin/python3
"""Benchmarks on the model shapes people deploy: demo, Bergamot "tiny" (tiny32k), OPUS-MT base.

The script makes its own checkpoints (tests/reference/make_random_checkpoint.py, random weights,
--fixed-length: </s> is never chosen, so every sentence decodes exactly --max-length steps: 63
ids + the forced </s> at 64), converts them with this build's `mtlite convert --quantize int8`,
and in ONE run measures, interleaved, for every shape x batch x threads x search:

  mtlite-int8       this build (bench/e2e_bench of --build-dir)
  mtlite-baseline   the previous release (--baseline-build DIR, a build of it; or --baseline-rev REV,
                    built into build-baseline/ from a detached worktree outside the repository);
                    run only when one of them names it
  mtlite-shortlist  this build with --shortlist, on the shape's model plus a shortlist that
                    `mtlite shortlist` builds from --shortlist-data (batch 1, 1 thread only: the
                    criterion is shortlist / none at batch 1)
  torch-fp32        PyTorch eager fp32 (bench/torch_marian.py)        on the first --torch-sentences
  torch-int8        PyTorch quantize_dynamic int8                     sentences (batch 16: >= 16),
                    one process per (shape, threads) running all its (batch, beam)

Every mtlite configuration runs twice per repetition, with --max-length L and with --max-length 1
(tokenizer + encoder + cross K/V + one step): the difference over L-1 steps per call is the
decoder step. Each repetition first measures the machine: single-core streaming-read bandwidth
over a 1 GiB buffer (e2e_bench --roofline --bw-mib 1024) and the int8 GEMM peak of the dispatched
kernel table (gemm_bench, m = 16 and 64, weights in cache, best GOPS); the 1 GiB read is measured
again right before and after each batch-1 1-thread greedy run of this build, whose step is also
compared with that (a shared machine's memory bandwidth drifts within minutes). Medians over
--reps (>= 3).

  /usr/bin/python3 bench/run_shapes.py                  # the full run (about 30 min idle: --plan)
  /usr/bin/python3 bench/run_shapes.py --resume         # go on after an interruption
  /usr/bin/python3 bench/run_shapes.py --plan           # what would run, and the expected time
  /usr/bin/python3 bench/run_shapes.py --smoke          # all shapes and engines, tiny (a few min)

Outputs: bench/results/shapes/shapes.{json,md} (--smoke: bench/results/shapes/smoke/).
Work files (checkpoints ~0.4 GB, models, run logs, the resume state): --work-dir (build-shapes/).
Exit: 0 ok, 1 a run or a check failed (the report is still written), 2 setup error.
"""
import argparse
import datetime
import hashlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import bench_common as bc  # noqa: E402
from bench_common import PY, SetupError, fmt, run, sha256  # noqa: E402

MAKE_CKPT = os.path.join(ROOT, "tests", "reference", "make_random_checkpoint.py")
SHAPES = ["demo", "tiny32k", "base"]
ENGINES = {
    # name: (kind, label)
    "mtlite-int8": ("mtlite", "mtlite int8"),
    "mtlite-baseline": ("mtlite", "mtlite int8 previous release"),
    "mtlite-shortlist": ("mtlite", "mtlite int8 + shortlist"),
    "torch-fp32": ("torch", "PyTorch fp32"),
    "torch-int8": ("torch", "PyTorch dyn. int8"),
}
DEFAULT_ENGINES = ["mtlite-int8", "mtlite-baseline", "mtlite-shortlist", "torch-fp32", "torch-int8"]
RSS_SLACK_BYTES = 4 << 20  # peak RSS bound: model file + arena + 4 MiB
# For the expected duration (--plan, the start line): per engine and shape, seconds of one decoder
# step with one row, seconds per further row (batch x beam), and the process start (PyTorch:
# import + load + quantize); rough, from CPU times of runs on this class of machine (mtlite-baseline:
# x 1.2). After the first repetition the script extrapolates from its real time instead.
PLAN_COST = {"mtlite": {"demo": (1.0e-4, 8e-5, 0.1), "tiny32k": (3e-4, 2e-4, 0.1), "base": (2.5e-3, 1e-3, 0.2)},
             "torch-fp32": {"demo": (3e-3, 3e-4, 2.5), "tiny32k": (6e-3, 6e-4, 3.0), "base": (3.6e-2, 2.9e-3, 6.0)},
             "torch-int8": {"demo": (1e-2, 3e-3, 3.5), "tiny32k": (1e-2, 3e-3, 4.0), "base": (3.6e-2, 2.5e-3, 9.0)}}


def csv_shapes(s):
    return bc.csv_names(SHAPES)(s)


def torch_counts(s):
    """'demo:16,tiny32k:16,base:8' or one integer for every shape."""
    out = {}
    try:
        if ":" not in s:
            n = int(s)
            if n < 1:
                raise ValueError
            return {k: n for k in SHAPES}
        for part in s.split(","):
            k, _, v = part.partition(":")
            if k.strip() not in SHAPES or int(v) < 1:
                raise ValueError
            out[k.strip()] = int(v)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected N or shape:N,... (shapes {','.join(SHAPES)}), got '{s}'")
    return out


def parse_args(argv):
    ap = bc.parser("mtlite on deployment shapes (one interleaved run)", __doc__,
                   "this build: bench/e2e_bench, bench/gemm_bench, mtlite")
    bc.add_baseline_args(ap, "bench/e2e_bench and mtlite (engine mtlite-baseline)")
    ap.add_argument("--shapes", type=csv_shapes, default=list(SHAPES))
    ap.add_argument("--engines", type=bc.csv_names(list(ENGINES)), default=None,
                    help=f"default {','.join(DEFAULT_ENGINES)}")
    ap.add_argument("--input", default=os.path.join(ROOT, "tests", "data", "dev", "multi30k.val.en"))
    ap.add_argument("--sentences", type=int, default=64, help="the first N lines of --input")
    ap.add_argument("--torch-sentences", type=torch_counts, default=torch_counts("demo:8,tiny32k:8,base:4"),
                    help="PyTorch runs the first N sentences per shape (batch > N: the first `batch`)")
    ap.add_argument("--max-length", type=int, default=64, help="decoded tokens per sentence, incl. the forced </s>")
    ap.add_argument("--torch-steps", action="store_true",
                    help="PyTorch also at --max-length 1, for its decoder step time (more process starts)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1, help="checkpoint seed")
    ap.add_argument("--shortlist-data", default=os.path.join(ROOT, "tests", "data", "shortlist", "train"),
                    help="parallel text PREFIX.en / PREFIX.de for the shapes' shortlists (mtlite shortlist "
                         "with its defaults)")
    ap.add_argument("--shortlist-args", default="",
                    help="extra e2e_bench arguments of mtlite-shortlist ({ckpt} = the shape's checkpoint dir, "
                         "{shape} = its name)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per engine run")
    ap.add_argument("--cpu", type=int, default=None,
                    help="1-thread runs and the machine measurements are pinned to this CPU (default: the "
                         "first this process may use; -1: no pinning). The vCPUs of a virtual machine need not "
                         "be equally fast at the same moment (1.28x apart on the 2-core test machine)")
    ap.add_argument("--work-dir", default=os.path.join(ROOT, "build-shapes"))
    ap.add_argument("--out-dir", default=None, help="default bench/results/shapes (smoke: .../smoke)")
    ap.add_argument("--resume", action="store_true",
                    help="keep the finished runs of an interrupted run with the same setup")
    ap.add_argument("--plan", action="store_true", help="print the runs and the expected time; run nothing")
    ap.add_argument("--smoke", action="store_true",
                    help="4 sentences (PyTorch 2), 1 rep; batch 1 greedy and beam 4, batch 16 greedy with 1 and 2 threads")
    ap.add_argument("--no-build", action="store_true", help="do not build this build's targets first")
    ap.add_argument("--allow-stale", action="store_true")
    a = ap.parse_args(argv)
    if a.engines is None:
        a.engines = [e for e in DEFAULT_ENGINES if e != "mtlite-baseline" or bc.has_baseline(a)]
    elif "mtlite-baseline" in a.engines and not bc.has_baseline(a):
        ap.error("engine mtlite-baseline needs the previous release: --baseline-build DIR or --baseline-rev REV")
    if a.smoke:
        a.sentences = min(a.sentences, 4)
        a.torch_sentences = {k: 2 for k in SHAPES}
        a.reps = 1
        a.configs = [(1, 1, 1), (1, 1, 4), (16, 1, 1), (16, 2, 1)]  # (batch, threads, beam)
    else:
        a.configs = [(b, t, k) for b in a.batch for t in a.threads for k in a.beam]
    if a.reps < 1 or a.sentences < 1 or a.max_length < 2 or a.timeout <= 0:
        ap.error("--reps >= 1, --sentences >= 1, --max-length >= 2, --timeout > 0")
    if a.out_dir is None:
        a.out_dir = os.path.join(HERE, "results", "shapes", "smoke" if a.smoke else "")
    for k in SHAPES:
        a.torch_sentences.setdefault(k, 8)
    a.torch_lengths = (a.max_length, 1) if a.torch_steps else (a.max_length,)
    if a.cpu is None:
        a.cpu = min(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else -1
    a.pin_cpu = a.cpu if a.cpu >= 0 else None
    return a


# ----------------------------------------------------------------------------- helpers


def log(msg):
    print(f"run_shapes.py: {msg}", file=sys.stderr, flush=True)


def file_id(path):
    st = os.stat(path)
    return [st.st_size, int(st.st_mtime)]


# ----------------------------------------------------------------------------- builds


def ensure_this_build(a):
    if not a.no_build:
        r = subprocess.run(["cmake", "--build", a.build_dir, "-j", "2", "--target", "e2e_bench", "gemm_bench",
                            "mtlite_cli"], capture_output=True, text=True)
        if r.returncode != 0:
            raise SetupError("build failed:\n" + (r.stdout + r.stderr)[-3000:])
    exes = {n: os.path.join(a.build_dir, *p) for n, p in
            (("e2e_bench", ("bench", "e2e_bench")), ("gemm_bench", ("bench", "gemm_bench")), ("mtlite", ("mtlite",)))}
    missing = [p for p in exes.values() if not os.path.exists(p)]
    if missing:
        raise SetupError(f"missing {', '.join(missing)} (configure {a.build_dir} with MTLITE_BUILD_BENCH=ON)")
    mt, path = bc.newest_source()
    if mt > os.path.getmtime(exes["e2e_bench"]) and not a.allow_stale:
        raise SetupError(f"stale build: {os.path.relpath(path, ROOT)} is newer than {exes['e2e_bench']} "
                         "(rebuild, or --allow-stale)")
    return exes


# ----------------------------------------------------------------------------- models


def ensure_checkpoint(a, shape):
    d = os.path.join(a.work_dir, "ckpt", shape)
    spec = {"preset": shape, "seed": a.seed, "fixed_length": True, "generator": sha256(MAKE_CKPT)}
    spec_path = os.path.join(d, "bench_spec.json")
    try:
        with open(spec_path) as f:
            if json.load(f) == spec and os.path.exists(os.path.join(d, "model.safetensors")):
                return d
    except (OSError, ValueError):
        pass
    log(f"making the {shape} checkpoint")
    shutil.rmtree(d, ignore_errors=True)
    run([PY, MAKE_CKPT, d, "--preset", shape, "--seed", str(a.seed), "--fixed-length"], f"checkpoint {shape}")
    with open(spec_path, "w") as f:
        json.dump(spec, f)
    return d


def ensure_model(mtlite, ckpt, path):
    """`mtlite convert --quantize int8` unless path is newer than the checkpoint and the converter."""
    if os.path.exists(path) and os.path.getmtime(path) > max(os.path.getmtime(os.path.join(ckpt, "model.safetensors")),
                                                             os.path.getmtime(mtlite)):
        return path
    os.makedirs(os.path.dirname(path), exist_ok=True)
    run([mtlite, "convert", ckpt, "-o", path, "--quantize", "int8"], f"convert {ckpt}")
    return path


def ensure_shortlist_model(mtlite, model, data, path):
    """`mtlite shortlist` (its defaults) from data.en / data.de unless path is newer than its inputs."""
    src, tgt = data + ".en", data + ".de"
    newest = max(os.path.getmtime(p) for p in (model, mtlite, src, tgt))
    if os.path.exists(path) and os.path.getmtime(path) > newest:
        return path
    run([mtlite, "shortlist", "-m", model, "-o", path, "--source", src, "--target", tgt, "-q"], f"shortlist {model}")
    return path


def config_of(ckpt):
    with open(os.path.join(ckpt, "config.json")) as f:
        return json.load(f)


def blocked_bytes(n, k):
    """BlockedN8K4 int8 data (8 rows x 4 k per 32 bytes, padded) + fp32 per-row scales."""
    return ((n + 7) // 8 * 8) * ((k + 3) // 4 * 4) + 4 * n


def step_cost(cfg):
    """Weights a batch-1 decoder step streams (int8 model), from the config; and MACs per row.
    Self-attention q/k/v/o, cross-attention q/o (cross k/v run once per sentence), FFN, the output
    projection + final_logits_bias, biases and LayerNorms. Attention over the K/V caches is left
    out (activations: ~2 % of the bytes at these lengths)."""
    d, f, L, V = cfg["d_model"], cfg["decoder_ffn_dim"], cfg["decoder_layers"], cfg.get("decoder_vocab_size",
                                                                                         cfg["vocab_size"])
    parts = {
        "self_attn_qkvo": L * 4 * blocked_bytes(d, d),
        "cross_attn_q_o": L * 2 * blocked_bytes(d, d),
        "ffn": L * (blocked_bytes(f, d) + blocked_bytes(d, f)),
        # fp32: q/k/v/o + cross q/o + fc1 + fc2 biases, three LayerNorms (gamma, beta)
        "biases_norms": L * 4 * (4 * d + 2 * d + f + d + 3 * 2 * d),
        "output_projection": blocked_bytes(V, d) + 4 * V,
    }
    parts["total"] = sum(parts.values())
    macs = L * (6 * d * d + 2 * d * f) + V * d
    params = sum_params(cfg)
    return parts, macs, params


def sum_params(cfg):
    d, V = cfg["d_model"], cfg["vocab_size"]
    enc = cfg["encoder_layers"] * (4 * (d * d + d) + 2 * d * cfg["encoder_ffn_dim"] + cfg["encoder_ffn_dim"] + d
                                   + 4 * d)
    dec = cfg["decoder_layers"] * (8 * (d * d + d) + 2 * d * cfg["decoder_ffn_dim"] + cfg["decoder_ffn_dim"] + d
                                   + 6 * d)
    return V * d + enc + dec + V  # shared embedding (tied output) + final_logits_bias


def source_tokens(ckpt, lines):
    """Source tokens per line as HF MarianTokenizer counts them (pieces + </s>)."""
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=os.path.join(ckpt, "source.spm"))
    return [len(sp.encode(l, out_type=str)) + 1 for l in lines]


# ----------------------------------------------------------------------------- machine


def pin_to(cpu):
    return (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None


def roofline(a, exes, model, log_name, reps, mib=1024):
    """e2e_bench --roofline with a `mib` MiB read buffer, pinned like the 1-thread runs: (exit code, stdout)."""
    rc, out, _, _ = bc.run_child([exes["e2e_bench"], "-m", model, "--roofline", "--bw-mib", str(mib),
                                       "--bw-reps", str(reps)], bc.child_env(1), 600,
                                      os.path.join(a.runs_dir, log_name), a.pin_cpu)
    return rc, out


def step_read_mib(info):
    """The read buffer for a shape's own ceiling: its batch-1 step's weight bytes, in whole MiB
    (at least 16, e2e_bench's smallest --bw-mib)."""
    return max(16, -(-info["bytes"]["total"] // (1 << 20)))


def measure_machine(a, exes, model, shapes_info):
    """Single-core streaming-read bandwidth (1 GiB), the same over a buffer the size of each
    shape's batch-1 step (read again and again like the step's weights: on a machine whose
    last-level cache keeps part of it, faster than the 1 GiB read), and the dispatched table's
    int8 GEMM peak."""
    m = {"load1": bc.load1()}
    by_mib = {}  # one read per buffer size (the smaller shapes share the 16 MiB one)
    for shape, info in shapes_info.items():
        mib = step_read_mib(info)
        if mib not in by_mib:
            rc, out = roofline(a, exes, model, f"roofline.{mib}MiB.{time.time():.0f}", 3 if a.smoke else 5, mib)
            try:
                by_mib[mib] = json.loads(out)["read_bandwidth_gbs"][f"{mib}MiB"]
            except (ValueError, KeyError):
                m["error"] = f"e2e_bench --roofline --bw-mib {mib} failed (exit {rc})"
                return m
        m.setdefault("step_read_gbs", {})[shape] = by_mib[mib]
    rc, out = roofline(a, exes, model, f"roofline.{time.time():.0f}", 3 if a.smoke else 5)
    try:
        rf = json.loads(out)
        m["read_gbs"] = rf["read_bandwidth_gbs"]
        m["dram_gbs"] = rf["read_bandwidth_gbs"]["1024MiB"]
        m["kernels"] = rf["kernels"]
    except (ValueError, KeyError):
        m["error"] = f"e2e_bench --roofline failed (exit {rc})"
        return m
    table = m["kernels"]
    names = subprocess.run([exes["gemm_bench"], "--benchmark_list_tests=true"], capture_output=True,
                           text=True).stdout.split()
    want = [n for n in names if n.startswith(f"gemm/{table}/") and n.endswith("/hot")
            and n.split("/")[2] in ("m16", "m64") and int(n.split("/")[3][1:]) <= 4096]
    if not want:
        m["error"] = f"gemm_bench has no gemm/{table}/m16|m64/.../hot benchmarks"
        return m
    bw = [n for n in names if n.startswith("bandwidth/read/")]
    regex = "^(" + "|".join(want + bw[-1:]) + ")$"
    r = subprocess.run([exes["gemm_bench"], f"--benchmark_filter={regex}", "--benchmark_format=json",
                        "--benchmark_min_time=" + ("0.05" if a.smoke else "0.2")], capture_output=True, text=True,
                       timeout=600, preexec_fn=pin_to(a.pin_cpu))
    try:
        js = json.loads(r.stdout)
    except ValueError:
        m["error"] = f"gemm_bench failed (exit {r.returncode}): {r.stderr[-500:]}"
        return m
    best = None
    for b in js.get("benchmarks", []):
        if b.get("error_occurred"):
            continue
        if b["name"].startswith("gemm/") and "GOPS" in b:
            if best is None or b["GOPS"] > best[1]:
                best = (b["name"], b["GOPS"] / 1e9 if b["GOPS"] > 1e6 else b["GOPS"])
        elif b["name"].startswith("bandwidth/read/") and "GBps" in b:
            m["gemm_bench_read_gbs"] = b["GBps"] / 1e9 if b["GBps"] > 1e6 else b["GBps"]
    if best is None:
        m["error"] = "gemm_bench reported no GOPS"
        return m
    m["peak_gops"], m["peak_bench"] = best[1], best[0]
    return m


def measure_read(a, exes, model, key):
    """The single-core 1 GiB streaming read alone (about 4 s), taken right before and after each
    batch-1 1-thread greedy run of this build: a shared machine's DRAM bandwidth drifts by 10-20 %
    within minutes, so the step is also compared with what the memory gave at that moment."""
    rc, out = roofline(a, exes, model, key.replace("|", "."), 3)
    try:
        return {"key": key, "dram_gbs": json.loads(out)["read_bandwidth_gbs"]["1024MiB"]}
    except (ValueError, KeyError):
        return {"key": key, "error": f"e2e_bench --roofline failed (exit {rc})"}


def adjacent_job(job):
    """Whether the job is one whose step is compared with the read bandwidth measured next to it."""
    return (job.engine == "mtlite-int8" and job.threads == 1 and job.cfgs == ((1, 1),)
            and job.length > 1)


# ----------------------------------------------------------------------------- runs


class State:
    """Finished runs, one JSON line each, flushed as they finish; --resume keeps the successful
    ones of the same setup (identity: binaries, models, arguments) and runs the rest again."""

    def __init__(self, path, identity, resume):
        self.path, self.records = path, {}
        id_path = path + ".identity.json"
        if resume and os.path.exists(path) and os.path.exists(id_path):
            with open(id_path) as f:
                old = json.load(f)
            if old != identity:
                diff = sorted(k for k in set(old) | set(identity) if old.get(k) != identity.get(k))
                raise SetupError(f"--resume: the saved runs are of a different setup ({', '.join(diff)} differ); "
                                 "run without --resume")
            with open(path) as f:
                for line in f:
                    try:
                        r = json.loads(line)
                    except ValueError:
                        continue  # a line cut by the interruption
                    if r.get("ok") or (r["key"].startswith(("machine|", "read|")) and not r.get("error")):
                        self.records[r["key"]] = r  # failed runs run again
            with open(path, "w") as f:  # keep only what is kept
                for r in self.records.values():
                    f.write(json.dumps(r, default=str) + "\n")
            log(f"--resume: {len(self.records)} finished runs kept")
        else:
            with open(path, "w"):
                pass
            with open(id_path, "w") as f:
                json.dump(identity, f, indent=1)

    def add(self, rec):
        self.records[rec["key"]] = rec
        with open(self.path, "a") as f:
            f.write(json.dumps(rec, default=str) + "\n")
            f.flush()
            os.fsync(f.fileno())


class Job:
    """One engine process: mtlite runs one configuration; PyTorch runs every (batch, beam) of a
    (shape, threads) on one loaded model (its load and quantization take seconds)."""

    def __init__(self, rep, shape, threads, engine, cfgs, length):
        self.rep, self.shape, self.threads, self.engine, self.cfgs, self.length = (rep, shape, threads, engine,
                                                                                   tuple(cfgs), length)

    def keys(self):
        return [run_key(self.rep, self.shape, b, self.threads, k, self.engine, self.length) for b, k in self.cfgs]

    def tag(self, b=None, k=None):
        c = (f"b{b}.k{k}" if b is not None else
             "+".join(f"b{bb}k{kk}" for bb, kk in self.cfgs) if len(self.cfgs) > 1 else
             f"b{self.cfgs[0][0]}.k{self.cfgs[0][1]}")
        return f"{self.shape}.t{self.threads}.{c}.{self.engine}.len{self.length}.r{self.rep}"


def run_key(rep, shape, b, t, k, e, length):
    return f"{rep}|{shape}|b{b}|t{t}|k{k}|{e}|len{length}"


def n_sentences(a, e, shape, b):
    if ENGINES[e][0] == "torch":
        return min(a.sentences, max(a.torch_sentences[shape], b))
    return a.sentences


def engine_cmd(a, job, exes, base_exes, models, ckpt, src):
    """The command line and, per (batch, beam), the output and ids paths."""
    e, shape = job.engine, job.shape
    outs = {(b, k): (os.path.join(a.runs_dir, job.tag(b, k) + ".txt"), os.path.join(a.runs_dir, job.tag(b, k) + ".ids"))
            for b, k in job.cfgs}
    common = ["--input", src, "--threads", str(job.threads), "--max-length", str(job.length), "--repeat", "1"]
    if ENGINES[e][0] == "torch":
        pat = os.path.join(a.runs_dir, job.tag("{batch}", "{beam}"))
        cfgs = ",".join(f"{b}:{k}:{n_sentences(a, e, shape, b)}" for b, k in job.cfgs)
        return (bc.torch_peer_cmd(e.split("-")[1], ckpt) + ["--configs", cfgs, "--output", pat + ".txt",
                                                            "--ids-output", pat + ".ids"] + common), outs
    (b, k), = job.cfgs
    common += ["--batch", str(b), "--beam", str(k), "--output", outs[(b, k)][0], "--ids-output", outs[(b, k)][1]]
    if e == "mtlite-int8":
        return [exes["e2e_bench"], "-m", models[(shape, "this")]] + common, outs
    if e == "mtlite-baseline":
        return [base_exes["e2e_bench"], "-m", models[(shape, "baseline")]] + common, outs
    extra = a.shortlist_args.replace("{ckpt}", ckpt).replace("{shape}", shape).split()
    return [exes["e2e_bench"], "-m", models[(shape, "shortlist")], "--shortlist"] + common + extra, outs


def ids_stats(path, want):
    """(lines, lines whose id count != want)."""
    lines = bc.read_lines(path)
    return len(lines), sum(1 for l in lines if len(l.split()) != want)


def do_job(a, job, cmd, outs):
    """Runs one engine process; returns one record per (batch, beam) of the job."""
    log_base = os.path.join(a.runs_dir, job.tag())
    l1 = bc.load1()
    cpu = a.pin_cpu if job.threads == 1 else None
    rc, stdout, ru, wall = bc.run_child(cmd, bc.child_env(job.threads), a.timeout, log_base, cpu)
    try:  # e2e_bench: one (pretty-printed) object; torch_marian.py --configs: one object per line
        results = [json.loads(stdout)]
    except ValueError:
        results = []
        for line in stdout.splitlines():
            try:
                results.append(json.loads(line))
            except ValueError:
                pass
    try:
        with open(log_base + ".err", encoding="utf-8", errors="replace") as f:
            err = f.read().strip()
    except OSError:
        err = ""
    recs = []
    for (b, k), key in zip(job.cfgs, job.keys()):
        out, ids = outs[(b, k)]
        nsent = n_sentences(a, job.engine, job.shape, b)
        js = next((r for r in results if r.get("batch") == b and r.get("beam") == k), None)
        rec = {"key": key, "rep": job.rep, "shape": job.shape, "batch": b, "threads": job.threads, "beam": k,
               "engine": job.engine, "length": job.length, "tag": job.tag(b, k), "rc": rc, "wall_s": wall,
               "cpu_s": ru.ru_utime + ru.ru_stime, "configs_in_process": len(job.cfgs), "load1": l1,
               "child_maxrss_kb": ru.ru_maxrss, "ids": ids, "ok": False}
        problem = None
        if not js:
            problem = f"exit {rc}, no result"
        elif not os.path.exists(out) or len(bc.read_lines(out)) != nsent or js.get("sentences") != nsent:
            problem = f"output lines != {nsent} sentences"
        elif not js.get("deterministic", False):
            problem = "not deterministic"
        else:
            n, bad = ids_stats(ids, job.length - 1)
            rec["fixed_length_bad_lines"] = bad
            if n != nsent or bad or js.get("target_tokens") != nsent * job.length:
                problem = (f"fixed length broken: {bad} of {n} lines without {job.length - 1} ids, target_tokens "
                           f"{js.get('target_tokens')} != {nsent * job.length}")
        if rc != 0 and not problem:
            problem = f"exit {rc}"
        if js:
            rec.update({k2: v for k2, v in js.items() if k2 not in rec and not isinstance(v, (list, dict))})
        if os.path.exists(ids):
            with open(ids, "rb") as f:
                rec["ids_sha"] = hashlib.sha256(f.read()).hexdigest()
        if problem:
            rec["error"] = f"{problem}: {err.splitlines()[-1] if err else ''}"
        else:
            rec["ok"] = True
        recs.append(rec)
    return recs


# ----------------------------------------------------------------------------- aggregate


def median(v):
    return statistics.median(v) if v else None


def aggregate(a, state, shapes_info):
    """Per (shape, b, t, k, engine): medians, decoder step, roofline numbers."""
    rows = []
    recs = list(state.records.values())
    for shape in a.shapes:
        info = shapes_info[shape]
        for (b, t, k) in a.configs:
            for e in a.engines:
                def sel(length):
                    return [r for r in recs if r.get("shape") == shape and r.get("engine") == e and r.get("batch")
                            == b and r.get("threads") == t and r.get("beam") == k and r.get("length") == length]
                full, one = sel(a.max_length), sel(1)
                if not full and not one:
                    continue  # not planned (mtlite-shortlist beyond batch 1, 1 thread)
                okf, ok1 = [r for r in full if r["ok"]], [r for r in one if r["ok"]]
                row = {"shape": shape, "batch": b, "threads": t, "beam": k, "engine": e,
                       "runs": len(full) + len(one), "ok_runs": len(okf) + len(ok1)}
                if okf:
                    tf = median([r["total_s"] for r in okf])
                    nsent, toks, calls = okf[0]["sentences"], okf[0]["target_tokens"], okf[0]["calls_per_run"]
                    row.update({"sentences": nsent, "target_tokens": toks, "calls": calls, "total_s": tf,
                                "total_s_runs": [r["total_s"] for r in okf], "tokens_per_s": toks / tf,
                                "total_s_by_rep": {r["rep"]: r["total_s"] for r in okf},
                                "peak_rss_kb": max(r.get("vm_hwm_kb") or r["child_maxrss_kb"] for r in okf),
                                "load1_runs": [r["load1"] for r in okf], "kernels": okf[0].get("kernels"),
                                "ids_identical_across_reps": len({r["ids_sha"] for r in okf}) == 1,
                                "ids": okf[-1]["ids"]})
                    if ENGINES[e][0] == "mtlite":
                        row["arena_bytes"] = okf[0].get("arena_bytes")
                        row["model_file_bytes"] = okf[0].get("model_file_bytes")
                        if row["arena_bytes"] is not None and row["model_file_bytes"] is not None:
                            row["rss_bound_kb"] = (row["model_file_bytes"] + row["arena_bytes"] + RSS_SLACK_BYTES) / 1024
                        code = [r["code_rss_kb"] for r in okf if (r.get("code_rss_kb") or -1) >= 0]
                        if code:  # resident pages of the executable and shared libraries (e2e_bench)
                            row["code_rss_kb"] = min(code)
                    if ok1:
                        t1 = median([r["total_s"] for r in ok1])
                        def step_of(total):  # decoder step of a run `total` s long
                            return (total - t1) / ((a.max_length - 1) * calls)
                        step = step_of(tf)
                        row.update({"len1_total_s": t1, "encoder_ms_per_call": 1e3 * t1 / calls,
                                    "step_ms": 1e3 * step})
                        if step > 0:
                            rows_per_step = min(b, nsent) * k
                            row["gmacs"] = info["macs_per_row"] * rows_per_step / step / 1e9
                            if b == 1:
                                row["gbs"] = info["bytes"]["total"] / step / 1e9
                                row["gbs_by_rep"] = {  # each repetition's step against the median at length 1
                                    r["rep"]: info["bytes"]["total"] / step_of(r["total_s"]) / 1e9
                                    for r in okf if r["total_s"] > t1}
                rows.append(row)
    return rows


def checks(a, rows):
    """(check rows, failures). Failures: runs that failed, outputs that changed between repetitions,
    mtlite batch 16 != batch 1 or 2 threads != 1 thread (this build)."""
    out, fails = [], []
    idx = {(r["shape"], r["batch"], r["threads"], r["beam"], r["engine"]): r for r in rows}
    for r in rows:
        name = f"{r['shape']} b{r['batch']} t{r['threads']} beam{r['beam']} {r['engine']}"
        if r["ok_runs"] != r["runs"]:
            fails.append(f"{name}: {r['runs'] - r['ok_runs']} of {r['runs']} runs failed")
        elif "ids" in r and not r["ids_identical_across_reps"]:
            fails.append(f"{name}: ids differ between repetitions")

    def share(x, y):
        return bc.id_parity(x["ids"], y["ids"]) if "ids" in x and "ids" in y else None

    for (s, b, t, k, e), r in sorted(idx.items()):
        if ENGINES[e][0] == "mtlite":
            for (bb, tt, what) in ((1, t, f"batch {b} = batch 1"), (b, 1, f"{t} threads = 1 thread")):
                ref = idx.get((s, bb, tt, k, e))
                if ref is None or ref is r or (bb == b and tt == t):
                    continue
                p = share(r, ref)
                out.append({"check": f"{e} ids: {what}", "shape": s, "batch": b, "threads": t, "beam": k, "share": p})
                if p != 1.0 and e == "mtlite-int8":
                    fails.append(f"{e} {s} b{b} t{t} beam{k}: {what} does not hold (share {p})")
        pairs = {"mtlite-baseline": "mtlite-int8", "torch-int8": "torch-fp32", "torch-fp32": "mtlite-int8",
                 "mtlite-shortlist": "mtlite-int8"}
        if e in pairs and (s, b, t, k, pairs[e]) in idx:
            out.append({"check": f"{e} ids = {pairs[e]} ids (common sentences)", "shape": s, "batch": b,
                        "threads": t, "beam": k, "share": share(r, idx[(s, b, t, k, pairs[e])])})
    return out, fails


def criteria(a, meta, rows):
    """The performance targets, evaluated on this run (PASS / FAIL / not measured)."""
    idx = {(r["shape"], r["batch"], r["threads"], r["beam"], r["engine"]): r for r in rows}
    res = []

    def add(name, value, target, ok, note=""):
        res.append({"criterion": name, "value": value, "target": target,
                    "result": "not measured" if ok is None else ("PASS" if ok else "FAIL"), "note": note})

    dram = meta.get("dram_gbs")
    r = idx.get(("base", 1, 1, 1, "mtlite-int8"), {})
    if "base" in a.shapes:
        v = r.get("gbs") / dram if r.get("gbs") and dram else None
        add("OPUS-MT base, batch 1, 1 thread, greedy: weight GB/s ÷ measured DRAM GB/s",
            f"{100 * v:.0f} % ({r['gbs']:.1f} of {dram:.1f} GB/s)" if v else "–", "≥ 90 %",
            None if v is None else v >= 0.90)
        # the same, each repetition against the read measured right before and after it
        near = meta.get("read_adjacent_gbs", {}).get("base", {})
        pairs = [(g, statistics.mean(near[rep].values())) for rep, g in r.get("gbs_by_rep", {}).items()
                 if len(near.get(rep, {})) == 2]
        v = median([g / bw for g, bw in pairs]) if pairs else None
        add("OPUS-MT base, batch 1, 1 thread, greedy: weight GB/s ÷ DRAM GB/s read right before and after "
            "(median of the repetitions)",
            f"{100 * v:.0f} % ({', '.join(f'{g:.1f} of {bw:.1f}' for g, bw in pairs)} GB/s)" if v else "–",
            "≥ 90 %", None if v is None else v >= 0.90)
        # the same against a read of a buffer the size of the step's weights, read again and again
        # as the steps do: the step's own ceiling where the last-level cache keeps part of them
        srd = meta.get("step_read_gbs", {}).get("base")
        v = r.get("gbs") / srd if r.get("gbs") and srd else None
        add("OPUS-MT base, batch 1, 1 thread, greedy: weight GB/s ÷ GB/s of a read of a buffer the size of the "
            "step's weights (the run's median)",
            f"{100 * v:.0f} % ({r['gbs']:.1f} of {srd:.1f} GB/s)" if v else "–", "≥ 90 %",
            None if v is None else v >= 0.90)

    def speedup(name, x, y, want, label="", note=""):
        """tokens/s of result key x over key y against `want`: the ratio of the medians, then the
        median of the per-repetition ratios (x and y of one repetition ran minutes apart at most, so
        the machine's drift between repetitions cancels; same tokens, so a ratio of times)."""
        rx, ry = idx.get(x, {}), idx.get(y, {})
        tx, ty = rx.get("tokens_per_s"), ry.get("tokens_per_s")
        v = tx / ty if tx and ty else None
        add(name, f"{v:.2f}×" if v else "–", f"≥ {want}×{label}", None if v is None else v >= want,
            "" if v else note)
        bx, by = rx.get("total_s_by_rep", {}), ry.get("total_s_by_rep", {})
        if tx and ty and rx.get("target_tokens") == ry.get("target_tokens"):
            per = [by[rep] / bx[rep] for rep in sorted(bx) if rep in by and bx[rep] > 0]
            if per:
                v = median(per)
                add(name + " (median of the per-repetition ratios)",
                    f"{v:.2f}× ({' / '.join(f'{p:.2f}' for p in per)})", f"≥ {want}×{label}", v >= want)

    def search(k):
        return "greedy" if k == 1 else f"beam {k}"

    for shape in [s for s in ("base", "tiny32k") if s in a.shapes]:
        for k in (1, 4):
            speedup(f"{shape}, batch 1, 1 thread, {search(k)}: shortlist ÷ none", (shape, 1, 1, k, "mtlite-shortlist"),
                    (shape, 1, 1, k, "mtlite-int8"), 2.5, note="engine mtlite-shortlist not run")
    vnni = meta.get("vnni")
    for shape in a.shapes:
        for (b, k, lo) in ((16, 1, 1.2), (1, 4, 1.3), (16, 4, 1.3)):
            speedup(f"{shape}, batch {b}, 1 thread, {search(k)}: this build ÷ previous release",
                    (shape, b, 1, k, "mtlite-int8"), (shape, b, 1, k, "mtlite-baseline"), 1.5 if vnni else lo, " (VNNI)" if vnni else " (no VNNI)")
    for shape in [s for s in ("tiny32k", "base") if s in a.shapes]:
        for k in (1, 4):
            speedup(f"{shape}, batch 16, {search(k)}: 2 threads ÷ 1 thread", (shape, 16, 2, k, "mtlite-int8"),
                    (shape, 16, 1, k, "mtlite-int8"), 1.7)
    for shape in a.shapes:
        rs = [r for r in rows if r["shape"] == shape and r["engine"] == "mtlite-int8" and "rss_bound_kb" in r]
        if rs:
            worst = max(rs, key=lambda r: r["peak_rss_kb"] - r["rss_bound_kb"])
            add(f"{shape}: peak RSS ≤ model file + arena + 4 MiB (every configuration)",
                f"worst b{worst['batch']} t{worst['threads']} beam{worst['beam']}: "
                f"{worst['peak_rss_kb'] / 1024:.1f} MiB vs {worst['rss_bound_kb'] / 1024:.1f} MiB",
                "≤ bound", worst["peak_rss_kb"] <= worst["rss_bound_kb"])
            rc = [r for r in rs if "code_rss_kb" in r]
            if rc:
                worst = max(rc, key=lambda r: r["peak_rss_kb"] - r["code_rss_kb"] - r["rss_bound_kb"])
                add(f"{shape}: peak RSS − the program's code (executable + shared libraries) ≤ model file + arena "
                    "+ 4 MiB",
                    f"worst b{worst['batch']} t{worst['threads']} beam{worst['beam']}: "
                    f"{(worst['peak_rss_kb'] - worst['code_rss_kb']) / 1024:.1f} MiB (code "
                    f"{worst['code_rss_kb'] / 1024:.1f} MiB) vs {worst['rss_bound_kb'] / 1024:.1f} MiB",
                    "≤ bound", worst["peak_rss_kb"] - worst["code_rss_kb"] <= worst["rss_bound_kb"])
    return res


# ----------------------------------------------------------------------------- report


def write_markdown(a, meta, shapes_info, rows, chk, crit, path):
    E = a.engines
    lab = {e: ENGINES[e][1] for e in E}
    idx = {(r["shape"], r["batch"], r["threads"], r["beam"], r["engine"]): r for r in rows}
    L = ["# mtlite on deployment shapes\n"]
    L.append(f"Generated by `bench/run_shapes.py`{' --smoke' if a.smoke else ''} on {meta['date']} — "
             f"{meta['cpu']}, {meta['cpus']} CPUs, {'AVX-512 VNNI' if meta['vnni'] else 'no AVX-512 VNNI'}"
             f"{', AVX-VNNI' if meta.get('avx_vnni') else ''}; git {meta['git']}"
             + (f" (uncommitted: {', '.join(meta['dirty_sources'])})" if meta.get("dirty_sources") else "")
             + (f"; previous release = {meta['baseline_rev'] or 'a build of an unknown revision'}"
                if meta.get("baseline_rev") is not None else "") + f"; torch {meta.get('torch', '?')}. "
             f"{a.reps} repetition(s), medians; load average (1 min) {meta['load1_start']} at start, "
             f"{meta.get('load1_end')} at the end; {meta.get('elapsed_s', 0) / 60:.1f} min; "
             + (f"1-thread runs pinned to CPU {a.pin_cpu}" if a.pin_cpu is not None else "not pinned")
             + (f" (resumed: {meta['resumed_runs']} measurements from an earlier invocation)"
                if meta.get("resumed_runs") else "") + ".\n")
    L.append(f"Input: the first {a.sentences} lines of `{os.path.relpath(a.input, ROOT)}`; PyTorch: the first "
             + ", ".join(f"{s} {n_sentences(a, 'torch-fp32', s, 1)}" for s in a.shapes)
             + " (batch 16: 16) of them. Every sentence decodes exactly "
             f"{a.max_length} tokens ({a.max_length - 1} ids + the forced `</s>`; checked): random weights, "
             "`</s>` pushed down by `final_logits_bias`.\n")
    L.append(f"Machine, median of the repetitions: single-core streaming read over 1 GiB "
             f"**{fmt(meta.get('dram_gbs'), 1)} GB/s** (runs: {meta.get('dram_gbs_runs')}); int8 GEMM peak of the "
             f"dispatched table `{meta.get('kernels')}` (gemm_bench, m 16/64, hot) **{fmt(meta.get('peak_gops'), 0)} "
             f"GOPS** = {fmt((meta.get('peak_gops') or 0) / 2, 0)} GMAC/s (runs: {meta.get('peak_gops_runs')}; "
             f"best: `{meta.get('peak_bench')}`)"
             + (f"; gemm_bench's own read bandwidth {fmt(meta.get('gemm_bench_read_gbs'), 1)} GB/s"
                if meta.get("gemm_bench_read_gbs") else "") + ".\n")
    L.append("## Shapes\n")
    L.append("| shape | d | heads | layers enc+dec | FFN | vocab | parameters | int8 file | mean source tokens "
             "(PyTorch subset) | weight bytes / decoder step | MACs / step / row | roofline: step at the read "
             "bandwidth, ms | row at the GEMM peak, ms | read of a buffer of the step's size (MiB), GB/s |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    dram, peak = meta.get("dram_gbs"), meta.get("peak_gops")
    for s in a.shapes:
        i = shapes_info[s]
        c = i["config"]
        ceil_bw = fmt(i["bytes"]["total"] / dram / 1e6, 2) if dram else "–"
        ceil_mac = fmt(i["macs_per_row"] / (peak / 2) / 1e6, 3) if peak else "–"
        L.append(f"| {s} | {c['d_model']} | {c['decoder_attention_heads']} | {c['encoder_layers']}+{c['decoder_layers']} "
                 f"| {c['decoder_ffn_dim']} | {c['vocab_size']:,} | {i['params'] / 1e6:.1f} M | "
                 f"{i['file_bytes'] / 1e6:.1f} MB | {i['mean_src_tokens']:.1f} ({i['mean_src_tokens_torch']:.1f}) | "
                 f"{i['bytes']['total'] / 1e6:.2f} MB (output projection {100 * i['bytes']['output_projection'] / i['bytes']['total']:.0f} %) "
                 f"| {i['macs_per_row'] / 1e6:.2f} M | {ceil_bw} | {ceil_mac} | "
                 f"{fmt(meta.get('step_read_gbs', {}).get(s), 1)} ({step_read_mib(i)}) |")
    L.append("")
    L.append("Weight bytes / step: int8 BlockedN8K4 data + fp32 row scales of every decoder layer's self-attention "
             "q/k/v/o, cross-attention q/o (cross k/v run once per sentence) and FFN, the output projection + "
             "`final_logits_bias`, biases and LayerNorms (computed from the config; "
             + ("equal to `e2e_bench --roofline` for every shape" if all(i.get("roofline_match") for i in
                                                                       shapes_info.values())
                else "**differs from `e2e_bench --roofline`**: " + ", ".join(
                    f"{s} {i.get('roofline_total')}" for s, i in shapes_info.items() if not i.get("roofline_match")))
             + "). Decoder step = (time − time at `--max-length 1`) / (" + f"{a.max_length - 1} × calls); "
             "GB/s = weight bytes per step / step (batch 1); GMAC/s = MACs per row × rows (batch × beam) / step. "
             "Roofline of a batch-1 step: max(bytes ÷ read bandwidth, rows × MACs ÷ peak); the weights of a "
             "step that fits in the last-level cache come faster than the 1 GiB read (GB/s above 100 %); the "
             "read of a buffer the size of the step (read again and again, as a step reads its weights; at least "
             "16 MiB) is the step's own ceiling where the cache keeps part of it, the second percentage of the "
             "GB/s column. "
             "Peak RSS = the process's VmHWM; bound = model file + arena + 4 MiB; code = the resident pages of "
             "the executable (with its built-in C++ runtime) and its shared libraries (libc, libm, XNNPACK: shared with "
             "other processes, the same for every model), which the RSS counts too.\n")
    for s in a.shapes:
        L.append(f"## {s}\n")
        hdr = ("| batch | threads | search | " + " | ".join(f"{lab[e]} tok/s" for e in E)
               + " | ms / step (mtlite) | GB/s (% of the 1 GiB read, of the step-size read) | GMAC/s (% of 1-core peak) | ÷ previous release | ÷ PT fp32 | ÷ PT int8 "
               "| peak RSS / bound (MiB) | code (MiB) |")
        L.append(hdr)
        L.append("|" + "---|" * (hdr.count("|") - 1))
        for (b, t, k) in a.configs:
            m = idx.get((s, b, t, k, "mtlite-int8"), {})
            cells = [fmt(idx.get((s, b, t, k, e), {}).get("tokens_per_s")) for e in E]
            dram, peak = meta.get("dram_gbs"), meta.get("peak_gops")
            srd = meta.get("step_read_gbs", {}).get(s)
            gbs = (f"{m['gbs']:.1f} ({100 * m['gbs'] / dram:.0f} %" + (f", {100 * m['gbs'] / srd:.0f} %" if srd else "")
                   + ")" if m.get("gbs") and dram else "–")
            gm = (f"{m['gmacs']:.1f} ({100 * 2 * m['gmacs'] / peak:.0f} %)" if m.get("gmacs") and peak else "–")

            def rat(o):
                x, y = m.get("tokens_per_s"), idx.get((s, b, t, k, o), {}).get("tokens_per_s")
                return f"{x / y:.2f}×" if x and y else "–"

            rss = (f"{m['peak_rss_kb'] / 1024:.1f} / {m['rss_bound_kb'] / 1024:.1f}" if "rss_bound_kb" in m else "–")
            L.append(f"| {b} | {t} | {'greedy' if k == 1 else f'beam {k}'} | " + " | ".join(cells)
                     + f" | {fmt(m.get('step_ms'), 3)} | {gbs} | {gm} | {rat('mtlite-baseline')} | {rat('torch-fp32')} "
                       f"| {rat('torch-int8')} | {rss} | {fmt(m['code_rss_kb'] / 1024, 1) if 'code_rss_kb' in m else '–'} |")
        L.append("")
        ES = [e for e in E if any("step_ms" in r for r in rows if r["engine"] == e and r["shape"] == s)]
        L.append("Decoder step (ms) / tokenizer + encoder + cross K/V + first step per call (ms):\n")
        L.append("| batch | threads | search | " + " | ".join(f"{lab[e]}" for e in ES) + " |")
        L.append("|" + "---|" * (3 + len(ES)))
        for (b, t, k) in a.configs:
            cells = []
            for e in ES:
                r = idx.get((s, b, t, k, e), {})
                cells.append(f"{fmt(r.get('step_ms'), 2)} / {fmt(r.get('encoder_ms_per_call'), 1)}")
            L.append(f"| {b} | {t} | {'greedy' if k == 1 else f'beam {k}'} | " + " | ".join(cells) + " |")
        L.append("")
    L.append("## Targets (this run)\n")
    L.append("| criterion | value | target | result |")
    L.append("|---|---|---|---|")
    for c in crit:
        L.append(f"| {c['criterion']} | {c['value']} | {c['target']} | {c['result']}"
                 + (f" ({c['note']})" if c["note"] else "") + " |")
    L.append("")
    L.append("## Checks\n")
    L.append("Failing the run: a run that fails, output that changes between repetitions, a sentence without "
             f"exactly {a.max_length - 1} ids + `</s>`, this build's batch-16 or 2-thread ids differing from batch 1 / "
             "1 thread. Shares below are informational except those.\n")
    L.append("| check | configurations | identical sentences, min | below 100 % |")
    L.append("|---|---|---|---|")
    groups = {}
    for c in chk:
        groups.setdefault(c["check"], []).append(c)
    for name, cs in groups.items():
        shares = [c["share"] for c in cs if c["share"] is not None]
        low = [f"{c['shape']} b{c['batch']} t{c['threads']} beam{c['beam']}: "
               f"{fmt(None if c['share'] is None else 100 * c['share'], 0)} %" for c in cs
               if c["share"] is None or c["share"] < 1.0]
        L.append(f"| {name} | {len(cs)} | {fmt(100 * min(shares), 1) if shares else '–'} % | "
                 + ("; ".join(low[:6]) + (f"; … {len(low) - 6} more" if len(low) > 6 else "") if low else "–") + " |")
    L.append("")
    L += bc.md_failures(meta.get("failures"))
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(L))


# ----------------------------------------------------------------------------- main


def plan(a):
    """[Job] in run order: repetitions -> shapes -> threads -> configurations, each with the
    mtlite engines (order rotated per configuration and repetition; --max-length L, then 1), the
    PyTorch jobs of the (shape, threads) spread between the configurations (order rotated)."""
    mt = [e for e in a.engines if ENGINES[e][0] == "mtlite"]
    pt = [e for e in a.engines if ENGINES[e][0] == "torch"]
    out, ci = [], 0
    for rep in range(a.reps):
        for shape in a.shapes:
            for t in sorted({t for _, t, _ in a.configs}):
                cfgs = [(b, k) for b, tt, k in a.configs if tt == t]
                tjobs = pt[rep % len(pt):] + pt[:rep % len(pt)] if pt else []
                where = {j: (j + 1) * len(cfgs) // (len(tjobs) + 1) for j in range(len(tjobs))}
                for i, (b, k) in enumerate(cfgs):
                    for j, e in enumerate(tjobs):
                        if where[j] == i:
                            out += [Job(rep, shape, t, e, cfgs, length) for length in a.torch_lengths]
                    shift = (rep + ci) % len(mt) if mt else 0
                    ci += 1
                    for e in mt[shift:] + mt[:shift]:
                        if e == "mtlite-shortlist" and (b, t) != (1, 1):
                            continue  # its criterion is at batch 1, 1 thread
                        out += [Job(rep, shape, t, e, [(b, k)], length) for length in (a.max_length, 1)]
                for j, e in enumerate(tjobs):
                    if where[j] >= len(cfgs):
                        out += [Job(rep, shape, t, e, cfgs, length) for length in a.torch_lengths]
    return out


def estimate_s(a, jobs):
    """Expected seconds on an idle machine (PLAN_COST: rough, from the smoke runs' CPU times)."""
    total = 0.0
    for j in jobs:
        step1, per_row, start = PLAN_COST[j.engine if j.engine in PLAN_COST else "mtlite"][j.shape]
        if j.engine == "mtlite-baseline":
            step1 *= 1.2
        total += start
        for b, k in j.cfgs:
            n = n_sentences(a, j.engine, j.shape, b)
            rows = min(b, n) * k
            calls = -(-n // b)
            total += calls * j.length * (step1 + per_row * (rows - 1)) / (1.6 if j.threads > 1 else 1.0)
    return total


def main(argv):
    signal.signal(signal.SIGTERM, bc.raise_interrupt)
    a = parse_args(argv)
    order = plan(a)
    if a.plan:
        est = estimate_s(a, order)
        print(f"{len(order)} engine processes, {sum(len(j.cfgs) for j in order)} measurements ({a.reps} reps x "
              f"{len(a.shapes)} shapes x {len(a.configs)} configurations x {len(a.engines)} engines; mtlite also at "
              f"--max-length 1); expected about {est / 60:.0f} min on an idle 2-core machine (+ ~2 min for "
              "checkpoints and conversion, + building the baseline when missing). First repetition, first shape:")
        for j in order:
            if j.rep == 0 and j.shape == a.shapes[0]:
                print("  " + j.tag())
        return 0
    t_start = time.time()
    os.makedirs(a.work_dir, exist_ok=True)
    a.runs_dir = os.path.join(a.work_dir, "smoke-runs" if a.smoke else "runs")
    os.makedirs(a.runs_dir, exist_ok=True)
    try:
        exes = ensure_this_build(a)
        base_exes, base_rev = (bc.ensure_baseline(a, {"e2e_bench": "bench/e2e_bench", "mtlite": "mtlite"},
                                                  ["e2e_bench", "mtlite_cli"], log)
                               if "mtlite-baseline" in a.engines else ({}, None))
        lines = bc.read_lines(a.input)[:a.sentences]
        if len(lines) < a.sentences:
            raise SetupError(f"{a.input} has only {len(lines)} lines")
        srcs = {}
        for n in sorted({n_sentences(a, e, s, b) for e in a.engines for s in a.shapes for (b, _, _) in a.configs}):
            srcs[n] = os.path.join(a.runs_dir, f"input.{n}.en")
            with open(srcs[n], "w", encoding="utf-8") as f:
                f.write("\n".join(lines[:n]) + "\n")
        ckpts, models, shapes_info = {}, {}, {}
        for s in a.shapes:
            ckpts[s] = ensure_checkpoint(a, s)
            models[(s, "this")] = ensure_model(exes["mtlite"], ckpts[s], os.path.join(a.work_dir, "models",
                                                                                     f"{s}.int8.mtlite"))
            if "mtlite-shortlist" in a.engines:
                models[(s, "shortlist")] = ensure_shortlist_model(
                    exes["mtlite"], models[(s, "this")], a.shortlist_data,
                    os.path.join(a.work_dir, "models", f"{s}.shortlist.int8.mtlite"))
            if base_exes:
                # the previous release reads this build's file if the format allows; otherwise its own converter's
                r = subprocess.run([base_exes["mtlite"], "info", models[(s, "this")]], capture_output=True, text=True)
                models[(s, "baseline")] = models[(s, "this")] if r.returncode == 0 else ensure_model(
                    base_exes["mtlite"], ckpts[s], os.path.join(a.work_dir, "models", f"{s}.baseline.int8.mtlite"))
            cfg = config_of(ckpts[s])
            parts, macs, params = step_cost(cfg)
            tok = source_tokens(ckpts[s], lines)
            info = {"config": {k: cfg[k] for k in ("d_model", "encoder_layers", "decoder_layers", "encoder_attention_heads",
                                                   "decoder_attention_heads", "encoder_ffn_dim", "decoder_ffn_dim",
                                                   "vocab_size", "activation_function", "max_position_embeddings")},
                    "bytes": parts, "macs_per_row": macs, "params": params,
                    "file_bytes": os.path.getsize(models[(s, "this")]),
                    "baseline_model": os.path.relpath(models.get((s, "baseline"), models[(s, "this")]), a.work_dir),
                    "mean_src_tokens": sum(tok) / len(tok),
                    "mean_src_tokens_torch": statistics.mean(tok[:n_sentences(a, "torch-fp32", s, 1)])}
            rc, out, _, _ = bc.run_child([exes["e2e_bench"], "-m", models[(s, "this")], "--roofline", "--bw-reps",
                                               "1", "--bw-mib", "16"], bc.child_env(1), 300,
                                              os.path.join(a.runs_dir, f"roofline.{s}"))
            try:
                info["roofline_total"] = json.loads(out)["decoder_step_bytes"]["total"]
                info["roofline_match"] = info["roofline_total"] == parts["total"]
            except (ValueError, KeyError):
                info["roofline_total"], info["roofline_match"] = f"e2e_bench --roofline failed (exit {rc})", False
            shapes_info[s] = info
        identity = {"args": {k: v for k, v in vars(a).items() if k in (
                        "shapes", "engines", "configs", "input", "sentences", "torch_sentences", "max_length", "reps",
                        "seed", "shortlist_args", "shortlist_data", "smoke")},
                    "e2e_bench": sha256(exes["e2e_bench"]),
                    "baseline_e2e_bench": sha256(base_exes["e2e_bench"]) if base_exes else None,
                    "torch_marian": sha256(os.path.join(HERE, "torch_marian.py")),
                    "marian_ref": sha256(os.path.join(ROOT, "tests", "reference", "marian_ref.py")),
                    "models": {f"{s}/{w}": file_id(p) for (s, w), p in models.items()}}
        identity = json.loads(json.dumps(identity))
        state = State(os.path.join(a.work_dir, "smoke-state.jsonl" if a.smoke else "state.jsonl"), identity, a.resume)
    except (SetupError, subprocess.TimeoutExpired, OSError) as ex:
        log(str(ex))
        return 2

    flags = bc.cpu_flags()
    meta = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "cpu": bc.cpu_name(),
            "cpus": os.cpu_count(), "vnni": "avx512_vnni" in flags, "avx_vnni": "avx_vnni" in flags,
            "git": bc.git_rev(), "dirty_sources": bc.git_dirty_sources(), "baseline_rev": base_rev,
            "load1_start": bc.load1(), "args": {k: bc.repo_path(v) for k, v in vars(a).items()}}
    try:
        meta["torch"] = subprocess.run([PY, "-c", "import torch; print(torch.__version__)"], capture_output=True,
                                       text=True, timeout=120).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        meta["torch"] = "?"
    failures = []
    total = len(order)
    todo = [j for j in order if not all(k in state.records for k in j.keys())]
    meta["resumed_runs"] = sum(1 for k in state.records if not k.startswith(("machine|", "read|")))
    log(f"{total} engine processes ({total - len(todo)} already done); load {meta['load1_start']}; "
        f"expected about {estimate_s(a, todo) / 60:.0f} min on an idle machine")
    rep_t0 = time.time()
    try:
        for i, job in enumerate(order):
            mkey = f"machine|{job.rep}"
            if mkey not in state.records:
                m = measure_machine(a, exes, models[(a.shapes[0], "this")], shapes_info)
                m["key"] = mkey
                state.add(m)
                log(f"rep {job.rep}: read {fmt(m.get('dram_gbs'), 1)} GB/s, int8 peak {fmt(m.get('peak_gops'), 1)} "
                    f"GOPS ({m.get('kernels')}) {m.get('error', '')}")
            adj = adjacent_job(job) and job in todo
            if adj:
                state.add(measure_read(a, exes, models[(job.shape, "this")], f"read|{job.rep}|{job.shape}|before"))
            if job in todo:
                nmax = max(n_sentences(a, job.engine, job.shape, b) for b, _ in job.cfgs)
                cmd, outs = engine_cmd(a, job, exes, base_exes, models, ckpts[job.shape], srcs[nmax])
                for rec in do_job(a, job, cmd, outs):
                    state.add(rec)
                    msg = (f"{rec['target_tokens'] / rec['total_s']:,.0f} tok/s, {rec['total_s']:.2f} s" if rec["ok"]
                           else f"FAILED: {rec.get('error')}")
                    log(f"[{i + 1}/{total}] {rec['tag']}: {msg}, "
                        f"peak RSS {(rec.get('vm_hwm_kb') or rec['child_maxrss_kb']) / 1024:.0f} MiB, "
                        f"load {rec['load1']}, {(time.time() - t_start) / 60:.1f} min")
            if adj:
                state.add(measure_read(a, exes, models[(job.shape, "this")], f"read|{job.rep}|{job.shape}|after"))
            if i + 1 < total and order[i + 1].rep != job.rep:
                spent = time.time() - rep_t0
                rep_t0 = time.time()
                left = [j for j in todo if j.rep > job.rep]
                if spent > 60 and job in todo:
                    log(f"repetition {job.rep + 1} of {a.reps} done in {spent / 60:.1f} min; about "
                        f"{spent * len(left) / max(1, sum(1 for j in todo if j.rep == job.rep)) / 60:.0f} min left")
    except KeyboardInterrupt:
        log(f"interrupted; {len(state.records)} finished runs saved: rerun with --resume to go on")
        return 130

    machine = [state.records[f"machine|{rep}"] for rep in range(a.reps) if f"machine|{rep}" in state.records]
    for key, name in (("dram_gbs", "dram_gbs"), ("peak_gops", "peak_gops"), ("gemm_bench_read_gbs",
                                                                              "gemm_bench_read_gbs")):
        v = [m[key] for m in machine if m.get(key)]
        meta[name] = median(v)
        meta[name + "_runs"] = [round(x, 1) for x in v]
    adjacent = {}  # shape -> rep -> {"before": GB/s, "after": GB/s}
    for k, r in state.records.items():
        if k.startswith("read|"):
            _, rep, shape, when = k.split("|")
            if r.get("dram_gbs"):
                adjacent.setdefault(shape, {}).setdefault(int(rep), {})[when] = r["dram_gbs"]
            else:
                failures.append(f"read bandwidth next to {shape} rep {rep} ({when}): {r.get('error')}")
    meta["read_adjacent_gbs"] = adjacent
    meta["step_read_gbs"] = {s: median([m["step_read_gbs"][s] for m in machine if s in m.get("step_read_gbs", {})])
                             for s in a.shapes}
    meta["kernels"] = next((m.get("kernels") for m in machine if m.get("kernels")), None)
    meta["peak_bench"] = next((m.get("peak_bench") for m in machine if m.get("peak_bench")), None)
    failures += [f"machine measurement, rep {m['key'].split('|')[1]}: {m['error']}" for m in machine if m.get("error")]
    rows = aggregate(a, state, shapes_info)
    chk, fails = checks(a, rows)
    failures += fails
    failures += [f"{s}: weight bytes per step from the config {i['bytes']['total']} != e2e_bench --roofline "
                 f"{i.get('roofline_total')}" for s, i in shapes_info.items() if not i.get("roofline_match")]
    crit = criteria(a, meta, rows)
    meta.update({"load1_end": bc.load1(), "elapsed_s": round(time.time() - t_start, 1), "failures": failures,
                 "run_cpu_s": round(sum(r.get("cpu_s", 0) for r in state.records.values()), 1)})
    os.makedirs(a.out_dir, exist_ok=True)
    for r in rows:
        r.pop("ids", None)
    runs = [{k: v for k, v in r.items() if k != "ids"} for r in state.records.values()]
    with open(os.path.join(a.out_dir, "shapes.json"), "w", encoding="utf-8") as f:
        json.dump(bc.repo_relative(json.loads(json.dumps(
            {"meta": meta, "shapes": shapes_info, "results": rows, "criteria": crit, "checks": chk, "runs": runs},
            default=str))), f, indent=1)
    md = os.path.join(a.out_dir, "shapes.md")
    write_markdown(a, meta, shapes_info, rows, chk, crit, md)
    return bc.finish(md, log, f"{meta['elapsed_s'] / 60:.1f} min, load {meta['load1_start']} -> {meta['load1_end']}; "
                     f"results in {a.out_dir}", failures)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
