#!/usr/bin/python3
"""PyTorch peers for the end-to-end benchmark: HF MarianMTModel as eager nn.Modules.

Run with Debian's /usr/bin/python3 (python3-torch 1.13, python3-sentencepiece; no transformers).

The model mirrors transformers 4.2x `MarianMTModel` module for module -- nn.Embedding (shared),
MarianAttention with nn.Linear q/k/v/out projections, nn.LayerNorm, post-norm encoder/decoder
layers, a tied `lm_head` nn.Linear sharing the embedding weight, `final_logits_bias` -- and
`generate()` is reproduced the way HF runs it:
  * the encoder runs once per batch; for beam search its output is expanded to batch*beam rows;
  * the decoder is incremental: self-attention K/V are cached and grown with torch.cat
    (HF `past_key_values`), the cross-attention K/V are computed at the first step and reused;
    beam search reorders the self-attention cache with index_select (Marian `_reorder_cache`;
    the cross-attention entries are not reordered);
  * greedy (HF greedy_search): NoBadWords (pad) + ForcedEOS at the last step, argmax; finished
    rows keep running with pad tokens until every sentence of the batch is finished;
  * beam (HF beam_search + BeamSearchScorer, early_stopping=False, length_penalty 1.0):
    logits[pad] = -inf (Marian adjust_logits_during_generation), log_softmax, bad words,
    ForcedEOS, + beam scores, top-2K over K*V, hypotheses of finished sentences kept.
max length: --max-length N generated tokens including </s> (HF max_length = N + 1), </s> forced
at the limit, pad never generated -- the same as mtlite's TranslateOptions.max_length.
This is a lean re-implementation: real HF adds Python overhead (ModelOutput objects, logits
processor lists, stopping criteria) on every step, so it is at best as fast as this.

Variants: fp32 (eager) and int8 = torch.quantization.quantize_dynamic(model, {nn.Linear},
dtype=torch.qint8) (every projection and the lm_head; embeddings stay fp32).

Tokenization as HF MarianTokenizer: sentencepiece pieces of source.spm -> vocab.json ids (unk
fallback) + </s>; decoding: pieces of the ids except the special ones, '\u2581' -> ' ', strip.

CLI (same JSON fields as bench/e2e_bench):
  torch_marian.py --variant fp32|int8 --input FILE --output FILE [--batch N] [--beam N]
                  [--threads N] [--max-length N] [--repeat R] [--no-warmup] [--ids-output FILE]
                  [--model-dir models/marian-en-de-tiny]
  --configs 1:1:8,16:4 instead of --batch/--beam runs several configurations on one loaded model
  (model load and quantization paid once; bench/run_shapes.py), one JSON line each, outputs to
  --output / --ids-output patterns with {batch} and {beam}. Any HF MarianMT checkpoint directory
  with a shared vocabulary and tied output projection loads (e.g. make_random_checkpoint.py
  presets demo, tiny32k, base).
"""
import argparse
import io
import json
import math
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
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "reference"))
from marian_ref import marian_sinusoid, read_safetensors  # noqa: E402

torch.set_grad_enabled(False)

_ACTS = {"swish": F.silu, "silu": F.silu, "relu": F.relu, "gelu": F.gelu,
         "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh")}


# ----------------------------------------------------------------------------- modules (HF layout)


