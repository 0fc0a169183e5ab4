#!/usr/bin/python3
"""A random-weight checkpoint whose decoder layers are Marian's SSRU cell, as an HF-style directory
(config.json with "decoder_layer_kind": "ssru", model.safetensors, the demo model's SentencePiece
models and vocab.json), for marian_export.py (-> a Marian model.bin / .npz with
transformer-decoder-autoreg: rnn, dec-cell: ssru) and marian_semantics.py (the PyTorch reference).

    make_ssru_checkpoint.py OUT_DIR [--shape test|tiny|demo] [--seed N] [--decoder ssru|self_attention]
                            [--vocab-size N] [--fixed-length]

Shapes:
  tiny  the Firefox Translations (Bergamot) tiny student: d 256, 6 encoder layers, 2 SSRU decoder
        layers, FFN 1536, 8 heads, relu, tied-embeddings-all. Bergamot's students have a 32k
        shared vocabulary; no 32k SentencePiece model is in the repository, so the demo model's
        8k one is used (embedding and output rows 8,001 instead of 32,000) unless --vocab-size
        grows it (below).
  test  the same layout at d 64, 2 encoder layers, FFN 256, 4 heads.
  demo  the demo model (models/marian-en-de-tiny: d 256, 6 + 2 layers, FFN 1024, 4 heads, swish)
        with trained weights, each decoder self-attention replaced by a random SSRU cell (its
        layer norm kept): random networks repeat one token, this one translates into varied
        (not correct) German, which makes the line-by-line comparison with Bergamot meaningful.
--vocab-size N (> 8,001; random shapes, e.g. 32000 for the students' output projection): the
vocabulary grows the way make_random_checkpoint.py grows its "tiny32k" preset (extended_vocab():
output-only pieces after the demo's, the SentencePiece models stay the demo's, so sources segment
as with the demo model), except that <pad> stays the last id (N - 1), as marian_export.py
--vocab yml needs: the demo's pieces keep their ids 0..7,999, the added ones take 8,000..N-2.
Export with --vocab yml and convert with the SentencePiece model and the YAML vocabulary
(bench/README.md, SSRU section).
--fixed-length: the </s> logit bias is make_random_checkpoint.py's FIXED_LENGTH_EOS_BIAS, so </s>
is never chosen and every sentence decodes to the caller's length cap (benchmarks).
Weights: projections N(0, 1/fan_in) scaled by a gain, so that the encoder's output and each
decoder layer's inputs change the next token (the outputs follow the source instead of repeating
one token); </s> gets a logit bias so that most outputs end before Marian's length cap.
"""
import argparse
import json
import os
import shutil
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
DEMO = os.path.join(ROOT, "models", "marian-en-de-tiny")

SHAPES = {
    "tiny": dict(d=256, enc=6, dec=2, ffn=1536, heads=8),
    "test": dict(d=64, enc=2, dec=2, ffn=256, heads=4),
    "demo": dict(d=256, enc=6, dec=2, ffn=1024, heads=4),
}


