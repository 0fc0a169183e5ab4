#!/usr/bin/python3
"""Writes a random-initialised HF M2M100 checkpoint directory (model_type "m2m_100"; seeded,
deterministic) in the layout transformers' M2M100ForConditionalGeneration and M2M100Tokenizer
read, with small shapes:

  /usr/bin/python3 tests/reference/make_m2m100_checkpoint.py OUT_DIR [--seed 1] [--spm FILE]
      [--langs en,de,fr] [--d-model 64] [--layers 2] [--heads 4] [--ffn 256]

Contents:
  config.json            model_type m2m_100, pre-norm (M2M100 always is), relu, scale_embedding
                         true, pad 1 / bos 0 / eos 2 / decoder_start 2, max_position_embeddings
                         (positions are the sinusoid at index + pad + 1: not in the checkpoint, as
                         HF keeps them in a non-persistent buffer)
  model.safetensors      model.shared.weight [V, d] and its tied copies
                         model.{encoder,decoder}.embed_tokens.weight and lm_head.weight (older
                         save_pretrained writes them all), per layer the HF MarianMT names
                         (self_attn.{q,k,v,out}_proj, self_attn_layer_norm, encoder_attn.*,
                         encoder_attn_layer_norm, fc1, fc2, final_layer_norm), the stacks' final
                         norms model.{encoder,decoder}.layer_norm
  sentencepiece.bpe.model  the SentencePiece model (--spm; default the demo's source.spm: the
                         tokenizer kind does not matter to the model's shapes)
  vocab.json             fairseq's dictionary: <s> 0, <pad> 1, </s> 2, <unk> 3, then the .spm's
                         normal pieces in .spm order
  tokenizer_config.json  tokenizer_class M2M100Tokenizer, src_lang, tgt_lang, language_codes
  added_tokens.json      the language tokens __xx__ after the dictionary (V = dictionary +
                         languages), as M2M100Tokenizer numbers them
  generation_config.json decoder_start_token_id 2 (the target language is forced as the first
                         generated token: forced_bos_token_id is per request)

A source is [__src__] pieces </s>; the decoder starts with </s>, its first token is forced to
__tgt__. Initialisation as make_random_checkpoint.py (linear N(0, 1/sqrt(d)), residual branches
x0.5, embeddings N(0, 1.5/sqrt(d)), biases N(0, 0.02), LayerNorm gamma 1 + N(0, 0.1), beta
N(0, 0.05), the decoder's final norm x -2 (anti-repeat, sharper outputs), </s> row of the output
raised with the position so outputs end).

Needs numpy and torch (Debian's python3-numpy, python3-torch).
"""
import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "reference"))
from marian_ref import m2m100_sinusoid, write_safetensors  # noqa: E402

DEMO_SPM = os.path.join(ROOT, "models", "marian-en-de-tiny", "source.spm")
PAD, BOS, EOS, UNK = 1, 0, 2, 3


def spm_pieces(path):
    """(piece, type) of a serialized ModelProto, in order (field 1: SentencePiece {1 piece, 3 type})."""
    with open(path, "rb") as f:
        b = f.read()

    def varint(o):
        v = s = 0
        while True:
            c = b[o]
            o += 1
            v |= (c & 0x7F) << s
            s += 7
            if c < 0x80:
                return v, o

    out, o = [], 0
    while o < len(b):
        key, o = varint(o)
        field, wire = key >> 3, key & 7
        if wire == 2:
            n, o = varint(o)
            if field == 1:
                sub, piece, ptype, p = b[o:o + n], None, 1, 0
                while p < len(sub):
                    k, p2 = 0, p
                    k = sub[p2]
                    p2 += 1
                    f2, w2 = k >> 3, k & 7
                    if w2 == 2:
                        ln = sub[p2]
                        p2 += 1
                        if ln >= 0x80:  # two-byte length
                            ln = (ln & 0x7F) | (sub[p2] << 7)
                            p2 += 1
                        if f2 == 1:
                            piece = sub[p2:p2 + ln].decode("utf-8")
                        p = p2 + ln
                    elif w2 == 5:
                        p = p2 + 4
                    elif w2 == 0:
                        while sub[p2] >= 0x80:
                            p2 += 1
                        if f2 == 3:
                            ptype = sub[p2]
                        p = p2 + 1
                    else:
                        raise ValueError("unexpected wire type in a SentencePiece entry")
                out.append((piece, ptype))
            o += n
        elif wire == 0:
            _, o = varint(o)
        elif wire == 5:
            o += 4
        elif wire == 1:
            o += 8
        else:
            raise ValueError(f"{path}: unexpected wire type {wire}")
    return out


def dictionary(spm):
    """fairseq's dictionary of an .spm: <s> <pad> </s> <unk>, then its normal pieces."""
    vocab = {"<s>": BOS, "<pad>": PAD, "</s>": EOS, "<unk>": UNK}
    for piece, ptype in spm_pieces(spm):
        if ptype == 1 and piece not in vocab:
            vocab[piece] = len(vocab)
    return vocab


