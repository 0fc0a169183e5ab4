#!/usr/bin/python3
"""PyTorch peers for the end-to-end benchmark: the PyTorch MarianMT reference, timed.

Run with Debian's /usr/bin/python3 (python3-torch, python3-sentencepiece; no transformers).

The model, the search and the tokenization are those of tests/reference/marian_ref.py, the
reference the goldens and the parity tests use (HF MarianMTModel forward pass, transformers 4.2x
generate semantics; see its docstring), so the peer's float32 output is the reference's:
  * MarianRef: eager PyTorch, the encoder once per batch, an incremental decoder with a K/V cache
    (cross-attention K/V computed once), greedy and beam search (HF BeamSearchScorer,
    early_stopping=False, length penalty 1.0); finished sentences leave the batch;
  * TextTools: HF MarianTokenizer (source.spm pieces -> vocab.json ids + </s>; decode skips the
    special ids, U+2581 -> ' ', strips).
max length: --max-length N generated tokens including </s> (HF max_length = N + 1), </s> forced
at the limit, pad never generated -- the same as mtlite's TranslateOptions.max_length.
Real HF generate adds Python overhead (ModelOutput objects, logits processor lists, stopping
criteria; finished rows of a greedy batch keep running) on every step, so it is at best as fast
as this.

Variants: fp32 and int8 = MarianRef.quantize_int8: torch.quantization.quantize_dynamic(qint8) of
every projection and the output projection (embeddings stay fp32).

CLI (same JSON fields as bench/e2e_bench):
  torch_marian.py --variant fp32|int8 --input FILE --output FILE [--batch N] [--beam N]
                  [--threads N] [--max-length N] [--repeat R] [--no-warmup] [--ids-output FILE]
                  [--model-dir models/marian-en-de-tiny]
  --configs 1:1:8,16:4 instead of --batch/--beam runs several configurations on one loaded model
  (model load and quantization paid once; bench/run_shapes.py), one JSON line each, outputs to
  --output / --ids-output patterns with {batch} and {beam}. Any HF MarianMT checkpoint directory
  MarianRef loads works (e.g. make_random_checkpoint.py presets demo, tiny32k, base).
"""
import argparse
import io
import json
import os
import resource
import sys
import time


def _early_threads(argv):
    for i, arg in enumerate(argv):
        if arg == "--threads" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--threads="):
            return arg.split("=", 1)[1]
    return "1"


# Thread pools are sized when torch (OpenMP) and OpenBLAS load: set them before the import.
# Debian's torch calls the system BLAS (OpenBLAS, pthread build) for fp32 matmuls, whose pool
# ignores torch.set_num_threads: OPENBLAS_NUM_THREADS must match --threads. PASSIVE keeps
# OpenMP workers from spinning on the shared machine.
_THREADS = _early_threads(sys.argv[1:]) if __name__ == "__main__" else "1"
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, _THREADS)
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "reference"))
from marian_ref import MarianRef, TextTools  # noqa: E402


# ----------------------------------------------------------------------------- the peer


def load_model(model_dir, variant):
    """MarianRef of model_dir, float32 or dynamically quantized to int8."""
    if variant not in ("fp32", "int8"):
        raise ValueError(f"unknown variant {variant}")
    ref = MarianRef(model_dir)
    if variant == "int8":
        ref.quantize_int8()
    return ref


def state_dict_bytes(ref):
    buf = io.BytesIO()
    torch.save(ref.tensors(), buf)
    return buf.tell()


# ----------------------------------------------------------------------------- benchmark CLI


def percentile(v, p):
    if not v:
        return 0.0
    s = sorted(v)
    pos = p / 100.0 * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def status_kb(key):
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def loaded_libs(pattern):
    """Shared libraries mapped into this process whose file name contains `pattern`."""
    libs = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1] if len(line.split()) >= 6 else ""
                if pattern in os.path.basename(path).lower():
                    libs.add(os.path.realpath(path))
    except OSError:
        pass
    return sorted(libs)


def parse_configs(s):
    """'1:1:8,16:4' -> [(batch, beam, sentences or 0 = all), ...]"""
    out = []
    try:
        for part in s.split(","):
            v = [int(x) for x in part.split(":")]
            if len(v) not in (2, 3):
                raise ValueError
            out.append((v[0], v[1], v[2] if len(v) == 3 else 0))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected BATCH:BEAM[:SENTENCES][,...], got '{s}'")
    if not out or min(min(c[:2]) for c in out) < 1 or min(c[2] for c in out) < 0:
        raise argparse.ArgumentTypeError(f"batch and beam must be >= 1, sentences >= 0 in '{s}'")
    return out


