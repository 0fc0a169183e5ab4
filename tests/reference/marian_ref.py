#!/usr/bin/python3
"""Independent PyTorch reference of HF MarianMTModel (transformers 4.2x semantics).

Used to make the committed goldens (tests/data/golden) and for live parity checks against
the C++ runtime. Needs only Debian's python3-torch and numpy (no transformers, no safetensors).

Model
-----
Post-norm Transformer exactly as HF MarianMTModel:
  encoder: h = embed(src) * embed_scale + pos[0..S-1]
           per layer: h = LN(h + SelfAttn(h, src_mask)); h = LN(h + fc2(act(fc1(h))))
  decoder: h = embed(tgt) * embed_scale + pos[past..past+T-1]
           per layer: h = LN(h + SelfAttn(h, causal)); h = LN(h + CrossAttn(h, enc, src_mask));
                      h = LN(h + fc2(act(fc1(h))))
  logits = h @ W_out^T + final_logits_bias
Attention: q = (x Wq^T + bq) * head_dim^-0.5, k = x Wk^T + bk, v = x Wv^T + bv,
softmax(q k^T + mask) v, then out_proj. embed_scale = sqrt(d_model) if scale_embedding else 1.
Positions: `*.embed_positions.weight` when stored, else Marian's sinusoid (sin half, cos half).
W_out: the decoder embedding (shared table when share_encoder_decoder_embeddings) when
tie_word_embeddings (default true), else `lm_head.weight`.

Search (ids in, ids out; source ids must end with </s>)
------------------------------------------------------
max_length M = the maximum number of GENERATED tokens INCLUDING the final </s> (the decoder start
token is not counted; HF's max_length is M + 1). At generation step M (1-based) every token but
</s> is -inf and </s> gets log-prob 0 (HF ForcedEOSTokenLogitsProcessor), so every hypothesis ends
with </s>.

Greedy (beam_size 1): logits[pad] = -inf (and every bad_words id), argmax with ties to the lowest
id, stop at </s>. Greedy and beam 1 give the same ids. Its score is computed like a beam score.

Beam (HF 4.2x BeamSearchScorer, early_stopping=False, num_beam_hyps_to_keep = n_best), per sentence:
  running beams b = 0..K-1: tokens (starting with the decoder start id), sum_logprobs;
  init sum_logprobs = [0, -1e9, -1e9, ...] (all beams hold the same start token).
  finished = [] (at most K entries, each (score, tokens)), worst = 1e9, done = False.
  for t = 1, 2, ... (t = number of tokens each running beam will have after this step):
    logits[b][pad] = -inf;  lp[b] = log_softmax(logits[b]) (float32);  lp[b][bad ids] = -inf
    if t == M: lp[b][:] = -inf; lp[b][eos] = 0
    cand(b, v) = sum_logprobs[b] + lp[b][v]           (float32)
    take the 2K best (b, v) over all K*V, sorted by cand descending, ties by lower b*V+v.
    new = []
    for rank, (b, v) in enumerate(those 2K):
      if v == eos:
        if rank >= K: continue
        add(tokens[b] (without the </s>), cand): score = cand / (t ** length_penalty)
           -- t = number of generated tokens INCLUDING this </s> (= HF 4.2x hyp.shape[-1]:
              input_ids incl. the decoder start, excl. the EOS).
           add: if len(finished) < K or score > worst: append; if len > K: remove the lowest
           (ties: the earliest added), worst = new lowest; else worst = min(worst, score)
      else:
        new.append((b, v, cand));  if len(new) == K: break
    done |= len(finished) >= K and worst >= max(2K cands) / (t - 1 + 1)**lp ... precisely:
           HF is_done(best_sum_logprobs = the largest of the 2K candidate values, cur_len = t):
           done = len(finished) >= K and worst >= best_sum_logprobs / t ** length_penalty
    running beams = new (tokens[b] + [v], cand); stop the sentence when done, or after step M.
  After step M the running beams hold -inf scores and are never added (finished has K entries).
  n-best: finished sorted by score descending (equal scores: the later-added first, as HF's
  stable sort + pop()). Returned ids exclude the decoder start and the final </s>.
Batching only groups sentences; each sentence's result does not depend on its batch.
"""
import json
import math
import os
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