def build(out, seed=1, spm=DEMO_SPM, langs=("en", "de", "fr"), d=64, layers=2, heads=4, ffn=256, max_pos=1024):
    os.makedirs(out, exist_ok=True)
    rng = np.random.Generator(np.random.PCG64(seed))
    vocab = dictionary(spm)
    lang_tokens = {f"__{l}__": len(vocab) + i for i, l in enumerate(langs)}
    V = len(vocab) + len(lang_tokens)

    def normal(shape, s):
        return (rng.standard_normal(shape) * s).astype(np.float32)

    t = {}

    def linear(name, n_out, n_in, gain=1.0):
        t[name + ".weight"] = normal((n_out, n_in), gain / np.sqrt(n_in))
        t[name + ".bias"] = normal((n_out,), 0.02)

    def ln(name, gain=1.0):
        t[name + ".weight"] = ((1 + normal((d,), 0.1)) * gain).astype(np.float32)
        t[name + ".bias"] = normal((d,), 0.05)

    emb = normal((V, d), 1.5 / np.sqrt(d))
    for side in ("encoder", "decoder"):
        for i in range(layers):
            p = f"model.{side}.layers.{i}"
            attns = ("self_attn", "encoder_attn") if side == "decoder" else ("self_attn",)
            for a in attns:
                for proj in ("q_proj", "k_proj", "v_proj"):
                    linear(f"{p}.{a}.{proj}", d, d)
                linear(f"{p}.{a}.out_proj", d, d, 0.5)
                ln(f"{p}.{a}_layer_norm")
            linear(f"{p}.fc1", ffn, d)
            linear(f"{p}.fc2", d, ffn, 0.5)
            ln(f"{p}.final_layer_norm")
        ln(f"model.{side}.layer_norm", -2.0 if side == "decoder" else 1.0)
    # </s> grows likelier with the position: its output row follows the positions' drift
    pos = m2m100_sinusoid(max_pos, d, PAD).numpy()
    u = pos[40] - pos[0]
    emb[EOS] = (-u / np.linalg.norm(u) * 4.0).astype(np.float32)
    t["model.shared.weight"] = emb
    t["model.encoder.embed_tokens.weight"] = emb
    t["model.decoder.embed_tokens.weight"] = emb
    t["lm_head.weight"] = emb
    write_safetensors(os.path.join(out, "model.safetensors"), t)

    config = {
        "model_type": "m2m_100", "architectures": ["M2M100ForConditionalGeneration"],
        "d_model": d, "encoder_layers": layers, "decoder_layers": layers,
        "encoder_attention_heads": heads, "decoder_attention_heads": heads,
        "encoder_ffn_dim": ffn, "decoder_ffn_dim": ffn, "activation_function": "relu",
        "scale_embedding": True, "max_position_embeddings": max_pos, "vocab_size": V,
        "pad_token_id": PAD, "bos_token_id": BOS, "eos_token_id": EOS, "decoder_start_token_id": EOS,
        "dropout": 0.0, "attention_dropout": 0.0, "activation_dropout": 0.0,
        "encoder_layerdrop": 0.0, "decoder_layerdrop": 0.0, "init_std": 0.02,
        "tie_word_embeddings": True, "is_encoder_decoder": True, "use_cache": True,
        "early_stopping": True, "num_beams": 4, "max_length": 200, "transformers_version": "4.36.0",
    }
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    with open(os.path.join(out, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": BOS, "decoder_start_token_id": EOS, "eos_token_id": EOS,
                   "pad_token_id": PAD, "num_beams": 4, "max_length": 200, "early_stopping": True}, f, indent=2)
    with open(os.path.join(out, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False, indent=0)
    with open(os.path.join(out, "added_tokens.json"), "w") as f:
        json.dump(lang_tokens, f, indent=0)
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "M2M100Tokenizer", "src_lang": langs[0], "tgt_lang": langs[1],
                   "language_codes": "m2m100", "model_max_length": max_pos, "bos_token": "<s>", "eos_token": "</s>",
                   "pad_token": "<pad>", "unk_token": "<unk>", "sep_token": "</s>"}, f, indent=2)
    with open(spm, "rb") as src, open(os.path.join(out, "sentencepiece.bpe.model"), "wb") as dst:
        dst.write(src.read())
    return dict(vocab_size=V, lang_tokens=lang_tokens)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--spm", default=DEMO_SPM)
    ap.add_argument("--langs", default="en,de,fr")
    ap.add_argument("--d-model", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=256)
    a = ap.parse_args()
    info = build(a.out, a.seed, a.spm, tuple(a.langs.split(",")), a.d_model, a.layers, a.heads, a.ffn)
    print(json.dumps(info))


if __name__ == "__main__":
    main()
