#!/usr/bin/python3
"""The PyTorch reference (marian_ref.MarianRef) with Marian's own semantics instead of HF's.

An HF MarianMT checkpoint exported by marian_export.py and run by Marian computes:
  * positions: Marian's sinusoid, in float32: num_timescales = d/2,
    increment = log(10000) / (num_timescales - 1), sin(p·exp(-i·increment)) in the first half
    and cos in the second (HF: p / 10000^(2i/d));
  * layer norm eps 1e-6 (HF 1e-5);
  * the first decoder input is a zero vector (+ position 0), not the <pad> embedding.
Everything else (weights, search over the log-probs, <pad> never generated) is as in MarianRef.

    marian_semantics.py MODEL_DIR [marian_ref.py options]    (same CLI as marian_ref.py)
"""
import math
import os
import sys

import numpy as np
import torch

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


if __name__ == "__main__":
    marian_ref.MarianRef = MarianSemanticsRef
    sys.exit(marian_ref._main(sys.argv[1:]))