torch.set_grad_enabled(False)

# ----------------------------------------------------------------------------- safetensors


_DTYPES = {"F32": (np.float32, 4), "F16": (np.float16, 2), "BF16": (np.uint16, 2),
           "F64": (np.float64, 8)}


def read_safetensors(path):
    """Returns {name: float32 torch tensor}. Parses the format by hand."""
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        raise ValueError(f"{path}: too short for a safetensors file")
    (n,) = struct.unpack("<Q", raw[:8])
    if n > len(raw) - 8:
        raise ValueError(f"{path}: header length {n} beyond file size {len(raw)}")
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dt = info["dtype"]
        if dt not in _DTYPES:
            raise ValueError(f"{path}: tensor {name}: unsupported dtype {dt}")
        npdt, size = _DTYPES[dt]
        shape = [int(s) for s in info["shape"]]
        begin, end = (int(x) for x in info["data_offsets"])
        count = int(np.prod(shape)) if shape else 1
        if end - begin != count * size or base + end > len(raw):
            raise ValueError(f"{path}: tensor {name}: bad data_offsets {begin},{end}")
        arr = np.frombuffer(raw, dtype=npdt, count=count, offset=base + begin)
        if dt == "BF16":
            arr = (arr.astype(np.uint32) << 16).view(np.float32)
        arr = arr.astype(np.float32).reshape(shape)
        out[name] = torch.from_numpy(arr.copy())
    return out


def write_safetensors(path, tensors, dtype="F32"):
    """tensors: {name: np.ndarray or torch tensor (float)}; written in sorted name order."""
    names = sorted(tensors)
    header = {"__metadata__": {"format": "pt"}}
    blobs = []
    offset = 0
    for name in names:
        t = tensors[name]
        a = t.numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
        a = np.ascontiguousarray(a, dtype=np.float32)
        if dtype == "F32":
            b = a.astype("<f4").tobytes()
        elif dtype == "F16":
            b = a.astype("<f2").tobytes()
        elif dtype == "BF16":  # round to nearest even
            u = a.view(np.uint32).astype(np.uint64)
            u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype("<u2")
            b = u.tobytes()
        else:
            raise ValueError(dtype)
        header[name] = {"dtype": dtype, "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def marian_sinusoid(n_pos, dim):
    """HF MarianSinusoidalPositionalEmbedding table (computed in float64, stored float32)."""
    pos = np.arange(n_pos, dtype=np.float64)[:, None]
    j = np.arange(dim, dtype=np.float64)[None, :]
    enc = pos / np.power(10000.0, 2.0 * np.floor(j / 2.0) / dim)
    out = np.zeros((n_pos, dim), dtype=np.float32)
    half = dim // 2 if dim % 2 == 0 else dim // 2 + 1
    out[:, :half] = np.sin(enc[:, 0::2])
    out[:, half:] = np.cos(enc[:, 1::2])
    return torch.from_numpy(out)


def _gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


_ACTS = {
    "swish": F.silu, "silu": F.silu, "relu": F.relu,
    "gelu": F.gelu, "gelu_new": _gelu_new,
    "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh"),
}

# ----------------------------------------------------------------------------- model