def run_config(a, model, tok, lines, batch, beam, max_new):
    """One (batch, beam) configuration: warm-up, --repeat timed passes; returns (result dict,
    texts, ids) of the last pass."""
    n = len(lines)

    def translate(chunk):
        srcs = [tok.encode(l) for l in chunk]
        if beam == 1:
            res = [ids for ids, _ in model.greedy(srcs, max_new)]
        else:
            res = [hyps[0][0] for hyps in model.beam(srcs, beam, max_new)]
        # generated tokens: the ids and the final </s> (every hypothesis ends with one)
        return [(tok.decode(ids), ids, len(ids) + 1) for ids in res]

    with torch.inference_mode():
        if not a.no_warmup:
            translate(lines[:batch])
        totals, lat = [], []
        texts = ids = None
        first = None
        tokens = 0
        for r in range(a.repeat):
            tot = 0.0
            tokens = 0
            out = []
            for i0 in range(0, n, batch):
                chunk = lines[i0:i0 + batch]
                t1 = time.perf_counter()
                res = translate(chunk)
                dt = time.perf_counter() - t1
                tot += dt
                lat.append(dt)
                out += res
                tokens += sum(nt for _, _, nt in res)
            totals.append(tot)
            texts = [t for t, _, _ in out]
            ids = [i for _, i, _ in out]
            if first is None:
                first = texts
    total_s = percentile(totals, 50)
    res = {
        "batch": batch, "beam": beam, "threads": a.threads, "max_length": max_new, "repeat": a.repeat,
        "warmup": not a.no_warmup,
        "sentences": n, "calls_per_run": (n + batch - 1) // batch, "target_tokens": tokens,
        "total_s": total_s, "total_s_runs": totals,
        "sentences_per_s": n / total_s, "target_tokens_per_s": tokens / total_s,
        "latency_p50_ms": percentile(lat, 50) * 1e3, "latency_p90_ms": percentile(lat, 90) * 1e3,
        "latency_max_ms": max(lat) * 1e3, "deterministic": texts == first,
    }
    return res, texts, ids


def write_outputs(path, ids_path, texts, ids):
    with open(path, "w", encoding="utf-8") as f:
        for t in texts:
            f.write(t + "\n")
    if ids_path:
        with open(ids_path, "w") as f:
            for v in ids:
                f.write(" ".join(map(str, v)) + "\n")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model-dir", default=os.path.join(ROOT, "models", "marian-en-de-tiny"))
    ap.add_argument("--variant", choices=["fp32", "int8"], default="fp32")
    ap.add_argument("--input", required=True)
    ap.add_argument("--output", required=True,
                    help="translations; with --configs a pattern with {batch} and {beam}")
    ap.add_argument("--ids-output", help="target ids; with --configs a pattern with {batch} and {beam}")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--beam", type=int, default=1)
    ap.add_argument("--configs", type=parse_configs, default=None,
                    help="BATCH:BEAM[:SENTENCES][,...]: run these configurations one after the other on one "
                         "loaded model (instead of --batch/--beam) on the first SENTENCES lines (default all), "
                         "one JSON line each")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--max-length", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--no-warmup", action="store_true")
    a = ap.parse_args(argv)
    for name in ("batch", "beam", "threads", "max_length", "repeat"):
        if getattr(a, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be >= 1")
    configs = a.configs or [(a.batch, a.beam, 0)]
    if a.configs:
        for pat in (a.output, a.ids_output or "{batch}{beam}"):
            if "{batch}" not in pat or "{beam}" not in pat:
                ap.error("with --configs, --output and --ids-output must contain {batch} and {beam}")
    torch.set_num_threads(a.threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass

    t0 = time.perf_counter()
    model = load_model(a.model_dir, a.variant)
    tok = TextTools(a.model_dir)
    load_s = time.perf_counter() - t0
    max_new = min(a.max_length, model.dec_pos.shape[0])
    rss_after_load = status_kb("VmRSS")

    with open(a.input, encoding="utf-8") as f:
        lines = [l.rstrip("\n").rstrip("\r") for l in f]
    if not lines:
        print(f"torch_marian.py: {a.input} has no lines", file=sys.stderr)
        return 1

    safetensors_bytes = os.path.getsize(os.path.join(a.model_dir, "model.safetensors"))
    sd_bytes = state_dict_bytes(model) if a.variant == "int8" else safetensors_bytes
    all_deterministic = True
    for batch, beam, nlines in configs:
        res, texts, ids = run_config(a, model, tok, lines[:nlines] if nlines else lines, batch, beam, max_new)
        fill = {"batch": batch, "beam": beam}
        write_outputs(a.output.format(**fill) if a.configs else a.output,
                      (a.ids_output.format(**fill) if a.configs else a.ids_output) if a.ids_output else None,
                      texts, ids)
        all_deterministic = all_deterministic and res["deterministic"]
        head = {
            "engine": "pytorch", "model": a.model_dir, "weight_type": a.variant,
            "kernels": f"torch {torch.__version__}" + (f" quantized engine {torch.backends.quantized.engine}"
                                                        if a.variant == "int8" else ""),
            "blas": loaded_libs("blas"),
            "env_threads": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")},
        }
        tail = {
            "load_s": load_s, "model_file_bytes": safetensors_bytes, "state_dict_bytes": sd_bytes,
            "rss_after_create_kb": rss_after_load,
            "ru_maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "vm_hwm_kb": status_kb("VmHWM"),
        }
        print(json.dumps(dict(head, **res, **tail)), flush=True)
    return 0 if all_deterministic else 3


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