class MarianAttention(nn.Module):
    def __init__(self, d, heads, is_decoder):
        super().__init__()
        self.d, self.h, self.hd = d, heads, d // heads
        self.scaling = self.hd ** -0.5
        self.is_decoder = is_decoder
        self.q_proj = nn.Linear(d, d)
        self.k_proj = nn.Linear(d, d)
        self.v_proj = nn.Linear(d, d)
        self.out_proj = nn.Linear(d, d)

    def _shape(self, t, seq, bsz):
        return t.view(bsz, seq, self.h, self.hd).transpose(1, 2).contiguous()

    def forward(self, x, key_value_states=None, past=None, mask=None):
        bsz, tgt_len, _ = x.shape
        q = self.q_proj(x) * self.scaling
        if key_value_states is not None:          # cross-attention
            if past is not None:
                k, v = past
            else:
                k = self._shape(self.k_proj(key_value_states), -1, bsz)
                v = self._shape(self.v_proj(key_value_states), -1, bsz)
        elif past is not None:                    # incremental self-attention
            k = torch.cat([past[0], self._shape(self.k_proj(x), -1, bsz)], dim=2)
            v = torch.cat([past[1], self._shape(self.v_proj(x), -1, bsz)], dim=2)
        else:
            k = self._shape(self.k_proj(x), -1, bsz)
            v = self._shape(self.v_proj(x), -1, bsz)
        new_past = (k, v) if self.is_decoder else None
        shp = (bsz * self.h, -1, self.hd)
        q = self._shape(q, tgt_len, bsz).view(*shp)
        k = k.reshape(*shp)
        v = v.reshape(*shp)
        src_len = k.shape[1]
        w = torch.bmm(q, k.transpose(1, 2))
        if mask is not None:
            w = (w.view(bsz, self.h, tgt_len, src_len) + mask).view(bsz * self.h, tgt_len, src_len)
        w = F.softmax(w, dim=-1)
        o = torch.bmm(w, v)
        o = o.view(bsz, self.h, tgt_len, self.hd).transpose(1, 2).reshape(bsz, tgt_len, self.d)
        return self.out_proj(o), new_past


class MarianEncoderLayer(nn.Module):
    def __init__(self, d, heads, ffn, act, eps):
        super().__init__()
        self.self_attn = MarianAttention(d, heads, False)
        self.self_attn_layer_norm = nn.LayerNorm(d, eps=eps)
        self.fc1 = nn.Linear(d, ffn)
        self.fc2 = nn.Linear(ffn, d)
        self.final_layer_norm = nn.LayerNorm(d, eps=eps)
        self.act = act

    def forward(self, x, mask):
        r = x
        x, _ = self.self_attn(x, mask=mask)
        x = self.self_attn_layer_norm(r + x)
        r = x
        x = self.fc2(self.act(self.fc1(x)))
        return self.final_layer_norm(r + x)


class MarianDecoderLayer(nn.Module):
    def __init__(self, d, heads, ffn, act, eps):
        super().__init__()
        self.self_attn = MarianAttention(d, heads, True)
        self.self_attn_layer_norm = nn.LayerNorm(d, eps=eps)
        self.encoder_attn = MarianAttention(d, heads, True)
        self.encoder_attn_layer_norm = nn.LayerNorm(d, eps=eps)
        self.fc1 = nn.Linear(d, ffn)
        self.fc2 = nn.Linear(ffn, d)
        self.final_layer_norm = nn.LayerNorm(d, eps=eps)
        self.act = act

    def forward(self, x, enc, enc_mask, past):
        r = x
        x, self_kv = self.self_attn(x, past=past[:2] if past is not None else None)
        x = self.self_attn_layer_norm(r + x)
        r = x
        x, cross_kv = self.encoder_attn(x, key_value_states=enc, past=past[2:] if past is not None else None,
                                        mask=enc_mask)
        x = self.encoder_attn_layer_norm(r + x)
        r = x
        x = self.fc2(self.act(self.fc1(x)))
        return self.final_layer_norm(r + x), self_kv + cross_kv


class MarianSinusoidalPositionalEmbedding(nn.Embedding):
    def forward(self, seq_len, past_len=0):
        pos = torch.arange(past_len, past_len + seq_len, dtype=torch.long)
        return super().forward(pos)


class MarianEncoder(nn.Module):
    def __init__(self, cfg, shared, act):
        super().__init__()
        d = cfg["d_model"]
        self.embed_tokens = shared
        self.embed_scale = math.sqrt(d) if cfg.get("scale_embedding", False) else 1.0
        self.embed_positions = MarianSinusoidalPositionalEmbedding(cfg.get("max_position_embeddings", 512), d)
        self.layers = nn.ModuleList(MarianEncoderLayer(d, cfg["encoder_attention_heads"], cfg["encoder_ffn_dim"],
                                                       act, 1e-5) for _ in range(cfg["encoder_layers"]))

    def forward(self, ids, mask4d):
        x = self.embed_tokens(ids) * self.embed_scale + self.embed_positions(ids.shape[1])
        for layer in self.layers:
            x = layer(x, mask4d)
        return x


