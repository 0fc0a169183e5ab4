#!/usr/bin/python3
"""Independent PyTorch reference of HF MarianMTModel (transformers 4.2x semantics).

Used to make the committed goldens (tests/data/golden), for live parity checks against the C++
runtime, and as the PyTorch peer of the benchmarks (bench/torch_marian.py: fp32, and int8 through
MarianRef.quantize_int8). Needs only Debian's python3-torch and numpy (no transformers, no
safetensors); TextTools also python3-sentencepiece.

Model
-----
Post-norm Transformer exactly as HF MarianMT (config.json normalize_before=true: the pre-norm
variant of fairseq / HF M2M100 below):
  encoder: h = embed(src) * embed_scale + pos[0..S-1]
           per layer: h = LN(h + SelfAttn(h, src_mask)); h = LN(h + fc2(act(fc1(h))))
  decoder: h = embed(tgt) * embed_scale + pos[past..past+T-1]
           per layer: h = LN(h + SelfAttn(h, causal)); h = LN(h + CrossAttn(h, enc, src_mask));
                      h = LN(h + fc2(act(fc1(h))))
  logits = h @ W_out^T + final_logits_bias
Pre-norm (normalize_before): every block is h = h + Block(LN(h)) with the same norms, and a stack
whose checkpoint has `model.encoder.layer_norm.*` / `model.decoder.layer_norm.*` ends with that
norm (HF M2M100 / MBart names).
Attention: q = (x Wq^T + bq) * head_dim^-0.5, k = x Wk^T + bk, v = x Wv^T + bv,
softmax(q k^T + mask) v, then out_proj. embed_scale = sqrt(d_model) if scale_embedding else 1.
Positions: `*.embed_positions.weight` when stored, else Marian's sinusoid (sin half, cos half).
The other sinusoids the runtime computes (m2m100_sinusoid at HF M2M100's padding offset,
ct2_sinusoid) are made here as stored tables (make_random_checkpoint.py position_kind).
W_out: the decoder embedding (shared table when share_encoder_decoder_embeddings) when
tie_word_embeddings (default true), else `lm_head.weight`.
Every projection (q/k/v/out, fc1, fc2, W_out) is an nn.Linear around the checkpoint's tensors, so
torch's dynamic quantization can replace them (quantize_int8); float32 is F.linear exactly.

Text (TextTools, HF MarianTokenizer): encode = source.spm pieces -> vocab.json ids (unknown
pieces -> <unk>) + </s>; decode = the target pieces of the ids but </s>, <unk> and <pad>,
U+2581 -> ' ', stripped at both ends (MarianTokenizer.decode(skip_special_tokens=True); the
oracle of tests/data/tokenizer/*.decoded).

Search (ids in, ids out; source ids must end with </s>)
------------------------------------------------------
max_length M = the maximum number of GENERATED tokens INCLUDING the final </s> (the decoder start
token is not counted; HF's max_length is M + 1). At generation step M (1-based) every token but
</s> is -inf and </s> gets log-prob 0 (HF ForcedEOSTokenLogitsProcessor), so every hypothesis ends
with </s>.

Greedy (beam_size 1): logits[pad] = -inf (and every bad_words id; at step M all but </s>), argmax
of those LOGITS with ties to the lowest id, stop at </s>. Greedy and beam 1 give the same ids
(barring exact log-prob ties). Its score = sum of the log-probs below (forced </s>: 0) / len^lp.

Beam (HF 4.2x BeamSearchScorer, early_stopping=False), K = beam size, per sentence:
  running beams b = 0..K-1 with tokens (after the decoder start) and float32 sum_logprobs,
  initially all empty with sum_logprobs = [0, -1e9, ..., -1e9].
  finished = [] (at most K (score, ids) entries), worst = 1e9.
  for t = 1, 2, ... (t = tokens each running beam holds after this step):
    lp[b] = log_softmax(logits[b] with logits[b][pad] = -inf)   (float32; HF's Marian
            adjust_logits_during_generation masks pad BEFORE the log_softmax)
    lp[b][bad_words ids] = -inf
    if t == M: lp[b][:] = -inf; lp[b][eos] = 0                  (forced </s>, log-prob 0)
    cand(b, v) = sum_logprobs[b] + lp[b][v]                     (float32 add)
    C = the 2K best (b, v) over all K*V, by cand descending, ties: lower b*V+v first
    new = []
    for rank, (b, v) in enumerate(C):
      if v == eos:
        if rank < K: ADD(ids = tokens[b], score = cand / t ** length_penalty)
        (t counts the generated tokens INCLUDING this </s>; = HF 4.2x hyp.shape[-1], which
         counts the decoder start and not the </s>)
      else:
        new.append((b, v, cand)); if len(new) == K: break
    ADD: if len(finished) < K or score > worst: append; if now K+1 entries: drop the lowest
         (equal lowest: the earliest added) and worst = the new lowest; else worst = min(worst, score)
    done = len(finished) >= K and worst >= C[0].cand / t ** length_penalty   (HF is_done)
    stop the sentence if done or t == M; else running beams = new (tokens + [v], cand).
  (After the forced step every beam's </s> is among the K best, so finished has K entries; the
  -inf running beams HF would "finalize" are never accepted.)
  n-best = finished sorted by score descending (equal scores: the later-added first, as HF's
  stable sort + pop()). Scores are float32 sums divided in double. Returned ids exclude the
  decoder start and the final </s>.
Batching only groups sentences; each sentence's result does not depend on its batch.
"""
import json
import math
import os
import struct
import sys

