#!/usr/bin/python3
"""The PyTorch reference (marian_ref.MarianRef) with Marian's own semantics instead of HF's.

An HF MarianMT checkpoint exported by marian_export.py and run by Marian computes:
  * positions: Marian's sinusoid, in float32: num_timescales = d/2,
    increment = log(10000) / (num_timescales - 1), sin(p·exp(-i·increment)) in the first half
    and cos in the second (HF: p / 10000^(2i/d));
  * layer norm eps 1e-6 (HF 1e-5);
  * the first decoder input is a zero vector (+ position 0), not the <pad> embedding.
Everything else (weights, search over the log-probs, <pad> never generated) is as in MarianRef.

Decoder layers of Marian's SSRU cell (transformer-decoder-autoreg: rnn, dec-cell: ssru; Marian's
src/rnn/cells.h SSRU and the transformer's DecoderLayerRNN) when config.json says
"decoder_layer_kind": "ssru" (tensors model.decoder.layers.<i>.ssru.in_proj.weight,
.ssru.forget_proj.{weight,bias}, .ssru_layer_norm.{weight,bias}): per step and hypothesis
    f = sigmoid(x Wf^T + bf);  c = f * c_prev + (1 - f) * (x W^T);  x = LN(relu(c) + x)
with c = 0 before the first step, instead of self-attention; cross-attention and FFN as before.

    marian_semantics.py MODEL_DIR [marian_ref.py options]    (same CLI as marian_ref.py)
"""
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import marian_ref  # noqa: E402


def marian_sinusoid(n_pos, dim):
    """Marian's positional table [n_pos, dim], computed in float32 as Marian does."""
    half = dim // 2
    inc = np.float32(math.log(10000.0) / (np.float32(dim) / 2 - 1))
    scales = np.exp(np.arange(half, dtype=np.float32) * -inc).astype(np.float32)
    v = np.arange(n_pos, dtype=np.float32)[:, None] * scales[None, :]
    out = np.zeros((n_pos, dim), dtype=np.float32)
    out[:, :half] = np.sin(v)
    out[:, half:2 * half] = np.cos(v)
    return torch.from_numpy(out)


class MarianSemanticsRef(marian_ref.MarianRef):
    def __init__(self, model_dir):
        super().__init__(model_dir)
        self.eps = 1e-6
        self.enc_pos = self.dec_pos = marian_sinusoid(self.enc_pos.shape[0], self.d)
        # The decoder start id keeps its place in the table, as a zero row for the input side;
        # the output projection keeps the stored row (it is masked like <pad> anyway).
        self.out_w = self.out_w.clone()
        table = self.dec_embed.clone()
        table[self.start] = 0.0
        self.dec_embed = table


    # -- SSRU decoder layers

    def new_cache(self, capacity):
        return SsruState(self.dec_layers) if self.ssru else super().new_cache(capacity)

    def decode(self, tgt, past_len, cache, xkv, xmask, causal=False):
        if not self.ssru:
            return super().decode(tgt, past_len, cache, xkv, xmask, causal)
        N, T = tgt.shape
        if past_len + T > self.dec_pos.shape[0]:
            raise ValueError("target length beyond max_position_embeddings")
        h = F.embedding(tgt, self.dec_embed) * self.embed_scale + self.dec_pos[past_len:past_len + T][None]
        H = self.dec_heads
        for i in range(self.dec_layers):
            p = f"model.decoder.layers.{i}"
            xw = self._lin(h, p + ".ssru.in_proj")
            f = torch.sigmoid(self._lin(h, p + ".ssru.forget_proj"))
            c = cache.get(i, N, self.d)
            out = torch.empty_like(h)
            for t in range(T):  # the recurrence, one position at a time
                c = f[:, t] * c + (1 - f[:, t]) * xw[:, t]
                out[:, t] = torch.relu(c)
            cache.c[i] = c
            h = self._ln(out + h, p + ".ssru_layer_norm")
            q = self._q(h, p + ".encoder_attn", H)
            h = self._ln(h + self._attend(q, xkv[i][0], xkv[i][1], xmask, H, p + ".encoder_attn"),
                         p + ".encoder_attn_layer_norm")
            g = self._lin(self.act(self._lin(h, p + ".fc1")), p + ".fc2")
            h = self._ln(h + g, p + ".final_layer_norm")
        return self.proj[self.OUT](h) + self.out_b


class SsruState:
    """The SSRU cell states of the decoder layers, [N, d] each (zero before the first step)."""

    def __init__(self, layers):
        self.c = [None] * layers

    def get(self, i, n, d):
        if self.c[i] is None:
            self.c[i] = torch.zeros(n, d)
        return self.c[i]

    def select(self, idx, length):  # noqa: ARG002 (the KV cache's interface)
        self.c = [None if c is None else c.index_select(0, idx) for c in self.c]


if __name__ == "__main__":
    marian_ref.MarianRef = MarianSemanticsRef
    sys.exit(marian_ref._main(sys.argv[1:]))