class MarianDecoder(nn.Module):
    def __init__(self, cfg, shared, act):
        super().__init__()
        d = cfg["d_model"]
        self.embed_tokens = shared
        self.embed_scale = math.sqrt(d) if cfg.get("scale_embedding", False) else 1.0
        self.embed_positions = MarianSinusoidalPositionalEmbedding(cfg.get("max_position_embeddings", 512), d)
        self.layers = nn.ModuleList(MarianDecoderLayer(d, cfg["decoder_attention_heads"], cfg["decoder_ffn_dim"],
                                                       act, 1e-5) for _ in range(cfg["decoder_layers"]))

    def forward(self, ids, enc, enc_mask4d, past, past_len):
        x = self.embed_tokens(ids) * self.embed_scale + self.embed_positions(ids.shape[1], past_len)
        new_past = []
        for i, layer in enumerate(self.layers):
            x, kv = layer(x, enc, enc_mask4d, past[i] if past is not None else None)
            new_past.append(kv)
        return x, new_past


class MarianModel(nn.Module):
    def __init__(self, cfg, act):
        super().__init__()
        self.shared = nn.Embedding(cfg["vocab_size"], cfg["d_model"], cfg["pad_token_id"])
        self.encoder = MarianEncoder(cfg, self.shared, act)
        self.decoder = MarianDecoder(cfg, self.shared, act)


class MarianMTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        act = _ACTS[cfg.get("activation_function", "gelu")]
        self.cfg = cfg
        self.model = MarianModel(cfg, act)
        self.lm_head = nn.Linear(cfg["d_model"], cfg["vocab_size"], bias=False)
        self.lm_head.weight = self.model.shared.weight  # tied
        self.register_buffer("final_logits_bias", torch.zeros(1, cfg["vocab_size"]))

    def decode_step(self, ids, enc, enc_mask4d, past, past_len):
        h, past = self.model.decoder(ids, enc, enc_mask4d, past, past_len)
        return self.lm_head(h) + self.final_logits_bias, past


def load_model(model_dir, variant):
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    if cfg.get("normalize_before", False) or not cfg.get("share_encoder_decoder_embeddings", True) \
            or not cfg.get("tie_word_embeddings", True):
        raise ValueError("torch_marian.py supports the shared/tied post-norm MarianMT layout only")
    m = MarianMTModel(cfg)
    w = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    maxpos = cfg.get("max_position_embeddings", 512)
    for side in ("encoder", "decoder"):
        key = f"model.{side}.embed_positions.weight"
        if key not in w:
            w[key] = marian_sinusoid(maxpos, cfg["d_model"])
    w["lm_head.weight"] = w["model.shared.weight"]
    missing, unexpected = m.load_state_dict(w, strict=False)
    missing = [k for k in missing if not k.endswith("embed_tokens.weight")]
    if missing or unexpected:
        raise ValueError(f"state_dict mismatch: missing {missing[:5]} unexpected {unexpected[:5]}")
    assert m.lm_head.weight is m.model.shared.weight
    m.eval()
    if variant == "int8":
        m = torch.quantization.quantize_dynamic(m, {nn.Linear}, dtype=torch.qint8)
    elif variant != "fp32":
        raise ValueError(f"unknown variant {variant}")
    return m


def state_dict_bytes(m):
    buf = io.BytesIO()
    torch.save(m.state_dict(), buf)
    return buf.tell()


# ----------------------------------------------------------------------------- tokenizer


