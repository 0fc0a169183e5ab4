#!/usr/bin/python3
"""The text layer on a web page: mtlite native, mtlite WebAssembly (Node and headless Chromium)
and Bergamot WebAssembly translating the bundled sample page web/page/sample.html as HTML, greedy,
one thread, in ONE interleaved run; plus the text layer's own cost.

Engines (each run its own process):
  mtlite-native         the Python API (bench/text/native_text.py): Translator(threads=1,
                        max_batch=--batch, alignments=True).translate_text(page, html=True, beam_size=1)
  mtlite-wasm-node      web/mtlite.js in Node (bench/text/wasm_text.mjs): translator.translateText(page,
                        {html: true, beam: 1}), createTranslator({maxBatch: --batch, alignments: true})
  mtlite-wasm-chromium  the same inside a page of headless Chromium (bench/text/chromium_text.mjs,
                        puppeteer-core; web/page/serve.mjs serves web/ and the model)
  bergamot-wasm-node    npm @browsermt/bergamot-translator 0.4.9 (bench/text/bergamot_text.mjs, through
                        tests/reference/bergamot/translate.mjs): the page as one text, html: true,
                        ssplit-mode paragraph, gemm-precision int8shiftAll (the float32 Marian export
                        quantized at load), Bergamot's own batching (mini-batch-words 4096)
and, as checks and process wall times, the command lines: `build/mtlite translate --html` (every
repetition) and `node web/mtlite.mjs translate --html` (first repetition).

Models:
  demo   build/models/demo.int8.mtlite (models/marian-en-de-tiny); Bergamot: the same checkpoint
         exported by tests/reference/marian_export.py (model.bin, vocab.spm)
  ssru   the Firefox-tiny-shaped SSRU student with 32,000 ids, RANDOM weights (--fixed-length: </s>
         is never chosen, every sentence decodes to the length cap), and a binary lexical shortlist
         (random lists, lex.*.s2t.bin) used by both engines:
           make_ssru_checkpoint.py --shape tiny --decoder ssru --vocab-size 32000 --fixed-length
           the demo's SentencePiece model grown to 32,000 pieces: vocab.json's 31,999 without <pad>
           and one more (no HF row: <unk>'s row, logit bias -1e9), so that Marian has the students'
           32,000 ids (Bergamot's int8 GEMM needs a multiple of 8); the added pieces score -1e6, never
           chosen when segmenting, so sources segment as with the demo's model
           marian_export.py --format bin --vocab spm; the lex file (firstNum --lex-first, bestNum
           --lex-best random target ids per source id, seed 1)
           mtlite convert model.bin --vocab vocab.spm --quantize int8
           mtlite shortlist --lex lex.bin --top-k bestNum --frequent firstNum
         mtlite translates with the shortlist (--shortlist / use_shortlist / shortlist: true),
         Bergamot with the lex file as its shortlist.
Both engines cap every sentence at --length-factor x its source tokens (Bergamot max-length-factor
F; mtlite max_length_ratio F, max_length_offset 1, the same cap): with the random model that cap is
the work.

One run loops repetitions -> models -> engines, the engine order rotating. Every timing process
translates the page --passes times after loading (pass 1 is the warm-up); the last pass is timed.
Reported per model and engine: the median over repetitions of the timed pass, source words/s
(whitespace-separated words of the page's text content, script/style excluded), the first pass, the
load (module + model + translator) apart, peak RSS; per repetition the paired ratios (medians and
range). Text-layer overhead (native, Python API, same translator): --overhead-rounds rounds per
repetition of translate_text(page, html=True) / translate_batch(its sentences) /
translate_batch(its sentences, return_alignments=True), the order rotating; overhead =
(text - batch) / batch of the medians, and the median of the per-round ratios.

Checks (a failure fails the run): every run exits 0 with no failed sentence; the HTML of mtlite
native (Python API and CLI) and of mtlite WebAssembly (Node API, Node CLI, Chromium) byte-identical,
in every repetition; the batch translations equal the text layer's sentences.

  /usr/bin/python3 bench/text_bench.py            # 5 repetitions, about 6 min on a shared 2-core machine
  /usr/bin/python3 bench/text_bench.py --smoke    # a 3-paragraph page, 1 repetition, 1 pass
Outputs: bench/results/text/text.{json,md} (--smoke: WORK_DIR/smoke/). Work files: --work-dir
(build-text-bench/). Exit: 0 ok, 1 a run or a check failed (the report is still written), 2 setup error.
"""
import argparse
import datetime
import html.parser
import json
import os
import random
import shutil
import statistics
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import bench_common as bc  # noqa: E402
from bench_common import PY, SetupError, fmt, run, sha256  # noqa: E402