class MarianRef:
    def __init__(self, model_dir):
        self.dir = model_dir
        with open(os.path.join(model_dir, "config.json")) as f:
            cfg = json.load(f)
        gen = {}
        gpath = os.path.join(model_dir, "generation_config.json")
        if os.path.exists(gpath):
            with open(gpath) as f:
                gen = json.load(f)
        self.cfg = cfg
        self.d = cfg["d_model"]
        self.enc_layers = cfg["encoder_layers"]
        self.dec_layers = cfg["decoder_layers"]
        self.enc_heads = cfg["encoder_attention_heads"]
        self.dec_heads = cfg["decoder_attention_heads"]
        act = cfg.get("activation_function", "gelu")
        if act not in _ACTS:
            raise ValueError(f"unsupported activation_function {act}")
        self.act = _ACTS[act]
        self.embed_scale = math.sqrt(self.d) if cfg.get("scale_embedding", False) else 1.0
        self.eps = 1e-5
        if cfg.get("normalize_before", False):
            raise ValueError("normalize_before (pre-norm) is not MarianMT")
        self.pad = cfg["pad_token_id"]
        self.eos = cfg["eos_token_id"]
        self.start = cfg.get("decoder_start_token_id", self.pad)
        if self.start is None:
            self.start = self.pad
        bad = gen.get("bad_words_ids", cfg.get("bad_words_ids")) or []
        self.bad_ids = sorted({w[0] for w in bad if len(w) == 1} | {self.pad})
        self.default_beam = gen.get("num_beams", cfg.get("num_beams", 4))
        self.default_max_length = gen.get("max_length", cfg.get("max_length", 256))

        w = read_safetensors(os.path.join(model_dir, "model.safetensors"))
        self.w = w
        shared = cfg.get("share_encoder_decoder_embeddings", True)
        if shared and "model.shared.weight" in w:
            self.enc_embed = self.dec_embed = w["model.shared.weight"]
        else:
            self.enc_embed = w.get("model.encoder.embed_tokens.weight", w.get("model.shared.weight"))
            self.dec_embed = w.get("model.decoder.embed_tokens.weight", w.get("model.shared.weight"))
        if self.enc_embed is None or self.dec_embed is None:
            raise ValueError("missing embedding tables")
        if cfg.get("tie_word_embeddings", True):
            self.out_w = self.dec_embed
        else:
            self.out_w = w["lm_head.weight"]
        self.src_vocab = self.enc_embed.shape[0]
        self.tgt_vocab = self.out_w.shape[0]
        fb = w.get("final_logits_bias")
        self.out_b = fb.reshape(-1) if fb is not None else torch.zeros(self.tgt_vocab)
        maxpos = cfg.get("max_position_embeddings", 512)
        self.enc_pos = w.get("model.encoder.embed_positions.weight", marian_sinusoid(maxpos, self.d))
        self.dec_pos = w.get("model.decoder.embed_positions.weight", marian_sinusoid(maxpos, self.d))

    # -- building blocks

    def _ln(self, x, name):
        return F.layer_norm(x, (self.d,), self.w[name + ".weight"], self.w[name + ".bias"], self.eps)

    def _lin(self, x, name):
        return F.linear(x, self.w[name + ".weight"], self.w.get(name + ".bias"))

    def _split(self, x, heads):  # [N, L, d] -> [N, H, L, hd]
        n, l, _ = x.shape
        return x.view(n, l, heads, self.d // heads).transpose(1, 2)

    def _attend(self, q, k, v, mask, heads, name):
        # q [N,H,T,hd] (already scaled), k/v [N,H,S,hd], mask additive [N,1,T|1,S] or None
        s = torch.matmul(q, k.transpose(-1, -2))
        if mask is not None:
            s = s + mask
        p = torch.softmax(s, dim=-1)
        o = torch.matmul(p, v)
        n, h, t, hd = o.shape
        o = o.transpose(1, 2).reshape(n, t, h * hd)
        return self._lin(o, name + ".out_proj")

    def _q(self, x, name, heads):
        return self._split(self._lin(x, name + ".q_proj") * ((self.d // heads) ** -0.5), heads)

    # -- encoder

    def encode(self, src, src_len):
        """src [B,S] long (padded with anything), src_len [B]. Returns (enc [B,S,d], mask [B,1,1,S])."""
        B, S = src.shape
        if S > self.enc_pos.shape[0]:
            raise ValueError(f"source length {S} > max_position_embeddings")
        valid = torch.arange(S)[None, :] < src_len[:, None]
        mask = torch.zeros(B, 1, 1, S)
        mask.masked_fill_(~valid[:, None, None, :], float("-inf"))
        h = F.embedding(src, self.enc_embed) * self.embed_scale + self.enc_pos[:S][None]
        H = self.enc_heads
        for i in range(self.enc_layers):
            p = f"model.encoder.layers.{i}"
            q = self._q(h, p + ".self_attn", H)
            k = self._split(self._lin(h, p + ".self_attn.k_proj"), H)
            v = self._split(self._lin(h, p + ".self_attn.v_proj"), H)
            h = self._ln(h + self._attend(q, k, v, mask, H, p + ".self_attn"), p + ".self_attn_layer_norm")
            f = self._lin(self.act(self._lin(h, p + ".fc1")), p + ".fc2")
            h = self._ln(h + f, p + ".final_layer_norm")
        return h, mask

    def cross_kv(self, enc):
        H = self.dec_heads
        kv = []
        for i in range(self.dec_layers):
            p = f"model.decoder.layers.{i}.encoder_attn"
            kv.append((self._split(self._lin(enc, p + ".k_proj"), H),
                       self._split(self._lin(enc, p + ".v_proj"), H)))
        return kv

    # -- decoder

    def decode(self, tgt, past_len, cache, xkv, xmask, causal=False):
        """tgt [N,T] decoder inputs at positions past_len..past_len+T-1. cache: list of (k, v)
        per layer ([N,H,past,hd]) or None entries; updated in place. Returns logits [N,T,V]."""
        N, T = tgt.shape
        if past_len + T > self.dec_pos.shape[0]:
            raise ValueError("target length beyond max_position_embeddings")
        h = F.embedding(tgt, self.dec_embed) * self.embed_scale + self.dec_pos[past_len:past_len + T][None]
        H = self.dec_heads
        smask = None
        if causal and T > 1:
            smask = torch.triu(torch.full((T, past_len + T), float("-inf")), diagonal=past_len + 1)[None, None]
        for i in range(self.dec_layers):
            p = f"model.decoder.layers.{i}"
            q = self._q(h, p + ".self_attn", H)
            k = self._split(self._lin(h, p + ".self_attn.k_proj"), H)
            v = self._split(self._lin(h, p + ".self_attn.v_proj"), H)
            if cache[i] is not None:
                k = torch.cat([cache[i][0], k], dim=2)
                v = torch.cat([cache[i][1], v], dim=2)
            cache[i] = (k, v)
            h = self._ln(h + self._attend(q, k, v, smask, H, p + ".self_attn"), p + ".self_attn_layer_norm")
            q = self._q(h, p + ".encoder_attn", H)
            h = self._ln(h + self._attend(q, xkv[i][0], xkv[i][1], xmask, H, p + ".encoder_attn"),
                         p + ".encoder_attn_layer_norm")
            f = self._lin(self.act(self._lin(h, p + ".fc1")), p + ".fc2")
            h = self._ln(h + f, p + ".final_layer_norm")
        return F.linear(h, self.out_w) + self.out_b

    # -- helpers

    def _batch(self, srcs):
        for s in srcs:
            if not s or s[-1] != self.eos:
                raise ValueError("source ids must be non-empty and end with </s>")
            if max(s) >= self.src_vocab or min(s) < 0:
                raise ValueError("source id out of range")
        lens = torch.tensor([len(s) for s in srcs], dtype=torch.long)
        S = int(lens.max())
        src = torch.full((len(srcs), S), self.pad if self.pad < self.src_vocab else 0, dtype=torch.long)
        for i, s in enumerate(srcs):
            src[i, :len(s)] = torch.tensor(s, dtype=torch.long)
        return src, lens

    def forced_logits(self, src_ids, tgt_ids):
        """Teacher forcing, batch of one: logits [len(tgt_ids), V] for decoder inputs
        (start, t0, ..., t_{n-2}); tgt_ids excludes the decoder start."""
        src, lens = self._batch([src_ids])
        enc, mask = self.encode(src, lens)
        dec_in = torch.tensor([[self.start] + list(tgt_ids[:-1])], dtype=torch.long)
        cache = [None] * self.dec_layers
        return self.decode(dec_in, 0, cache, self.cross_kv(enc), mask, causal=True)[0]

    def step_logprobs(self, logits):
        """HF beam: pad -> -inf BEFORE log_softmax (Marian adjust_logits_during_generation),
        then the bad_words ids -> -inf after it."""
        logits = logits.clone()
        logits[:, self.pad] = float("-inf")
        lp = torch.log_softmax(logits, dim=-1)
        lp[:, self.bad_ids] = float("-inf")
        return lp

    def _max_len(self, max_length, n):
        if max_length is None:
            max_length = self.default_max_length
        if isinstance(max_length, int):
            max_length = [max_length] * n
        cap = self.dec_pos.shape[0]
        return [max(1, min(m, cap)) for m in max_length]

    # -- greedy

    def greedy(self, srcs, max_length=None, length_penalty=1.0, with_gaps=False):
        """Returns list of (ids without </s>, score[, gaps]) per sentence. gaps[t] = top-1 minus
        top-2 log-prob at step t (for tie classification)."""
        src, lens = self._batch(srcs)
        B = len(srcs)
        mls = self._max_len(max_length, B)
        enc, mask = self.encode(src, lens)
        xkv = self.cross_kv(enc)
        cache = [None] * self.dec_layers
        cur = torch.full((B, 1), self.start, dtype=torch.long)
        out = [[] for _ in range(B)]
        sums = torch.zeros(B)
        gaps = [[] for _ in range(B)]
        alive = list(range(B))
        t = 0
        while alive:
            t += 1
            logits = self.decode(cur, t - 1, cache, xkv, mask)[:, 0, :]
            lp = self.step_logprobs(logits)
            for r, b in enumerate(alive):
                if t >= mls[b]:
                    lp[r, :] = float("-inf")
                    lp[r, self.eos] = 0.0
            top2 = torch.topk(lp, 2, dim=-1).values
            nxt = torch.argmax(lp, dim=-1)
            keep = []
            for r, b in enumerate(alive):
                tok = int(nxt[r])
                sums[b] += lp[r, tok]
                if with_gaps:
                    gaps[b].append(float(top2[r, 0] - top2[r, 1]))
                if tok == self.eos:
                    continue
                out[b].append(tok)
                keep.append(r)
            if len(keep) != len(alive):
                idx = torch.tensor(keep, dtype=torch.long)
                cache = [(k.index_select(0, idx), v.index_select(0, idx)) for k, v in cache]
                xkv = [(k.index_select(0, idx), v.index_select(0, idx)) for k, v in xkv]
                mask = mask.index_select(0, idx)
                nxt = nxt.index_select(0, idx)
                alive = [alive[r] for r in keep]
            cur = nxt[:, None]
        res = []
        for b in range(B):
            score = float(sums[b]) / ((len(out[b]) + 1) ** length_penalty)
            res.append((out[b], score, gaps[b]) if with_gaps else (out[b], score))
        return res

    # -- beam

    def beam(self, srcs, beam_size=4, max_length=None, length_penalty=1.0, n_best=1, trace=False):
        """Returns per sentence a list of n_best (ids without </s>, score), best first.
        trace=True also returns per sentence the smallest decision margin seen (see margins())."""
        K = beam_size
        src, lens = self._batch(srcs)
        B = len(srcs)
        V = self.tgt_vocab
        mls = self._max_len(max_length, B)
        enc, mask = self.encode(src, lens)
        rep = torch.arange(B).repeat_interleave(K)
        enc = enc.index_select(0, rep)
        mask = mask.index_select(0, rep)
        xkv = self.cross_kv(enc)
        cache = [None] * self.dec_layers
        scores = torch.zeros(B, K)
        scores[:, 1:] = -1e9
        tokens = [[[] for _ in range(K)] for _ in range(B)]
        finished = [[] for _ in range(B)]  # (score, seq, order)
        worst = [1e9] * B
        done = [False] * B
        margin = [float("inf")] * B
        alive = list(range(B))  # sentences still searching; rows of the tensors = alive*K
        cur = torch.full((B * K, 1), self.start, dtype=torch.long)
        t = 0
        order = 0
        while alive:
            t += 1
            logits = self.decode(cur, t - 1, cache, xkv, mask)[:, 0, :]
            lp = self.step_logprobs(logits)
            for a, b in enumerate(alive):
                if t >= mls[b]:
                    lp[a * K:(a + 1) * K, :] = float("-inf")
                    lp[a * K:(a + 1) * K, self.eos] = 0.0
            cand = (lp + scores.view(-1, 1)).view(len(alive), K * V)
            top_v, top_i = _topk_stable(cand, 2 * K + (1 if trace else 0))
            new_scores = torch.zeros(len(alive), K)
            sel_rows = []
            sel_tok = []
            new_alive = []
            new_tokens = []
            for a, b in enumerate(alive):
                vals = top_v[a].tolist()
                idxs = top_i[a].tolist()
                if trace:
                    _track_margins(vals, idxs, V, K, self.eos, margin, b)
                nb = []
                for rank in range(2 * K):
                    bi, v = divmod(idxs[rank], V)
                    if v == self.eos:
                        if rank >= K:
                            continue
                        sc = vals[rank] / (t ** length_penalty)
                        order += 1
                        if len(finished[b]) < K or sc > worst[b]:
                            if trace and finished[b]:
                                margin[b] = min(margin[b], abs(sc - worst[b]))
                            finished[b].append((sc, tokens[b][bi], order))
                            if len(finished[b]) > K:
                                srt = sorted((s, i) for i, (s, _, _) in enumerate(finished[b]))
                                del finished[b][srt[0][1]]
                                worst[b] = srt[1][0]
                            else:
                                worst[b] = min(sc, worst[b])
                        elif trace:
                            margin[b] = min(margin[b], abs(sc - worst[b]))
                    else:
                        nb.append((bi, v, vals[rank]))
                        if len(nb) == K:
                            break
                best = vals[0]
                if len(finished[b]) >= K:
                    cur_score = best / (t ** length_penalty)
                    if trace:
                        margin[b] = min(margin[b], abs(worst[b] - cur_score))
                    if worst[b] >= cur_score:
                        done[b] = True
                if t >= mls[b]:
                    done[b] = True  # running beams hold -inf now (forced </s>)
                if done[b]:
                    continue
                new_alive.append(b)
                row = len(new_alive) - 1
                nt = []
                for j, (bi, v, sc) in enumerate(nb):
                    new_scores[a, j] = sc
                    sel_rows.append(a * K + bi)
                    sel_tok.append(v)
                    nt.append(tokens[b][bi] + [v])
                new_tokens.append(nt)
                del row
            keep_a = [a for a, b in enumerate(alive) if not done[b]]
            for a, b in enumerate(alive):
                pass
            if not new_alive:
                break
            idx = torch.tensor(sel_rows, dtype=torch.long)
            cache = [(k.index_select(0, idx), v.index_select(0, idx)) for k, v in cache]
            ka = torch.tensor(keep_a, dtype=torch.long)
            rows = (ka[:, None] * K + torch.arange(K)[None, :]).reshape(-1)
            xkv = [(k.index_select(0, rows), v.index_select(0, rows)) for k, v in xkv]
            mask = mask.index_select(0, rows)
            scores = new_scores.index_select(0, ka)
            for j, b in enumerate(new_alive):
                tokens[b] = new_tokens[j]
            alive = new_alive
            cur = torch.tensor(sel_tok, dtype=torch.long)[:, None]
        res = []
        for b in range(B):
            hyps = sorted(finished[b], key=lambda x: (x[0], x[2]), reverse=True)[:n_best]
            r = [(list(seq), float(sc)) for sc, seq, _ in hyps]
            res.append((r, margin[b]) if trace else r)
        return res


def _topk_stable(x, k):
    """Top-k per row, sorted by value descending, ties by lower index (deterministic)."""
    v, i = torch.topk(x, k, dim=-1, largest=True, sorted=True)
    kth = v[:, -1:]
    # Rows where the k-th value ties with values outside the selection, or ties inside it,
    # are redone with a full stable sort.
    n_ge = (x >= kth).sum(dim=-1)
    need = (n_ge > k) | (v[:, 1:] == v[:, :-1]).any(dim=-1)
    for r in torch.nonzero(need).flatten().tolist():
        sv, si = torch.sort(x[r], descending=True, stable=True)
        v[r], i[r] = sv[:k], si[:k]
    return v, i


def _track_margins(vals, idxs, V, K, eos, margin, b):
    """Smallest gap between candidates whose order decides the search (ranks around K-1/K
    for EOS finalisation and around the K-th non-EOS candidate)."""
    n_non = 0
    for rank in range(len(vals) - 1):
        bi, v = divmod(idxs[rank], V)
        gap = vals[rank] - vals[rank + 1]
        if not math.isfinite(gap):
            break
        if v == eos or rank == K - 1 or n_non == K - 1 or rank + 1 == K:
            margin[b] = min(margin[b], gap)
        if v != eos:
            n_non += 1
            if n_non > K:
                break


# ----------------------------------------------------------------------------- text helpers


class TextTools:
    """Tokenization for golden-generation scripts only (python3-sentencepiece + vocab.json)."""

    def __init__(self, model_dir):
        import sentencepiece as spm
        self.sp = spm.SentencePieceProcessor(model_file=os.path.join(model_dir, "source.spm"))
        with open(os.path.join(model_dir, "vocab.json")) as f:
            self.src_vocab = json.load(f)
        tv = os.path.join(model_dir, "target_vocab.json")
        if os.path.exists(tv):
            with open(tv) as f:
                self.tgt_vocab = json.load(f)
        else:
            self.tgt_vocab = self.src_vocab
        self.tgt_pieces = {i: p for p, i in self.tgt_vocab.items()}
        self.unk = self.src_vocab["<unk>"]
        self.eos = self.src_vocab["</s>"]
        self.special = {self.tgt_vocab.get(s) for s in ("</s>", "<unk>", "<pad>")} - {None}

    def encode(self, line):
        return [self.src_vocab.get(p, self.unk) for p in self.sp.encode(line, out_type=str)] + [self.eos]

    def decode(self, ids):
        text = "".join(self.tgt_pieces[i] for i in ids if i not in self.special)
        return text.replace("\u2581", " ").lstrip(" ")


# ----------------------------------------------------------------------------- CLI


def _main(argv):
    import argparse
    ap = argparse.ArgumentParser(description="PyTorch MarianMT reference: ids in (stdin), ids out")
    ap.add_argument("model_dir")
    ap.add_argument("--beam", type=int, default=1)
    ap.add_argument("--max-length", type=int, default=None)
    ap.add_argument("--length-penalty", type=float, default=1.0)
    ap.add_argument("--n-best", type=int, default=1)
    ap.add_argument("--scores", action="store_true", help="print 'score\\tids'")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--text", action="store_true", help="stdin/stdout text (python sentencepiece)")
    a = ap.parse_args(argv)
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    m = MarianRef(a.model_dir)
    tt = TextTools(a.model_dir) if a.text else None
    lines = [l.rstrip("\n") for l in sys.stdin]
    srcs = [tt.encode(l) if tt else [int(x) for x in l.split()] for l in lines]
    for i in range(0, len(srcs), a.batch):
        chunk = srcs[i:i + a.batch]
        if a.beam == 1:
            res = [[r] for r in m.greedy(chunk, a.max_length, a.length_penalty)]
        else:
            res = m.beam(chunk, a.beam, a.max_length, a.length_penalty, a.n_best)
        for hyps in res:
            for ids, sc in hyps:
                s = tt.decode(ids) if tt else " ".join(map(str, ids))
                print(f"{sc:.6f}\t{s}" if a.scores else s)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