class MarianTokenizerLite:
    def __init__(self, model_dir):
        import sentencepiece as spm
        self.sp = spm.SentencePieceProcessor(model_file=os.path.join(model_dir, "source.spm"))
        with open(os.path.join(model_dir, "vocab.json")) as f:
            self.vocab = json.load(f)
        self.id_to_piece = {i: p for p, i in self.vocab.items()}
        self.unk = self.vocab["<unk>"]
        self.eos = self.vocab["</s>"]
        self.special = {self.vocab.get(s) for s in ("</s>", "<unk>", "<pad>")} - {None}

    def encode(self, text):
        return [self.vocab.get(p, self.unk) for p in self.sp.encode(text, out_type=str)] + [self.eos]

    def decode(self, ids):
        return "".join(self.id_to_piece[i] for i in ids if i not in self.special).replace("\u2581", " ").strip()


# ----------------------------------------------------------------------------- generate (HF 4.2x)


class Generator:
    def __init__(self, model):
        self.m = model
        cfg = model.cfg
        self.pad = cfg["pad_token_id"]
        self.eos = cfg["eos_token_id"]
        self.start = cfg.get("decoder_start_token_id", self.pad)
        self.bad = sorted({w[0] for w in (cfg.get("bad_words_ids") or []) if len(w) == 1} | {self.pad})
        self.V = cfg["vocab_size"]

    def _encode(self, srcs):
        B, S = len(srcs), max(len(s) for s in srcs)
        ids = torch.full((B, S), self.pad, dtype=torch.long)
        att = torch.zeros(B, S)
        for i, s in enumerate(srcs):
            ids[i, :len(s)] = torch.tensor(s, dtype=torch.long)
            att[i, :len(s)] = 1
        # HF _expand_mask: (1 - mask) * finfo.min, [B, 1, tgt, S]
        mask4d = (1.0 - att)[:, None, None, :] * torch.finfo(torch.float32).min
        return self.m.model.encoder(ids, mask4d), mask4d

    def greedy(self, srcs, max_new):
        """Returns per sentence the generated ids (without </s>) and the number of generated
        tokens including </s>."""
        enc, mask = self._encode(srcs)
        B = len(srcs)
        max_length = max_new + 1                      # HF counts the decoder start
        cur = torch.full((B, 1), self.start, dtype=torch.long)
        seqs = [[] for _ in range(B)]
        unfinished = torch.ones(B, dtype=torch.long)
        past = None
        cur_len = 1
        while True:
            logits, past = self.m.decode_step(cur, enc, mask, past, cur_len - 1)
            scores = logits[:, -1, :]
            scores[:, self.bad] = float("-inf")                 # NoBadWordsLogitsProcessor
            if cur_len == max_length - 1:                       # ForcedEOSTokenLogitsProcessor
                scores[:, :] = float("-inf")
                scores[:, self.eos] = 0
            nxt = torch.argmax(scores, dim=-1)
            nxt = nxt * unfinished + self.pad * (1 - unfinished)
            cur_len += 1
            for b, t in enumerate(nxt.tolist()):
                if unfinished[b]:
                    seqs[b].append(t)
            unfinished = unfinished.mul((nxt != self.eos).long())
            if int(unfinished.max()) == 0 or cur_len >= max_length:
                break
            cur = nxt[:, None]
        out = []
        for s in seqs:
            ids = s[:-1] if s and s[-1] == self.eos else s
            out.append((ids, len(s)))
        return out

    def beam(self, srcs, K, max_new, length_penalty=1.0):
        B, V = len(srcs), self.V
        enc, mask = self._encode(srcs)
        rep = torch.arange(B).repeat_interleave(K)      # _expand_inputs_for_generation
        enc = enc.index_select(0, rep)
        mask = mask.index_select(0, rep)
        max_length = max_new + 1
        input_ids = torch.full((B * K, 1), self.start, dtype=torch.long)
        beam_scores = torch.zeros(B, K)
        beam_scores[:, 1:] = -1e9
        beam_scores = beam_scores.view(-1)
        hyps = [[] for _ in range(B)]                   # (score, ids list)
        worst = [1e9] * B
        done = [False] * B
        past = None
        cur_len = 1

        def add(b, ids, sum_lp):
            score = sum_lp / (len(ids) ** length_penalty)
            h = hyps[b]
            if len(h) < K or score > worst[b]:
                h.append((score, ids))
                if len(h) > K:
                    srt = sorted((s, i) for i, (s, _) in enumerate(h))
                    del h[srt[0][1]]
                    worst[b] = srt[1][0]
                else:
                    worst[b] = min(score, worst[b])

        while cur_len < max_length:
            logits, past = self.m.decode_step(input_ids[:, -1:], enc, mask, past, cur_len - 1)
            logits = logits[:, -1, :]
            logits[:, self.pad] = float("-inf")           # Marian adjust_logits_during_generation
            scores = F.log_softmax(logits, dim=-1)
            scores[:, self.bad] = float("-inf")
            if cur_len == max_length - 1:
                scores[:, :] = float("-inf")
                scores[:, self.eos] = 0
            scores = scores + beam_scores[:, None]
            scores = scores.view(B, K * V)
            top_s, top_i = torch.topk(scores, 2 * K, dim=1, largest=True, sorted=True)
            top_b = torch.div(top_i, V, rounding_mode="floor").tolist()
            top_t = (top_i % V).tolist()
            top_sl = top_s.tolist()
            ids_l = input_ids.tolist()
            nb_scores, nb_tokens, nb_idx = [], [], []
            for b in range(B):                            # BeamSearchScorer.process
                if done[b]:
                    nb_scores += [0.0] * K
                    nb_tokens += [self.pad] * K
                    nb_idx += [b * K] * K
                    continue
                n = 0
                for rank in range(2 * K):
                    bb = b * K + top_b[b][rank]
                    if top_t[b][rank] == self.eos:
                        if rank >= K:
                            continue
                        add(b, ids_l[bb], top_sl[b][rank])
                    else:
                        nb_scores.append(top_sl[b][rank])
                        nb_tokens.append(top_t[b][rank])
                        nb_idx.append(bb)
                        n += 1
                    if n == K:
                        break
                if len(hyps[b]) >= K:                     # is_done (early_stopping=False)
                    done[b] = worst[b] >= max(top_sl[b]) / (cur_len ** length_penalty)
            beam_scores = torch.tensor(nb_scores, dtype=torch.float32)
            beam_idx = torch.tensor(nb_idx, dtype=torch.long)
            input_ids = torch.cat([input_ids[beam_idx, :], torch.tensor(nb_tokens, dtype=torch.long)[:, None]], -1)
            past = [(k.index_select(0, beam_idx), v.index_select(0, beam_idx), ck, cv) for k, v, ck, cv in past]
            cur_len += 1
            if all(done):
                break
        ids_l = input_ids.tolist()
        sl = beam_scores.tolist()
        out = []
        for b in range(B):                                # finalize
            if not done[b]:
                for k in range(K):
                    add(b, ids_l[b * K + k], sl[b * K + k])
            best = sorted(hyps[b], key=lambda x: x[0])[-1][1]
            gen = best[1:]                                # drop the decoder start
            out.append((gen, len(gen) + 1))               # + the </s> (forced at the limit)
        return out


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


def run_config(a, model, tok, gen, lines, batch, beam, max_new, max_pos):
    """One (batch, beam) configuration: warm-up, --repeat timed passes; returns (result dict,
    texts, ids) of the last pass."""
    n = len(lines)

    def translate(chunk):
        srcs = [tok.encode(l) for l in chunk]
        for s in srcs:
            if len(s) > max_pos:
                raise ValueError(f"source of {len(s)} tokens exceeds max_position_embeddings {max_pos}")
        if beam == 1:
            res = gen.greedy(srcs, max_new)
        else:
            res = gen.beam(srcs, beam, max_new)
        return [(tok.decode(ids), ids, ntok) for ids, ntok in res]

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
    tok = MarianTokenizerLite(a.model_dir)
    gen = Generator(model)
    load_s = time.perf_counter() - t0
    max_pos = model.cfg.get("max_position_embeddings", 512)
    max_new = min(a.max_length, max_pos)
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
        res, texts, ids = run_config(a, model, tok, gen, lines[:nlines] if nlines else lines, batch, beam,
                                     max_new, max_pos)
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