import numpy as np
import torch
import torch.nn as nn
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


def fairseq_sinusoid(n_pos, dim, first, float_log=False):
    """Rows first..first+n_pos-1 of fairseq's sinusoid as HF M2M100SinusoidalPositionalEmbedding
    .get_embedding computes it in torch float32 (the step ln(10000) / (half - 1) a Python float),
    or with float_log as CTranslate2's SinusoidalPositionEncoder (the step in float32)."""
    half = dim // 2
    if float_log:
        step = torch.log(torch.tensor(10000.0, dtype=torch.float32)) / torch.tensor(float(half - 1))
        freq = torch.exp(torch.arange(half, dtype=torch.int64).float() * -step)
    else:
        freq = torch.exp(torch.arange(half, dtype=torch.int64).float() * -(math.log(10000) / (half - 1)))
    ang = torch.arange(first, first + n_pos, dtype=torch.int64).float().unsqueeze(1) * freq.unsqueeze(0)
    t = torch.cat([torch.sin(ang), torch.cos(ang)], dim=1)
    if dim % 2:
        t = torch.cat([t, torch.zeros(n_pos, 1)], dim=1)
    return t


def m2m100_sinusoid(n_pos, dim, pad):
    """HF M2M100's positions of token indices 0..n_pos-1: the sinusoid at index + pad + 1."""
    return fairseq_sinusoid(n_pos, dim, pad + 1)


def ct2_sinusoid(n_pos, dim):
    """CTranslate2's built-in sinusoid of token indices 0..n_pos-1 (at index + 1)."""
    return fairseq_sinusoid(n_pos, dim, 1, float_log=True)


def _gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def _linear(weight, bias):
    """nn.Linear holding the given tensors (no copy, no initialisation)."""
    lin = nn.Linear(weight.shape[1], weight.shape[0], bias=bias is not None, device="meta")
    lin.weight = nn.Parameter(weight, requires_grad=False)
    if bias is not None:
        lin.bias = nn.Parameter(bias, requires_grad=False)
    return lin


_ACTS = {
    "swish": F.silu, "silu": F.silu, "relu": F.relu,
    "gelu": F.gelu, "gelu_new": _gelu_new,
    "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh"),
}

# ----------------------------------------------------------------------------- model