def grown_vocab(size):
    """The demo's vocab.json {piece: id} grown to `size` ids with make_random_checkpoint.py's
    output-only pieces (extended_vocab), <pad> moved to the last id."""
    from make_random_checkpoint import extended_vocab
    with open(os.path.join(DEMO, "vocab.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    if vocab["<pad>"] != len(vocab) - 1:
        raise ValueError("the demo vocabulary's <pad> is not its last id")
    if size <= len(vocab):
        raise ValueError(f"--vocab-size {size}: must exceed the demo vocabulary ({len(vocab)} ids)")
    out = extended_vocab({p: i for p, i in vocab.items() if p != "<pad>"}, size - 1)
    out["<pad>"] = size - 1
    return out


def make(out_dir, shape="test", seed=1, eos_bias=2.0, gain=1.5, out_gain=4.0, decoder="ssru", vocab_size=0,
         fixed_length=False):
    from marian_ref import write_safetensors
    s = SHAPES[shape]
    d, ffn = s["d"], s["ffn"]
    with open(os.path.join(DEMO, "config.json")) as f:
        demo = json.load(f)
    vocab = None
    if vocab_size:
        if shape == "demo":
            raise ValueError("--vocab-size: the demo shape keeps the demo model's trained vocabulary")
        vocab = grown_vocab(vocab_size)
        pad = vocab["<pad>"]
        demo.update({"vocab_size": vocab_size, "decoder_vocab_size": vocab_size, "pad_token_id": pad,
                     "decoder_start_token_id": pad, "bad_words_ids": [[pad]]})
    V = demo["vocab_size"]
    rng = np.random.default_rng(seed)
    w = {}

    def lin(name, rows, cols, bias=True, g=gain):
        w[name + ".weight"] = rng.normal(0, g / np.sqrt(cols), (rows, cols))
        if bias:
            w[name + ".bias"] = rng.normal(0, 0.05, rows)

    def norm(name):
        w[name + ".weight"] = 1 + rng.normal(0, 0.1, d)
        w[name + ".bias"] = rng.normal(0, 0.1, d)

    emb = rng.normal(0, 1 / np.sqrt(d), (V, d))
    emb[demo["pad_token_id"]] = 0
    w["model.shared.weight"] = emb
    bias = rng.normal(0, 0.1, (1, V))
    if fixed_length:
        from make_random_checkpoint import FIXED_LENGTH_EOS_BIAS
        bias[0, demo["eos_token_id"]] = FIXED_LENGTH_EOS_BIAS
    else:
        bias[0, demo["eos_token_id"]] += eos_bias
    w["final_logits_bias"] = bias
    for i in range(s["enc"]):
        p = f"model.encoder.layers.{i}"
        for x in ("q", "k", "v", "out"):
            lin(f"{p}.self_attn.{x}_proj", d, d)
        norm(p + ".self_attn_layer_norm")
        lin(p + ".fc1", ffn, d)
        lin(p + ".fc2", d, ffn)
        norm(p + ".final_layer_norm")
    for i in range(s["dec"]):
        p = f"model.decoder.layers.{i}"
        if decoder == "ssru":
            lin(p + ".ssru.in_proj", d, d, bias=False)
            lin(p + ".ssru.forget_proj", d, d)
            norm(p + ".ssru_layer_norm")
        else:  # the same network with Marian's transformer decoder layers (benchmarks)
            for x in ("q", "k", "v", "out"):
                lin(f"{p}.self_attn.{x}_proj", d, d)
            norm(p + ".self_attn_layer_norm")
        for x in ("q", "k", "v"):
            lin(f"{p}.encoder_attn.{x}_proj", d, d)
        lin(f"{p}.encoder_attn.out_proj", d, d, g=out_gain)  # the source outweighs the input token
        norm(p + ".encoder_attn_layer_norm")
        lin(p + ".fc1", ffn, d)
        lin(p + ".fc2", d, ffn, g=out_gain)
        norm(p + ".final_layer_norm")

    if shape == "demo" and decoder == "ssru":
        # the demo model's trained weights, its self-attention replaced by random SSRU cells
        from marian_ref import read_safetensors
        trained = {k: v.numpy().astype(np.float64) for k, v in read_safetensors(os.path.join(DEMO, "model.safetensors")).items()}
        for i in range(s["dec"]):
            p = f"model.decoder.layers.{i}"
            for k in list(trained):
                if k.startswith(p + ".self_attn."):
                    del trained[k]
            for part in ("weight", "bias"):
                trained[f"{p}.ssru_layer_norm.{part}"] = trained.pop(f"{p}.self_attn_layer_norm.{part}")
            for k in (".ssru.in_proj.weight", ".ssru.forget_proj.weight", ".ssru.forget_proj.bias"):
                trained[p + k] = w[p + k]
        w = trained
    os.makedirs(out_dir, exist_ok=True)
    cfg = dict(demo)
    if shape == "demo":
        s = dict(s, ffn=demo["encoder_ffn_dim"])
        ffn = s["ffn"]
    cfg.update({"d_model": d, "encoder_layers": s["enc"], "decoder_layers": s["dec"],
                "encoder_attention_heads": s["heads"], "decoder_attention_heads": s["heads"],
                "encoder_ffn_dim": ffn, "decoder_ffn_dim": ffn,
                "activation_function": demo["activation_function"] if shape == "demo" else "relu",
                "decoder_layer_kind": decoder})
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    write_safetensors(os.path.join(out_dir, "model.safetensors"),
                      {k: torch.tensor(np.asarray(v, np.float32)) for k, v in w.items()})
    for name in ("source.spm", "target.spm", "vocab.json", "generation_config.json", "tokenizer_config.json"):
        shutil.copyfile(os.path.join(DEMO, name), os.path.join(out_dir, name))
    if vocab is not None:
        with open(os.path.join(out_dir, "vocab.json"), "w", encoding="utf-8") as f:
            json.dump(vocab, f, ensure_ascii=False, indent=1)
        with open(os.path.join(out_dir, "generation_config.json")) as f:
            gen = json.load(f)
        gen.update({k: demo[k] for k in ("pad_token_id", "decoder_start_token_id", "bad_words_ids")})
        with open(os.path.join(out_dir, "generation_config.json"), "w") as f:
            json.dump(gen, f, indent=2)
    return out_dir


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--shape", choices=sorted(SHAPES), default="test")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--decoder", choices=["ssru", "self_attention"], default="ssru",
                    help="self_attention: the same random network with transformer decoder layers (benchmarks)")
    ap.add_argument("--vocab-size", type=int, default=0,
                    help="grow the shared vocabulary to N ids (e.g. 32000; not with --shape demo)")
    ap.add_argument("--fixed-length", action="store_true",
                    help="</s> is never chosen: outputs run to the length cap (benchmarks)")
    a = ap.parse_args(argv)
    try:
        make(a.out_dir, a.shape, a.seed, decoder=a.decoder, vocab_size=a.vocab_size, fixed_length=a.fixed_length)
    except ValueError as e:
        ap.error(str(e))
    V = a.vocab_size or "8001"
    print(f"wrote a random {a.shape} checkpoint ({a.decoder} decoder layers, {V} ids"
          f"{', fixed length' if a.fixed_length else ''}) to {a.out_dir}")


if __name__ == "__main__":
    main()
