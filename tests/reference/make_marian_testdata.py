#!/usr/bin/python3
"""Writes the small Marian checkpoints of tests/unit/host/marian_checkpoint_test.cc.

    /usr/bin/python3 tests/reference/make_marian_testdata.py [OUT_DIR]   (default tests/data/marian)

OUT_DIR/hf/   a random HF MarianMT checkpoint (seeded): d 8, 2 heads, 1 encoder + 1 decoder
              layer, FFN 16, swish, 12 ids (</s>=0, <unk>=1, <pad>=11 last), shared and tied
              embeddings, a final_logits_bias; config.json, model.safetensors, vocab.json
OUT_DIR/      that checkpoint exported by marian_export.py (--vocab yml, so Marian id = HF id
              and the <pad> row is dropped):
              all.npz, all.bin, all.int8.bin (tied-embeddings-all), tied.bin
              (tied-embeddings), untied.npz (decoder_ff_logit_out_Wt), vocab.yml
"""
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import marian_export  # noqa: E402
from marian_ref import write_safetensors  # noqa: E402

D, HEADS, FFN, VOCAB = 8, 2, 16, 12


def make_hf(out):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(7)
    w = {}

    def lin(name, n_out, n_in):
        w[name + ".weight"] = rng.normal(0, 0.3, (n_out, n_in)).astype(np.float32)
        w[name + ".bias"] = rng.normal(0, 0.1, (n_out,)).astype(np.float32)

    def ln(name):
        w[name + ".weight"] = (1 + rng.normal(0, 0.1, (D,))).astype(np.float32)
        w[name + ".bias"] = rng.normal(0, 0.1, (D,)).astype(np.float32)

    def attn(p, norm):
        for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
            lin(f"{p}.{proj}", D, D)
        ln(norm)

    def ffn(p):
        lin(f"{p}.fc1", FFN, D)
        lin(f"{p}.fc2", D, FFN)
        ln(f"{p}.final_layer_norm")

    w["model.shared.weight"] = rng.normal(0, 0.5, (VOCAB, D)).astype(np.float32)
    w["final_logits_bias"] = rng.normal(0, 0.1, (1, VOCAB)).astype(np.float32)
    attn("model.encoder.layers.0.self_attn", "model.encoder.layers.0.self_attn_layer_norm")
    ffn("model.encoder.layers.0")
    attn("model.decoder.layers.0.self_attn", "model.decoder.layers.0.self_attn_layer_norm")
    attn("model.decoder.layers.0.encoder_attn", "model.decoder.layers.0.encoder_attn_layer_norm")
    ffn("model.decoder.layers.0")
    write_safetensors(os.path.join(out, "model.safetensors"), w)
    cfg = {"model_type": "marian", "vocab_size": VOCAB, "d_model": D, "encoder_layers": 1,
           "decoder_layers": 1, "encoder_attention_heads": HEADS, "decoder_attention_heads": HEADS,
           "encoder_ffn_dim": FFN, "decoder_ffn_dim": FFN, "activation_function": "swish",
           "max_position_embeddings": 64, "scale_embedding": True, "static_position_embeddings": True,
           "share_encoder_decoder_embeddings": True, "tie_word_embeddings": True,
           "pad_token_id": VOCAB - 1, "eos_token_id": 0, "decoder_start_token_id": VOCAB - 1}
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    pieces = ["</s>", "<unk>", "\u2581a", "\u2581b", "c", "\u2581\"q\"", "d:", "#e", "'f'", "\u2581g", "h"]
    vocab = {p: i for i, p in enumerate(pieces)}
    vocab["<pad>"] = VOCAB - 1
    with open(os.path.join(out, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False, indent=1)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "data", "marian")
    hf = os.path.join(out, "hf")
    make_hf(hf)
    for tying, writers in (("all", ("npz", "bin", "int8")), ("tied", ("bin",)), ("untied", ("npz",))):
        params, yml, vocabs = marian_export.marian_params(hf, tying, "yml")
        if "npz" in writers:
            marian_export.write_npz(os.path.join(out, f"{tying}.npz"), params, yml)
        if "bin" in writers:
            marian_export.write_bin(os.path.join(out, f"{tying}.bin"), params, yml)
        if "int8" in writers:
            marian_export.write_bin(os.path.join(out, f"{tying}.int8.bin"), params, yml, int8=True)
    marian_export.write_vocabs(out, vocabs)
    print("wrote", out)


if __name__ == "__main__":
    main()