class MarianRef:
    OUT = "output_projection"  # the key of W_out in self.proj

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
        self.pre_norm = bool(cfg.get("normalize_before", False))
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
        self.enc_final_norm = "model.encoder.layer_norm.weight" in w
        self.dec_final_norm = "model.decoder.layer_norm.weight" in w
        # Projections as nn.Linear, keyed by their checkpoint name with '/' for '.' (module names
        # cannot hold dots).
        # Decoder layers of Marian's SSRU cell (marian_semantics.py) instead of self-attention:
        # config.json "decoder_layer_kind": "ssru" (not an HF key; random test checkpoints only).
        self.ssru = cfg.get("decoder_layer_kind", "self_attention") == "ssru"
        names = []
        dec_attn = ("encoder_attn",) if self.ssru else ("self_attn", "encoder_attn")
        for side, n, attn in (("encoder", self.enc_layers, ("self_attn",)),
                              ("decoder", self.dec_layers, dec_attn)):
            for i in range(n):
                p = f"model.{side}.layers.{i}"
                names += [f"{p}.{a}.{x}_proj" for a in attn for x in ("q", "k", "v", "out")]
                names += [p + ".fc1", p + ".fc2"]
                if side == "decoder" and self.ssru:
                    names += [p + ".ssru.in_proj", p + ".ssru.forget_proj"]
        self.proj = nn.ModuleDict({n.replace(".", "/"): _linear(w[n + ".weight"], w.get(n + ".bias"))
                                   for n in names})
        self.proj[self.OUT] = _linear(self.out_w, None)

    def quantize_int8(self):
        """torch dynamic int8 quantization (quantize_dynamic, qint8) of every projection and of
        the output projection; embeddings, positions, LayerNorms and final_logits_bias stay
        float32. The float32 copies of the projections are released."""
        torch.quantization.quantize_dynamic(self.proj, {nn.Linear}, dtype=torch.qint8, inplace=True)
        for key in self.proj:
            if key != self.OUT:
                self.w.pop(key.replace("/", ".") + ".weight", None)
                self.w.pop(key.replace("/", ".") + ".bias", None)
        if not self.cfg.get("tie_word_embeddings", True):
            self.w.pop("lm_head.weight", None)
        self.out_w = None

    def tensors(self):
        """What the model computes with, for torch.save: the projections' state (int8 after
        quantize_int8) and every other tensor."""
        return {"projections": self.proj.state_dict(),
                "other": dict(self.w, enc_pos=self.enc_pos, dec_pos=self.dec_pos, out_b=self.out_b)}

    # -- building blocks

    def _ln(self, x, name):
        return F.layer_norm(x, (self.d,), self.w[name + ".weight"], self.w[name + ".bias"], self.eps)

    def _block(self, h, norm, block):
        """A block with its residual add and its norm: post-norm LN(h + block(h)), pre-norm
        h + block(LN(h))."""
        if self.pre_norm:
            return h + block(self._ln(h, norm))
        return self._ln(h + block(h), norm)

    def _ffn(self, x, p):
        return self._lin(self.act(self._lin(x, p + ".fc1")), p + ".fc2")

    def _lin(self, x, name):
        return self.proj[name.replace(".", "/")](x)

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

            def attention(x):
                q = self._q(x, p + ".self_attn", H)
                k = self._split(self._lin(x, p + ".self_attn.k_proj"), H)
                v = self._split(self._lin(x, p + ".self_attn.v_proj"), H)
                return self._attend(q, k, v, mask, H, p + ".self_attn")
            h = self._block(h, p + ".self_attn_layer_norm", attention)
            h = self._block(h, p + ".final_layer_norm", lambda x: self._ffn(x, p))
        if self.enc_final_norm:
            h = self._ln(h, "model.encoder.layer_norm")
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

    def new_cache(self, capacity):
        """The decoder's per-hypothesis memory (select(idx, length) keeps rows idx)."""
        return KVCache(self.dec_layers, capacity)

    def decode(self, tgt, past_len, cache, xkv, xmask, causal=False):
        """tgt [N,T] decoder inputs at positions past_len..past_len+T-1; cache: a KVCache
        holding past_len positions (updated). Returns logits [N,T,V]."""
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

            def self_attention(x):
                q = self._q(x, p + ".self_attn", H)
                k, v = cache.append(i, self._split(self._lin(x, p + ".self_attn.k_proj"), H),
                                    self._split(self._lin(x, p + ".self_attn.v_proj"), H), past_len)
                return self._attend(q, k, v, smask, H, p + ".self_attn")

            def cross_attention(x):
                q = self._q(x, p + ".encoder_attn", H)
                return self._attend(q, xkv[i][0], xkv[i][1], xmask, H, p + ".encoder_attn")
            h = self._block(h, p + ".self_attn_layer_norm", self_attention)
            h = self._block(h, p + ".encoder_attn_layer_norm", cross_attention)
            h = self._block(h, p + ".final_layer_norm", lambda x: self._ffn(x, p))
        if self.dec_final_norm:
            h = self._ln(h, "model.decoder.layer_norm")
        return self.proj[self.OUT](h) + self.out_b

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
        cache = self.new_cache(dec_in.shape[1])
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
        cache = self.new_cache(max(mls))
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
            # HF greedy takes the argmax of the processed logits (not of the log-probs, where
            # rounding can merge two nearly equal values); ties -> the lowest id.
            masked = logits.clone()
            masked[:, self.bad_ids] = float("-inf")
            masked[torch.isinf(lp) & (lp < 0)] = float("-inf")
            nxt = torch.argmax(masked, dim=-1)
            top2 = torch.topk(lp, 2, dim=-1).values
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
                cache.select(idx, t)
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
        trace=True returns (list, margin) pairs: margin = the smallest gap between two scores
        whose order decided the search (candidate ranks, finalisation, stopping test)."""
        K = beam_size
        if K < 1 or not 1 <= n_best <= K:
            raise ValueError("need 1 <= n_best <= beam_size")
        src, lens = self._batch(srcs)
        B = len(srcs)
        V = self.tgt_vocab
        mls = self._max_len(max_length, B)
        enc, mask = self.encode(src, lens)
        rep = torch.arange(B).repeat_interleave(K)
        mask = mask.index_select(0, rep)
        xkv = [(k.index_select(0, rep), v.index_select(0, rep)) for k, v in self.cross_kv(enc)]
        cache = self.new_cache(max(mls))
        scores = torch.zeros(B, K)
        scores[:, 1:] = -1e9
        tokens = [[[] for _ in range(K)] for _ in range(B)]
        hyps = [_Hyps(K, length_penalty) for _ in range(B)]
        margin = [float("inf")] * B
        alive = list(range(B))  # sentences still searching; tensor rows = [a*K .. a*K+K-1]
        cur = torch.full((B * K, 1), self.start, dtype=torch.long)
        t = 0
        while alive:
            t += 1
            logits = self.decode(cur, t - 1, cache, xkv, mask)[:, 0, :]
            lp = self.step_logprobs(logits)
            for a, b in enumerate(alive):
                if t >= mls[b]:
                    lp[a * K:(a + 1) * K, :] = float("-inf")
                    lp[a * K:(a + 1) * K, self.eos] = 0.0
            cand = (lp + scores.view(-1, 1)).view(len(alive), K * V)
            top_v, top_i = _topk_stable(cand, 2 * K + 1)
            keep, rows, toks, new_scores = [], [], [], []
            for a, b in enumerate(alive):
                vals = top_v[a].tolist()
                idxs = top_i[a].tolist()
                if trace:
                    margin[b] = min(margin[b], _rank_margin(vals, idxs, V, K, self.eos))
                nb = []
                for rank in range(2 * K):
                    bi, v = divmod(idxs[rank], V)
                    if v == self.eos:
                        if rank < K:
                            m = hyps[b].add(tokens[b][bi], vals[rank], t)
                            margin[b] = min(margin[b], m)
                    else:
                        nb.append((bi, v, vals[rank]))
                        if len(nb) == K:
                            break
                done, m = hyps[b].is_done(vals[0], t, idxs[0] % V == self.eos)
                margin[b] = min(margin[b], m)
                if done or t >= mls[b]:  # after a forced </s> the running beams are -inf
                    continue
                keep.append(a)
                tokens[b] = [tokens[b][bi] + [v] for bi, v, _ in nb]
                rows += [a * K + bi for bi, _, _ in nb]
                toks += [v for _, v, _ in nb]
                new_scores.append([sc for _, _, sc in nb])
            if not keep:
                break
            cache.select(torch.tensor(rows, dtype=torch.long), t)
            if len(keep) != len(alive):
                ka = torch.tensor(keep, dtype=torch.long)
                r = (ka[:, None] * K + torch.arange(K)[None, :]).reshape(-1)
                xkv = [(k.index_select(0, r), v.index_select(0, r)) for k, v in xkv]
                mask = mask.index_select(0, r)
                alive = [alive[a] for a in keep]
            scores = torch.tensor(new_scores, dtype=torch.float32)
            cur = torch.tensor(toks, dtype=torch.long)[:, None]
        res = []
        for b in range(B):
            r = hyps[b].best(n_best)
            if trace:
                top = hyps[b].best(min(hyps[b].k, len(hyps[b].beams)))
                for j in range(min(n_best, len(top) - 1)):
                    margin[b] = min(margin[b], top[j][1] - top[j + 1][1])
            res.append((r, margin[b]) if trace else r)
        return res


class _Hyps:
    """HF 4.2x BeamHypotheses (finished hypotheses of one sentence)."""

    def __init__(self, k, length_penalty):
        self.k = k
        self.lp = length_penalty
        self.beams = []  # (score, ids, insertion order)
        self.worst = 1e9
        self.n = 0

    def add(self, ids, sum_logprobs, length):
        """Returns the margin of the accept decision (|score - worst| when it mattered)."""
        score = sum_logprobs / (length ** self.lp)
        margin = float("inf")
        if len(self.beams) >= self.k:
            margin = abs(score - self.worst)
        if len(self.beams) < self.k or score > self.worst:
            self.n += 1
            self.beams.append((score, list(ids), self.n))
            if len(self.beams) > self.k:
                srt = sorted((s, i) for i, (s, _, _) in enumerate(self.beams))
                del self.beams[srt[0][1]]
                self.worst = srt[1][0]
            else:
                self.worst = min(score, self.worst)
        return margin

    def is_done(self, best_sum_logprobs, cur_len, best_is_eos=False):
        if len(self.beams) < self.k:
            return False, float("inf")
        cur = best_sum_logprobs / (cur_len ** self.lp)
        margin = abs(self.worst - cur)
        if best_is_eos:
            # The best candidate is itself a </s> just offered to ADD: worst == cur exactly when
            # it became the lowest, which is decided by its gaps to the other finished scores.
            others = sorted(abs(s - cur) for s, _, _ in self.beams)
            margin = others[1] if others and others[0] == 0.0 and len(others) > 1 else others[0]
        return self.worst >= cur, margin

    def best(self, n):
        # HF: sorted(key=score) then pop() from the end: equal scores -> the later-added first.
        srt = sorted(self.beams, key=lambda x: (x[0], x[2]), reverse=True)[:n]
        return [(ids, float(sc)) for sc, ids, _ in srt]


class KVCache:
    """Self-attention K/V per decoder layer, preallocated [N, H, capacity, head_dim]."""

    def __init__(self, layers, capacity):
        self.k = [None] * layers
        self.v = [None] * layers
        self.cap = capacity

    def append(self, i, k, v, past):
        T = k.shape[2]
        if self.k[i] is None:
            n, h, _, hd = k.shape
            cap = max(self.cap, past + T)
            self.k[i] = torch.empty(n, h, cap, hd)
            self.v[i] = torch.empty(n, h, cap, hd)
        self.k[i][:, :, past:past + T] = k
        self.v[i][:, :, past:past + T] = v
        return self.k[i][:, :, :past + T], self.v[i][:, :, :past + T]

    def select(self, idx, length):
        """Keeps rows idx (in that order) of the first `length` positions."""
        for bufs in (self.k, self.v):
            for i, b in enumerate(bufs):
                if b is None:
                    continue
                part = b[:, :, :length].index_select(0, idx)
                if idx.numel() != b.shape[0]:
                    b = torch.empty(idx.numel(), b.shape[1], b.shape[2], b.shape[3])
                    bufs[i] = b
                b[:, :, :length] = part


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


def _rank_margin(vals, idxs, V, K, eos):
    """Smallest gap among the orderings that decided this step: the K-th best non-</s>
    candidate vs the next one (which beams survive), and each </s> candidate vs the rank
    K-1 / K boundary (whether it is finalised). vals/idxs: the best 2K+1 candidates."""
    m = float("inf")
    non = [r for r in range(len(vals)) if idxs[r] % V != eos]
    if len(non) > K:
        m = min(m, vals[non[K - 1]] - vals[non[K]])
    for r in range(len(vals)):
        if idxs[r] % V == eos:
            m = min(m, vals[r] - vals[K] if r < K else vals[K - 1] - vals[r])
    return m if math.isfinite(m) else float("inf")


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
        return text.replace("\u2581", " ").strip()


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