REF = os.path.join(ROOT, "tests", "reference")
DEMO = os.path.join(ROOT, "models", "marian-en-de-tiny")
PAGE = os.path.join(ROOT, "web", "page", "sample.html")
TEXT = os.path.join(HERE, "text")
ENGINES = ["mtlite-native", "mtlite-wasm-node", "mtlite-wasm-chromium", "bergamot-wasm-node"]
MODELS = {"demo": "demo model (models/marian-en-de-tiny, trained)",
          "ssru": "tiny SSRU student, 32k ids, random weights, binary shortlist"}
RATIOS = [("mtlite-wasm-node", "bergamot-wasm-node", ">= 4x"), ("mtlite-wasm-chromium", "bergamot-wasm-node", ">= 4x"),
          ("mtlite-native", "bergamot-wasm-node", ""), ("mtlite-wasm-node", "mtlite-native", ""),
          ("mtlite-wasm-chromium", "mtlite-wasm-node", "")]
LEX_MAGIC = 0xF11A48D5013417F5


def log(msg):
    print(f"text_bench.py: [load {bc.load1()}] {msg}", file=sys.stderr, flush=True)


def parse_args(argv):
    ap = argparse.ArgumentParser(description="the text layer on a web page: mtlite native / WebAssembly vs Bergamot",
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"), help="mtlite, models/, python/")
    ap.add_argument("--models", type=bc.csv_names(list(MODELS)), default=list(MODELS))
    ap.add_argument("--engines", type=bc.csv_names(ENGINES), default=ENGINES)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--passes", type=int, default=2, help="page translations per process; the last is timed")
    ap.add_argument("--overhead-rounds", type=int, default=6, help="text/batch rounds per repetition and model")
    ap.add_argument("--batch", type=int, default=1,
                    help="mtlite's max_batch (default 1: `mtlite translate --html`'s --batch default)")
    ap.add_argument("--length-factor", type=int, default=2, help="output cap: F x source tokens, both engines")
    ap.add_argument("--lex-first", type=int, default=100, help="the lex file's firstNum (always-allowed ids)")
    ap.add_argument("--lex-best", type=int, default=50, help="target ids per source id in the lex file")
    ap.add_argument("--page", default=PAGE)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--work-dir", default=os.path.join(ROOT, "build-text-bench"))
    ap.add_argument("--out-dir", default=None, help="default bench/results/text (--smoke: WORK_DIR/smoke)")
    ap.add_argument("--smoke", action="store_true", help="a 3-paragraph page, 1 repetition, 1 pass, 1 round")
    a = ap.parse_args(argv)
    if a.smoke:
        a.reps, a.passes, a.overhead_rounds = 1, 1, 1
    if a.reps < 1 or a.passes < 1:
        ap.error("--reps and --passes >= 1")
    a.build_dir = os.path.abspath(a.build_dir)
    a.work_dir = os.path.abspath(a.work_dir)
    if a.out_dir is None:
        a.out_dir = os.path.join(a.work_dir, "smoke") if a.smoke else os.path.join(HERE, "results", "text")
    return a


# ----------------------------------------------------------------------------- the page


class _Text(html.parser.HTMLParser):
    """The text content of an HTML document (character references decoded, script/style left out)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts, self.skip = [], 0

    def handle_starttag(self, tag, attrs):
        self.skip += tag in ("script", "style")

    def handle_endtag(self, tag):
        self.skip -= tag in ("script", "style") and self.skip > 0

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def page_words(text):
    p = _Text()
    p.feed(text)
    p.close()
    return len(" ".join(p.parts).split())


def make_pages(a):
    """{engine kind: path}: mtlite's page (the file itself, or the smoke page) and Bergamot's (the
    same without the <!DOCTYPE> line: Bergamot 0.4.9's HTML parser aborts on it, 'Not all tags were
    closed')."""
    with open(a.page, encoding="utf-8") as f:
        text = f.read()
    if a.smoke:
        lines = text.split("\n")
        cut = [i for i, l in enumerate(lines) if l.startswith("<p")][2]
        text = "\n".join(lines[:cut + 1] + ["</article>", "</body>", "</html>", ""])
    pages = {"mtlite": a.page}
    if a.smoke:
        pages["mtlite"] = os.path.join(a.work_dir, "page.smoke.html")
        with open(pages["mtlite"], "w", encoding="utf-8") as f:
            f.write(text)
    lines = text.split("\n")
    if not lines[0].lower().startswith("<!doctype"):
        raise SetupError(f"{a.page}: expected a <!DOCTYPE> first line")
    pages["bergamot"] = os.path.join(a.work_dir, "page.bergamot" + (".smoke" if a.smoke else "") + ".html")
    with open(pages["bergamot"], "w", encoding="utf-8") as f:
        f.write("\n".join(lines[1:]))
    return pages, page_words(text), len(text.encode("utf-8"))


# ----------------------------------------------------------------------------- models


def grow_spm(src, dst, pieces):
    """Writes the SentencePiece model src with `pieces` appended (ids after its own; type NORMAL,
    score -1e6: never chosen when segmenting). A ModelProto's pieces are its field 1, repeated;
    a repeated field's entries appended at the end of the message keep their order."""
    def varint(n):
        out = bytearray()
        while True:
            b, n = n & 0x7F, n >> 7
            out.append(b | (0x80 if n else 0))
            if not n:
                return bytes(out)
    with open(src, "rb") as f:
        blob = bytearray(f.read())
    for p in pieces:
        s = p.encode("utf-8")
        msg = b"\x0a" + varint(len(s)) + s + b"\x15" + struct.pack("<f", -1e6) + b"\x18\x01"
        blob += b"\x0a" + varint(len(msg)) + msg
    with open(dst, "wb") as f:
        f.write(bytes(blob))


def write_lex(path, vocab, first, best, seed=1):
    """Marian's binary lexical shortlist (converter/lex_binary.h): for every source id `best`
    distinct random target ids (sorted), firstNum `first`."""
    rng = random.Random(seed)
    offsets, targets = [0], []
    for _ in range(vocab):
        targets += sorted(rng.sample(range(vocab), best))
        offsets.append(len(targets))
    body = struct.pack(f"<{len(offsets)}Q", *offsets) + struct.pack(f"<{len(targets)}I", *targets)
    head = struct.pack("<QQQQ", first, best, len(offsets), len(targets))
    seed_ = 0
    data = head + body
    for (w,) in struct.iter_unpack("<Q", data[:len(data) // 8 * 8]):
        seed_ = (seed_ ^ ((w + 0x9E3779B9 + (seed_ << 6) + (seed_ >> 2)) & 0xFFFFFFFFFFFFFFFF)) & 0xFFFFFFFFFFFFFFFF
    with open(path, "wb") as f:
        f.write(struct.pack("<QQ", LEX_MAGIC, seed_) + data)


def model_spec(a, mtlite):
    return {"generators": [sha256(p) for p in (os.path.join(REF, "make_ssru_checkpoint.py"),
                                                os.path.join(REF, "marian_export.py"), mtlite, __file__)],
            "lex": [a.lex_first, a.lex_best]}


def ensure_models(a, mtlite):
    """{model: {mtlite, marian_bin, vocab, shortlist (lex path or None), commands}}."""
    out = {}
    demo_dir = os.path.join(a.work_dir, "demo-marian")
    if "demo" in a.models:
        cmd = [PY, os.path.join(REF, "marian_export.py"), DEMO, demo_dir, "--format", "bin"]
        run(cmd, "marian_export.py (demo)")
        out["demo"] = {"mtlite": os.path.join(a.build_dir, "models", "demo.int8.mtlite"),
                       "marian_bin": os.path.join(demo_dir, "model.bin"), "vocab": os.path.join(demo_dir, "vocab.spm"),
                       "lex": None, "commands": [cmd]}
    if "ssru" in a.models:
        d = os.path.join(a.work_dir, "ssru")
        hf, marian = os.path.join(d, "hf"), os.path.join(d, "marian")
        lex = os.path.join(marian, f"lex.{a.lex_best}-{a.lex_first}.s2t.bin")
        nolex, final = os.path.join(d, "model.nolex.int8.mtlite"), os.path.join(d, "model.int8.mtlite")
        cmds = [[PY, os.path.join(REF, "make_ssru_checkpoint.py"), hf, "--shape", "tiny", "--decoder", "ssru",
                 "--vocab-size", "32000", "--fixed-length", "--seed", "1"],
                ["(grow source.spm / target.spm to 32,000 pieces: the 31,999 of vocab.json without <pad>, + 1)"],
                [PY, os.path.join(REF, "marian_export.py"), hf, marian, "--format", "bin", "--vocab", "spm"],
                [f"(write {os.path.basename(lex)}: firstNum {a.lex_first}, {a.lex_best} random ids per source id)"],
                [mtlite, "convert", os.path.join(marian, "model.bin"), "--vocab", os.path.join(marian, "vocab.spm"),
                 "-o", nolex, "--quantize", "int8", "--quiet"],
                [mtlite, "shortlist", "-m", nolex, "-o", final, "--lex", lex, "--top-k", str(a.lex_best),
                 "--frequent", str(a.lex_first), "-q"]]
        spec, spec_path = model_spec(a, mtlite), os.path.join(d, "bench_spec.json")
        try:
            with open(spec_path) as f:
                fresh = json.load(f) == spec and os.path.exists(final)
        except (OSError, ValueError):
            fresh = False
        if not fresh:
            log("making the SSRU student (random weights, 32k ids) and its shortlist")
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
            run(cmds[0], "make_ssru_checkpoint.py")
            with open(os.path.join(hf, "vocab.json"), encoding="utf-8") as f:
                vocab = json.load(f)
            import sentencepiece
            base = sentencepiece.SentencePieceProcessor(model_file=os.path.join(hf, "source.spm"))
            have = {base.id_to_piece(i) for i in range(base.get_piece_size())}
            extra = [p for p, _ in sorted(vocab.items(), key=lambda kv: kv[1]) if p not in have and p != "<pad>"]
            # one more piece, not in vocab.json: 32,000 Marian ids (Marian has no <pad>), the students'
            # size; Bergamot's int8 GEMM needs a multiple of 8 output rows. marian_export gives it the
            # <unk> row and a logit bias of -1e9 (never generated).
            sys.path.insert(0, REF)
            from make_random_checkpoint import _extra_piece
            i = 0
            while _extra_piece(i) in vocab or _extra_piece(i) in have:
                i += 1
            extra.append(_extra_piece(i))
            for side in ("source.spm", "target.spm"):
                grow_spm(os.path.join(hf, side), os.path.join(hf, side + ".grown"), extra)
            for side in ("source.spm", "target.spm"):
                os.replace(os.path.join(hf, side + ".grown"), os.path.join(hf, side))
            grown = sentencepiece.SentencePieceProcessor(model_file=os.path.join(hf, "source.spm"))
            if grown.get_piece_size() != len(vocab):
                raise SetupError(f"grown SentencePiece model: {grown.get_piece_size()} pieces, want {len(vocab)}")
            run(cmds[2], "marian_export.py (ssru)")
            write_lex(lex, grown.get_piece_size(), a.lex_first, a.lex_best)
            run(cmds[4], "mtlite convert (ssru)")
            run(cmds[5], "mtlite shortlist --lex (ssru)")
            with open(spec_path, "w") as f:
                json.dump(spec, f)
        out["ssru"] = {"mtlite": final, "marian_bin": os.path.join(marian, "model.bin"),
                       "vocab": os.path.join(marian, "vocab.spm"), "lex": lex, "commands": cmds}
    return out


# ----------------------------------------------------------------------------- runs


def mtlite_opts(a, m):
    return (["--shortlist"] if m["lex"] else []) + ["--ratio", str(a.length_factor), "--offset", "1"]


def engine_cmd(a, engine, m, pages, out, overhead=0):
    if engine == "mtlite-native":
        return [PY, os.path.join(TEXT, "native_text.py"), "--model", m["mtlite"], "--page", pages["mtlite"],
                "--batch", str(a.batch), "--passes", str(a.passes), "--output", out,
                "--python-dir", os.path.join(a.build_dir, "python")] + mtlite_opts(a, m) + \
               (["--overhead", str(overhead)] if overhead else [])
    if engine in ("mtlite-wasm-node", "mtlite-wasm-chromium"):
        script = "wasm_text.mjs" if engine == "mtlite-wasm-node" else "chromium_text.mjs"
        return ["node", os.path.join(TEXT, script), "-m", m["mtlite"], "--page", pages["mtlite"], "--batch",
                str(a.batch), "--passes", str(a.passes), "--output", out] + mtlite_opts(a, m)
    if engine == "bergamot-wasm-node":
        return ["node", os.path.join(TEXT, "bergamot_text.mjs"), "--model", m["marian_bin"], "--vocab", m["vocab"],
                "--page", pages["bergamot"], "--precision", "int8shiftAll", "--max-length-factor",
                str(a.length_factor), "--passes", str(a.passes), "--output", out] + \
               (["--shortlist", m["lex"]] if m["lex"] else [])
    cli_opts = (["--shortlist"] if m["lex"] else []) + ["--max-length-ratio", str(a.length_factor),
                                                         "--max-length-offset", "1"]
    if engine == "mtlite-cli":
        return [os.path.join(a.build_dir, "mtlite"), "translate", "--html", "-q", "-m", m["mtlite"],
                "--batch", str(a.batch)] + cli_opts
    if engine == "mtlite-node-cli":
        return ["node", os.path.join(ROOT, "web", "mtlite.mjs"), "translate", "--html", "-q", "-m", m["mtlite"],
                "--batch", str(a.batch)] + cli_opts
    raise ValueError(engine)


def run_one(a, engine, model, m, pages, rep, overhead=0):
    tag = f"{model}.{engine}.r{rep}" + (".overhead" if overhead else "")
    out = os.path.join(a.runs_dir, tag + ".html")
    cmd = engine_cmd(a, engine, m, pages, out, overhead)
    l1 = bc.load1()
    rec = {"model": model, "engine": engine, "rep": rep, "load1": l1}
    if engine.endswith("-cli"):  # reads the page on stdin, writes the HTML on stdout
        import subprocess
        t0 = time.perf_counter()
        with open(pages["mtlite"], "rb") as fi, open(out, "wb") as fo, open(out + ".err", "wb") as fe:
            p = subprocess.Popen(cmd, stdin=fi, stdout=fo, stderr=fe, cwd=ROOT, env=bc.child_env(1))
            _, status, ru = os.wait4(p.pid, 0)
        rc, wall, stdout = os.waitstatus_to_exitcode(status), time.perf_counter() - t0, ""
    else:
        rc, stdout, ru, wall = bc.run_child(cmd, bc.child_env(1), a.timeout, os.path.join(a.runs_dir, tag))
    rec.update({"rc": rc, "wall_s": round(wall, 4), "cpu_s": round(ru.ru_utime + ru.ru_stime, 4),
                "maxrss_kb": ru.ru_maxrss, "output": out})
    if engine.endswith("-cli"):
        if rc != 0:
            rec["error"] = f"exit {rc}: {open(out + '.err', errors='replace').read()[-400:]}"
        return rec
    try:
        js = json.loads(stdout.strip().splitlines()[-1])
        rec["json"] = js
    except (ValueError, IndexError):
        err = open(os.path.join(a.runs_dir, tag + ".err"), errors="replace").read()[-600:]
        rec["error"] = f"exit {rc}: {err}"
        return rec
    if rc != 0 or js.get("failed"):
        rec["error"] = f"exit {rc}, {js.get('failed')} failed sentences"
    elif js.get("page_errors"):
        rec["error"] = f"page errors: {js['page_errors']}"
    return rec


def read(path):
    with open(path, "rb") as f:
        return f.read()


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def load_s(js):
    return sum(js.get(k, 0) for k in ("load_s", "module_s", "model_s", "create_s"))


def summarize(a, records, words):
    rows, per_rep = {}, {}
    for model in a.models:
        for engine in a.engines:
            rs = [r for r in records if (r["model"], r["engine"]) == (model, engine) and "json" in r
                  and "error" not in r and not r.get("overhead")]
            if not rs:
                rows[f"{model}|{engine}"] = {"model": model, "engine": engine, "runs": 0}
                continue
            t = [r["json"]["runs"][-1] for r in rs]
            per_rep.update({(model, engine, r["rep"]): r["json"]["runs"][-1] for r in rs})
            cpu = [r["json"]["cpu_runs"][-1] for r in rs if r["json"].get("cpu_runs")]
            js = rs[-1]["json"]
            rows[f"{model}|{engine}"] = {
                "model": model, "engine": engine, "runs": len(rs), "translate_s": med(t), "translate_s_runs": t,
                "words_per_s": words / med(t), "first_pass_s": med([r["json"]["runs"][0] for r in rs]),
                "cpu_s": med(cpu), "words_per_cpu_s": words / med(cpu) if cpu else None,
                "load_s": med([load_s(r["json"]) for r in rs]),
                "load_parts": {k: med([r["json"].get(k) for r in rs]) for k in
                               ("load_s", "module_s", "model_s", "create_s", "browser_s") if k in js},
                "process_wall_s": med([r["wall_s"] for r in rs]),
                "maxrss_mb": med([r["json"].get("vm_hwm_kb") for r in rs]) / 1024 if js.get("vm_hwm_kb") else None,
                "sentences": js.get("sentences"), "kernel_table": js.get("kernel_table") or js.get("precision"),
                "browser": js.get("browser"), "load1_runs": [r["load1"] for r in rs]}
    ratios = {}
    for model in a.models:
        for x, y, goal in RATIOS:
            xs = [per_rep[(model, y, rep)] / per_rep[(model, x, rep)] for rep in range(a.reps)
                  if (model, x, rep) in per_rep and (model, y, rep) in per_rep]
            ratios[f"{model}|{x}/{y}"] = {"median": med(xs), "min": min(xs) if xs else None,
                                          "max": max(xs) if xs else None, "n": len(xs), "goal": goal}
    overhead = {}
    for model in a.models:
        rs = [r for r in records if r["model"] == model and r.get("overhead") and "json" in r and "error" not in r]
        if not rs:
            continue
        tm = {k: sum((r["json"]["overhead"]["times"][k] for r in rs), []) for k in ("text", "batch", "batch_align")}
        cm = {k: sum((r["json"]["overhead"]["cpu_times"][k] for r in rs), []) for k in ("text", "batch", "batch_align")}
        paired_cpu = [t / b - 1 for t, b in zip(cm["text"], cm["batch"])]
        paired = [t / b - 1 for t, b in zip(tm["text"], tm["batch"])]
        paired_al = [t / b - 1 for t, b in zip(tm["text"], tm["batch_align"])]
        o = rs[-1]["json"]["overhead"]
        overhead[model] = {
            "rounds": len(tm["text"]), "text_s": med(tm["text"]), "batch_s": med(tm["batch"]),
            "batch_align_s": med(tm["batch_align"]),
            "overhead_pct": 100 * (med(tm["text"]) / med(tm["batch"]) - 1),
            "overhead_pct_paired": 100 * med(paired), "overhead_pct_paired_range": [100 * min(paired), 100 * max(paired)],
            "overhead_vs_align_pct": 100 * (med(tm["text"]) / med(tm["batch_align"]) - 1),
            "overhead_vs_align_pct_paired": 100 * med(paired_al),
            "alignment_pct": 100 * (med(tm["batch_align"]) / med(tm["batch"]) - 1),
            "cpu_text_s": med(cm["text"]), "cpu_batch_s": med(cm["batch"]), "cpu_batch_align_s": med(cm["batch_align"]),
            "cpu_overhead_pct": 100 * (med(cm["text"]) / med(cm["batch"]) - 1),
            "cpu_overhead_pct_paired": 100 * med(paired_cpu),
            "cpu_overhead_pct_paired_range": [100 * min(paired_cpu), 100 * max(paired_cpu)],
            "cpu_overhead_vs_align_pct": 100 * (med(cm["text"]) / med(cm["batch_align"]) - 1),
            "cpu_times": cm,
            "sentences": rs[-1]["json"]["sentences"], "pieces": rs[-1]["json"]["pieces"],
            "target_tokens": o["target_tokens"], "same_translations": o["same_translations"],
            "times": tm, "load1_runs": [r["load1"] for r in rs]}
    return {"rows": rows, "ratios": ratios, "overhead": overhead}


def check_outputs(a, records, failures):
    """mtlite's HTML: one text per model over engines and repetitions."""
    for model in a.models:
        outs = {}
        for r in records:
            if r["model"] == model and r["engine"] != "bergamot-wasm-node" and "error" not in r:
                outs.setdefault(read(r["output"]), []).append(f"{r['engine']} r{r['rep']}"
                                                               + (" (overhead)" if r.get("overhead") else ""))
        if len(outs) > 1:
            groups = sorted(outs.values(), key=len, reverse=True)
            failures.append(f"{model}: mtlite's HTML differs between runs: " +
                            " | ".join(", ".join(g) for g in groups))
    return failures


# ----------------------------------------------------------------------------- report


def write_report(a, meta, summary, records, failures):
    os.makedirs(a.out_dir, exist_ok=True)
    res = {"meta": meta, "summary": summary, "failures": failures,
           "runs": [{k: v for k, v in r.items() if k != "output"} for r in records]}
    with open(os.path.join(a.out_dir, "text.json"), "w") as f:
        json.dump(bc.repo_relative(res), f, indent=1, default=str)
    L = [f"# The text layer on a web page ({meta['date']})", "",
         f"Generated by `bench/text_bench.py` (git {meta['git']}{', sources modified' if meta['dirty_sources'] else ''})."
         f" {meta['cpu']}, {meta['cpus']} CPUs ({meta['cpu_flags']}); node {meta['node']}, {meta['browser'] or 'Chromium'}."
         f" Page: `{meta['page']}`, {meta['words']:,} words of text content ({meta['bytes']:,} bytes), translated as "
         f"HTML, greedy, one thread. mtlite: max_batch {a.batch} (`mtlite translate --html`'s default `--batch 1`): the "
         "text layer gives the model one piece per call; Bergamot: the page as one text, its own batching (sentences "
         "sorted by length, mini-batch-words 4096). Output cap: "
         f"{a.length_factor} x the source tokens in both engines. {a.reps} repetitions, engine order rotating; each "
         f"process translates the page {a.passes} time(s) after loading, the last pass timed. 1-minute load average "
         f"{fmt(meta['load1'][0], 2)} / {fmt(meta['load1'][1], 2)} / {fmt(meta['load1'][2], 2)} (min / median / max "
         f"before the runs); {meta['elapsed_s']} s in all.", ""]
    if meta["load1"][2] and meta["load1"][2] > 1.5:
        L += ["**A shared machine** (load above 1.5 with one benchmark process): absolute figures are low and noisy; "
              "the ratios come from runs minutes apart.", ""]
    L += ["| model | engine | words/s | translate s | first pass s | CPU s | load s | process wall s | peak RSS MB | sentences |",
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for model in a.models:
        for engine in a.engines:
            r = summary["rows"][f"{model}|{engine}"]
            if not r["runs"]:
                L.append(f"| {model} | {engine} | FAILED | | | | | | | |")
                continue
            L.append(f"| {model} | {engine}{' (' + r['kernel_table'] + ')' if r['kernel_table'] else ''} | {fmt(r['words_per_s'])} | {fmt(r['translate_s'], 3)} | "
                     f"{fmt(r['first_pass_s'], 3)} | {fmt(r['cpu_s'], 3)} | {fmt(r['load_s'], 3)} | "
                     f"{fmt(r['process_wall_s'], 2)} | {fmt(r['maxrss_mb'])} | {r['sentences']} |")
    L += ["", "words/s: the page's words / the median timed pass. CPU s: the process's CPU time over that pass (not "
          "measured inside Chromium). Load: module + model + translator (Bergamot: its int8 quantization included; "
          "Chromium: the fetches of module and model included, the browser's start not). Process wall: the whole "
          "child (Chromium: browser start included). Peak RSS: the child process's VmHWM (node: V8 included; not given for Chromium). "
          "Sentences: as each engine cut the page.", "",
          "## Ratios (speed, paired per repetition)", "", "| model | ratio | median | min…max | goal |",
          "|---|---|---:|---|---|"]
    for model in a.models:
        for x, y, goal in RATIOS:
            r = summary["ratios"][f"{model}|{x}/{y}"]
            rng = f"{fmt(r['min'], 2)}…{fmt(r['max'], 2)}" if r["n"] else "–"
            L.append(f"| {model} | {x} / {y} | {fmt(r['median'], 2, 'x')} | {rng} | {goal} |")
    L += ["", "## Text-layer overhead (mtlite native, Python API)", "",
          "translate_text(page, html=True) against translate_batch of the same sentences (`r.sentences[i].source`, "
          f"max_batch {a.batch}, the same caps and shortlist), on one translator; rounds interleaved, order rotating.", "",
          "| model | time | rounds | text s | batch s | batch + alignments s | overhead vs batch | paired (min…max) | "
          "vs batch + alignments | target tokens | same translations |",
          "|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|"]
    for model, o in summary["overhead"].items():
        for kind, p in (("wall", ""), ("CPU", "cpu_")):
            lo, hi = o[f"{p}overhead_pct_paired_range"]
            L.append(f"| {model} | {kind} | {o['rounds']} | {o[p + 'text_s']:.4f} | {o[p + 'batch_s']:.4f} | "
                     f"{o[p + 'batch_align_s']:.4f} | {o[p + 'overhead_pct']:+.2f} % | "
                     f"{o[p + 'overhead_pct_paired']:+.2f} % ({lo:+.1f}…{hi:+.1f}) | "
                     f"{o[p + 'overhead_vs_align_pct']:+.2f} % | {o['target_tokens']:,} | "
                     f"{o['same_translations']} / {o['sentences']} |")
    L += ["", "Overhead = (text − batch) / batch of the medians; paired: the median of the per-round ratios. CPU: the "
          "process's CPU time of each call (on a shared machine the steadier measure: it leaves out the waiting "
          "for a core). Goal: overhead ≤ 5 %. \"vs batch + alignments\": against translate_batch(return_alignments=True), which "
          "computes the cross-attention alignment HTML needs: what remains is the text layer's own work (parsing, "
          "splitting, markup placement).", "", "## Models", ""]
    for model in a.models:
        L.append(f"- `{model}`: {MODELS[model]}: " + "; ".join(
            "`" + " ".join(bc.repo_relative(c)) + "`" for c in meta["model_commands"][model]))
    L += ["", "Checks: every run exits 0 with no failed sentence; mtlite's HTML byte-identical across mtlite native "
          "(Python API, `mtlite translate --html`), mtlite WebAssembly (Node API, `node web/mtlite.mjs translate "
          "--html`, Chromium) and every repetition; the batch translations equal the text layer's sentences.", ""]
    L += bc.md_failures(failures)
    with open(os.path.join(a.out_dir, "text.md"), "w") as f:
        f.write("\n".join(L) + "\n")


def main(argv=None):
    a = parse_args(argv)
    mtlite = os.path.join(a.build_dir, "mtlite")
    need = [mtlite, os.path.join(a.build_dir, "models", "demo.int8.mtlite"), os.path.join(a.build_dir, "python", "mtlite"),
            os.path.join(ROOT, "web", "dist", "mtlite.wasm"),
            os.path.join(REF, "bergamot", "node_modules", "@browsermt", "bergamot-translator"),
            os.path.join(ROOT, "tests", "wasm", "node_modules", "puppeteer-core")]
    t_start = time.time()
    try:
        missing = [p for p in need if not os.path.exists(p)]
        if missing:
            raise SetupError("missing: " + ", ".join(bc.repo_relative(missing)))
        os.makedirs(a.work_dir, exist_ok=True)
        a.runs_dir = os.path.join(a.work_dir, "smoke-runs" if a.smoke else "runs")
        shutil.rmtree(a.runs_dir, ignore_errors=True)
        os.makedirs(a.runs_dir)
        pages, words, nbytes = make_pages(a)
        models = ensure_models(a, mtlite)
    except SetupError as e:
        log(str(e))
        return 2
    started = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    log(f"{words} words, models {a.models}, engines {a.engines}, {a.reps} reps; {run(['uptime'], 'uptime').strip()}")
    t0 = time.time()
    records, failures = [], []
    for rep in range(a.reps):
        for mi, model in enumerate(a.models):
            k = (rep + mi) % len(a.engines)
            jobs = a.engines[k:] + a.engines[:k]
            jobs = jobs[:2] + ["overhead"] + jobs[2:] + ["mtlite-cli"] + (["mtlite-node-cli"] if rep == 0 else [])
            for engine in jobs:
                if engine == "overhead":
                    if not a.overhead_rounds:
                        continue
                    r = run_one(a, "mtlite-native", model, models[model], pages, rep, a.overhead_rounds)
                    r["overhead"] = True
                else:
                    r = run_one(a, engine, model, models[model], pages, rep)
                records.append(r)
                if "error" in r:
                    failures.append(f"{model} {engine} rep {rep}: {r['error']}")
                js = r.get("json", {})
                log(f"rep {rep} {model} {engine}: wall {r['wall_s']:.2f} s" +
                    (f", timed pass {js['runs'][-1]:.3f} s" if js.get("runs") else ""))
    for r in records:
        o = r.get("json", {}).get("overhead")
        if o and o["same_translations"] != r["json"]["sentences"]:
            failures.append(f"{r['model']} rep {r['rep']}: translate_batch differs from the text layer on "
                            f"{r['json']['sentences'] - o['same_translations']} of {r['json']['sentences']} sentences")
    check_outputs(a, records, failures)
    summary = summarize(a, records, words)
    loads = [r["load1"] for r in records]
    chromium = next((r["json"].get("browser") for r in records if r.get("json", {}).get("browser")), None)
    flags = bc.cpu_flags()
    meta = {"date": started, "git": bc.git_rev(), "dirty_sources": bc.git_dirty_sources(), "cpu": bc.cpu_name(),
            "cpus": os.cpu_count(), "cpu_flags": ", ".join(f for f in ("avx2", "avx512f", "avx512_vnni", "avx_vnni")
                                                         if f in flags) or "no AVX2",
            "node": run(["node", "--version"], "node").strip(), "browser": chromium,
            "page": bc.repo_relative(pages["mtlite"]), "words": words, "bytes": nbytes, "reps": a.reps,
            "passes": a.passes, "batch": a.batch, "length_factor": a.length_factor,
            "lex": {"first_num": a.lex_first, "best_num": a.lex_best}, "smoke": a.smoke,
            "load1": [min(loads), med(loads), max(loads)] if loads else [None] * 3,
            "elapsed_s": round(time.time() - t0), "total_s": round(time.time() - t_start),
            "binaries": {bc.repo_relative(p): {"sha256": sha256(p), "mtime": time.strftime(
                "%Y-%m-%dT%H:%M:%S", time.localtime(os.path.getmtime(p)))} for p in
                (mtlite, os.path.join(ROOT, "web", "dist", "mtlite.wasm"))},
            "model_commands": {m: models[m]["commands"] for m in a.models}}
    write_report(a, meta, summary, records, failures)
    return bc.finish(os.path.join(a.out_dir, "text.md"), log,
                     f"{len(records)} runs in {time.time() - t0:.0f} s -> {bc.repo_relative(a.out_dir)}", failures)


if __name__ == "__main__":
    sys.exit(main())
