#!/usr/bin/python3
"""Writes a random-initialised HF MarianMT checkpoint directory (seeded, deterministic).

  /usr/bin/python3 tests/reference/make_random_checkpoint.py OUT_DIR --preset big-relu-sep [--seed 1]
      [--fixed-length] [--set dtype=\"BF16\" --set untied_lm_head=true ...]   (values are JSON)

Contents: config.json, generation_config.json, model.safetensors (written by hand, F32/F16/BF16),
source.spm, target.spm, vocab.json, tokenizer_config.json copied from models/marian-en-de-tiny,
plus target_vocab.json for separate vocabularies.

Separate vocabularies (share_encoder_decoder_embeddings=false, tokenizer separate_vocabs=true):
  * source vocabulary = the demo's vocab.json (8001 ids, </s>=0, <unk>=1, <pad>=8000);
    encoder table `model.encoder.embed_tokens.weight` [8001, d].
  * target vocabulary (target_vocab.json) has a DIFFERENT size Vt: </s>=0, <unk>=1, then Vt-3
    demo pieces in a seeded shuffled order (so target id != source id for the same piece),
    and <pad>=Vt-1. target.spm pieces missing from it map to <unk>.
    decoder table `model.decoder.embed_tokens.weight` [Vt, d]; final_logits_bias [1, Vt];
    config decoder_vocab_size = Vt.
  * config pad_token_id = decoder_start_token_id = bad_words_ids = Vt-1, i.e. the TARGET <pad>
    (HF uses pad_token_id only on the decoder side: decoder start, never-generated token).
    The source <pad> (8000) is never a model input except as padding, which is masked.
Shared vocabulary: one table `model.shared.weight` [8001, d], ids as in the demo.
Language codes (lang_codes, e.g. [">>deu<<", ">>fra<<"]; preset "multi"): OPUS-MT multilingual
vocabularies hold target-language tokens that are not sentencepiece pieces. They are appended to
the source vocabulary after <pad> (ids 8001, 8002, ...; vocab_size grows, vocab.json is written
instead of copied); see vocab_with_codes().
Output projection: tied to the decoder table (no lm_head.weight) unless untied_lm_head
(tie_word_embeddings=false and a separate random `lm_head.weight`; preset "small").
store_positions=false leaves out `*.embed_positions.weight` (the sinusoid must be computed).
position_kind ("marian", "m2m100", "ct2"): the sinusoid stored as the position tables (m2m100:
HF M2M100's at the padding offset, ct2: CTranslate2's; marian_ref.py computes them); the
converter recognises each and stores none (the runtime computes it).
Pre-norm (pre_norm=true; presets "prenorm*"): config.json normalize_before=true, blocks
x + Block(LN(x)), and the stacks' final norms `model.encoder.layer_norm.*`,
`model.decoder.layer_norm.*` (final_norms, default: pre_norm); the anti_repeat / logit_gain factor
then goes to the decoder's final norm, the last norm before the output projection.
Larger shared vocabularies (vocab_size > 8001; presets "tiny32k", "base"): the demo's vocab.json
plus output-only pieces appended after it (ids 8001 .. vocab_size-1, see extended_vocab()): the
SentencePiece models stay the demo's, so sources segment exactly as with the demo model and
only the embedding / output projection grow to the deployed size.

Deployment shapes (presets for the benchmarks, bench/run_shapes.py; shared vocabulary, tied
output projection, fp32 safetensors):
  demo     the bundled models/marian-en-de-tiny's config (d 256, 4 heads, 6+2 layers, FFN 1024,
           swish, 8,001 ids), random weights;
  tiny32k  Bergamot/Firefox "tiny" students (browsermt/students: dim-emb 256, 8 heads, 6 encoder +
           2 decoder layers, FFN 1536, relu, 32k vocabulary; ~17 M parameters);
  base     Helsinki-NLP OPUS-MT base (d 512, 8 heads, 6+6 layers, FFN 2048, swish, 58,101 ids,
           512 positions; ~74 M parameters).
Fixed decode length (fixed_length=true, --fixed-length): final_logits_bias[</s>] =
FIXED_LENGTH_EOS_BIAS (and no eos_clock), so </s> is never chosen by itself: every sentence runs
to the caller's length cap, where </s> is forced (mtlite --max-length N / HF max_length N+1: N-1
ids + the forced </s>), and every engine decodes the same number of steps.

Initialisation (numpy PCG64(seed), standard normals, float32): linear weights N(0, 1/sqrt(d)),
then out_proj and fc2 weights x sublayer_gain (0.5: the residual stream, i.e. the input token,
stays strong); embeddings N(0, 1.5/sqrt(d)) (so the scaled input embedding has std 1.5 per
dimension; 1.5 when scale_embedding is false); untied lm_head N(0, 1.5/sqrt(d)); biases
N(0, 0.02); LayerNorm gamma 1 + N(0, 0.1), beta N(0, 0.05). The last decoder LayerNorm is
multiplied by -logit_gain (anti_repeat: a negative gamma turns "repeat the input token" into
"avoid it", which breaks the repetition loops random decoders fall into; logit_gain sharpens
the output distribution, so fewer near-ties). final_logits_bias N(0, 0.1), + eos_bias on </s>.
eos_clock: the </s> output row is set to eos_clock * u, u = the unit direction by which decoder
position embeddings from eos_clock_start on differ from earlier ones (sign-adjusted for
anti_repeat), so P(</s>) grows with the output length and outputs end at varied lengths.
The <pad> row is random (not zero), like the demo's trained one. The presets were tuned so that
greedy / beam outputs vary across inputs and mostly end by themselves within ~10-100 tokens.
"""
import argparse
import json
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from marian_ref import ct2_sinusoid, m2m100_sinusoid, marian_sinusoid, write_safetensors  # noqa: E402

DEMO = os.path.join(ROOT, "models", "marian-en-de-tiny")
# final_logits_bias at </s> for fixed_length: far below any logit of these models (|logit| < 100),
# exactly representable in F16 and BF16, finite (no inf/NaN in log_softmax or the beam scores).
FIXED_LENGTH_EOS_BIAS = -1.0e4


def _demo_shape():
    """The bundled demo model's architecture as build() arguments (read from its config.json)."""
    with open(os.path.join(DEMO, "config.json")) as f:
        c = json.load(f)
    return dict(d_model=c["d_model"], enc_heads=c["encoder_attention_heads"],
                dec_heads=c["decoder_attention_heads"], enc_layers=c["encoder_layers"],
                dec_layers=c["decoder_layers"], enc_ffn=c["encoder_ffn_dim"], dec_ffn=c["decoder_ffn_dim"],
                activation=c["activation_function"], vocab_size=c["vocab_size"],
                max_positions=c["max_position_embeddings"])

PRESETS = {
    # the shapes asked for: d 512, 8 heads, 3+3 layers, FFN 2048
    "big-relu-sep": dict(d_model=512, enc_heads=8, dec_heads=8, enc_layers=3, dec_layers=3,
                         enc_ffn=2048, dec_ffn=2048, activation="relu", target_vocab=6001,
                         dtype="F32", logit_gain=2.0, eos_clock=5.0, eos_bias=0.0),
    "big-gelu": dict(d_model=512, enc_heads=8, dec_heads=8, enc_layers=3, dec_layers=3,
                     enc_ffn=2048, dec_ffn=2048, activation="gelu", target_vocab=0, dtype="F16",
                     logit_gain=2.0, eos_clock=6.0, eos_bias=1.0),
    # small and fast; exercises the less common options
    "small": dict(d_model=64, enc_heads=4, dec_heads=4, enc_layers=2, dec_layers=2, enc_ffn=256,
                  dec_ffn=256, activation="gelu_new", target_vocab=0, dtype="BF16",
                  scale_embedding=False, untied_lm_head=True, store_positions=False,
                  logit_gain=2.0, eos_clock=5.0, eos_bias=0.0),
    # "small" with OPUS-MT multilingual language tokens in the (shared) vocabulary
    "multi": dict(d_model=64, enc_heads=4, dec_heads=4, enc_layers=2, dec_layers=2, enc_ffn=256,
                  dec_ffn=256, activation="gelu_new", target_vocab=0, dtype="BF16",
                  scale_embedding=False, untied_lm_head=True, store_positions=False,
                  logit_gain=2.0, eos_clock=5.0, eos_bias=0.0,
                  lang_codes=[">>deu<<", ">>fra<<", ">>xx<<", ">>por<<", ">>zho_Hans<<", ">>ünï<<"]),
    "small-sep": dict(d_model=64, enc_heads=2, dec_heads=4, enc_layers=1, dec_layers=2, enc_ffn=128,
                      dec_ffn=192, activation="swish", target_vocab=3001, dtype="F32",
                      logit_gain=2.0, eos_clock=3.0, eos_bias=0.0, sublayer_gain=0.8),
    # pre-norm stacks with final norms, each with one of the sinusoids the runtime computes
    "prenorm": dict(d_model=64, enc_heads=4, dec_heads=4, enc_layers=2, dec_layers=2, enc_ffn=256,
                    dec_ffn=256, activation="gelu", target_vocab=0, dtype="F32", pre_norm=True,
                    store_positions=False, logit_gain=2.0, eos_clock=5.0, eos_bias=0.0),
    "prenorm-m2m100": dict(d_model=64, enc_heads=4, dec_heads=4, enc_layers=2, dec_layers=2, enc_ffn=256,
                           dec_ffn=256, activation="relu", target_vocab=0, dtype="F32", pre_norm=True,
                           position_kind="m2m100", logit_gain=2.0, eos_clock=5.0, eos_bias=0.0),
    "prenorm-ct2": dict(d_model=64, enc_heads=2, dec_heads=4, enc_layers=1, dec_layers=2, enc_ffn=128,
                        dec_ffn=192, activation="swish", target_vocab=3001, dtype="F32", pre_norm=True,
                        position_kind="ct2", untied_lm_head=True, logit_gain=2.0, eos_clock=3.0,
                        eos_bias=0.0),
    # deployment shapes (module docstring); usually built with fixed_length for the benchmarks
    "demo": dict(_demo_shape(), dtype="F32", logit_gain=2.0, eos_clock=5.0, eos_bias=0.0),
    "tiny32k": dict(d_model=256, enc_heads=8, dec_heads=8, enc_layers=6, dec_layers=2, enc_ffn=1536,
                    dec_ffn=1536, activation="relu", vocab_size=32000, max_positions=256, dtype="F32",
                    logit_gain=2.0, eos_clock=5.0, eos_bias=0.0),
    "base": dict(d_model=512, enc_heads=8, dec_heads=8, enc_layers=6, dec_layers=6, enc_ffn=2048,
                 dec_ffn=2048, activation="swish", vocab_size=58101, max_positions=512, dtype="F32",
                 logit_gain=2.0, eos_clock=5.0, eos_bias=0.0),
}


def vocab_with_codes(lang_codes=()):
    """The demo's vocab.json {piece: id} with each language code not already in it appended."""
    with open(os.path.join(DEMO, "vocab.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    for code in lang_codes:
        if code not in vocab:
            vocab[code] = len(vocab)
    return vocab


def _extra_piece(i):
    """The i-th output-only piece: '\u2581' + a bijective base-26 numeral of lowercase letters,
    at least 4 letters ('\u2581aaaa', '\u2581aaab', ...)."""
    n = i + 26 ** 3 + 26 ** 2 + 26  # skip the 1..3-letter numerals
    letters = []
    while n >= 0:
        n, r = divmod(n, 26)
        letters.append(chr(ord("a") + r))
        n -= 1
    return "\u2581" + "".join(reversed(letters))


def extended_vocab(vocab, size):
    """vocab {piece: id} (dense ids 0..len-1) grown to `size` ids with output-only pieces that are
    not in it (_extra_piece order, ids len(vocab), len(vocab)+1, ...)."""
    if size < len(vocab):
        raise ValueError(f"vocab_size {size} is smaller than the demo vocabulary ({len(vocab)} ids)")
    out = dict(vocab)
    i = 0
    while len(out) < size:
        p = _extra_piece(i)
        i += 1
        if p not in out:
            out[p] = len(out)
    return out


def build(out, d_model, enc_heads, dec_heads, enc_layers, dec_layers, enc_ffn, dec_ffn,
          activation, target_vocab=0, dtype="F32", seed=1, std=None, embed_std=None,
          eos_bias=None, scale_embedding=True, untied_lm_head=False, store_positions=True,
          max_positions=256, anti_repeat=True, sublayer_gain=0.5, eos_clock=0.0,
          eos_clock_start=10, logit_gain=1.0, lang_codes=(), vocab_size=0, fixed_length=False,
          pre_norm=False, final_norms=None, position_kind="marian"):
    rng = np.random.Generator(np.random.PCG64(seed))
    d = d_model
    std = std if std is not None else 1.0 / np.sqrt(d)
    if embed_std is None:  # per-dimension std of the scaled input embedding: 1.5
        embed_std = 1.5 / np.sqrt(d) if scale_embedding else 1.5
    head_std = 1.5 / np.sqrt(d)  # untied lm_head: logits of std ~1.5
    if eos_bias is None:
        eos_bias = 4.0

    def positions():
        if position_kind == "m2m100":
            return m2m100_sinusoid(max_positions, d, pad)
        if position_kind == "ct2":
            return ct2_sinusoid(max_positions, d)
        if position_kind != "marian":
            raise ValueError(f"position_kind {position_kind!r} is not marian, m2m100 or ct2")
        return marian_sinusoid(max_positions, d)

    def normal(shape, s):
        return (rng.standard_normal(size=shape) * s).astype(np.float32)

    src_vocab = vocab_with_codes(lang_codes)
    grown = vocab_size > len(src_vocab)
    if vocab_size:
        if target_vocab:
            raise ValueError("vocab_size applies to a shared vocabulary (target_vocab = 0)")
        src_vocab = extended_vocab(src_vocab, vocab_size)
    if fixed_length:
        eos_clock = 0.0
    vs = len(src_vocab)
    eos, unk, src_pad = src_vocab["</s>"], src_vocab["<unk>"], src_vocab["<pad>"]
    separate = bool(target_vocab)
    if separate:
        vt = int(target_vocab)
        if not (4 <= vt <= vs):
            raise ValueError("target vocab size must be in [4, source vocab size]")
        pieces = [p for p, i in sorted(src_vocab.items(), key=lambda x: x[1])
                  if p not in ("</s>", "<unk>", "<pad>")]
        perm = rng.permutation(len(pieces))[:vt - 3]
        tgt_pieces = ["</s>", "<unk>"] + [pieces[i] for i in perm] + ["<pad>"]
        tgt_vocab = {p: i for i, p in enumerate(tgt_pieces)}
        pad = vt - 1
    else:
        vt = vs
        tgt_vocab = None
        pad = src_pad

    w = {}

    def linear(name, n_out, n_in):
        w[name + ".weight"] = normal((n_out, n_in), std)
        w[name + ".bias"] = normal((n_out,), 0.02)

    def ln(name, gain=1.0):
        w[name + ".weight"] = (gain * (1.0 + normal((d,), 0.1))).astype(np.float32)
        w[name + ".bias"] = (abs(gain) * normal((d,), 0.05)).astype(np.float32)

    if separate:
        w["model.encoder.embed_tokens.weight"] = normal((vs, d), embed_std)
        w["model.decoder.embed_tokens.weight"] = normal((vt, d), embed_std)
    else:
        w["model.shared.weight"] = normal((vs, d), embed_std)
    for i in range(enc_layers):
        p = f"model.encoder.layers.{i}"
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            linear(f"{p}.self_attn.{n}", d, d)
        ln(p + ".self_attn_layer_norm")
        linear(p + ".fc1", enc_ffn, d)
        linear(p + ".fc2", d, enc_ffn)
        ln(p + ".final_layer_norm")
    for i in range(dec_layers):
        p = f"model.decoder.layers.{i}"
        for att in ("self_attn", "encoder_attn"):
            for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
                linear(f"{p}.{att}.{n}", d, d)
            ln(f"{p}.{att}_layer_norm")
        linear(p + ".fc1", dec_ffn, d)
        linear(p + ".fc2", d, dec_ffn)
        last = i == dec_layers - 1 and not pre_norm
        ln(p + ".final_layer_norm", ((-1.0 if anti_repeat else 1.0) * logit_gain) if last else 1.0)
    if pre_norm if final_norms is None else final_norms:
        ln("model.encoder.layer_norm")
        ln("model.decoder.layer_norm", ((-1.0 if anti_repeat else 1.0) * logit_gain) if pre_norm else 1.0)
    for k in list(w):
        if k.endswith("out_proj.weight") or k.endswith("fc2.weight"):
            w[k] = (w[k] * np.float32(sublayer_gain)).astype(np.float32)
    fb = normal((1, vt), 0.1)
    if fixed_length:
        fb[0, eos] = FIXED_LENGTH_EOS_BIAS
    else:
        fb[0, eos] += eos_bias
    w["final_logits_bias"] = fb
    if untied_lm_head:
        w["lm_head.weight"] = normal((vt, d), head_std)
    if eos_clock:
        # A length "clock": the </s> output row points along the direction by which later
        # decoder positions differ from early ones, so P(</s>) grows with the output length.
        pos = positions().numpy().astype(np.float64)
        u = pos[eos_clock_start:].mean(0) - pos[:eos_clock_start].mean(0)
        u *= eos_clock / np.linalg.norm(u) * (-1.0 if anti_repeat else 1.0)
        out_name = "lm_head.weight" if untied_lm_head else (
            "model.decoder.embed_tokens.weight" if separate else "model.shared.weight")
        w[out_name][eos] = u.astype(np.float32)
    if store_positions:
        pos = positions().numpy()
        w["model.encoder.embed_positions.weight"] = pos
        w["model.decoder.embed_positions.weight"] = pos.copy()

    os.makedirs(out, exist_ok=True)
    write_safetensors(os.path.join(out, "model.safetensors"), w, dtype)
    cfg = {
        "architectures": ["MarianMTModel"], "model_type": "marian",
        "vocab_size": vs, "decoder_vocab_size": vt,
        "d_model": d, "encoder_layers": enc_layers, "decoder_layers": dec_layers,
        "encoder_attention_heads": enc_heads, "decoder_attention_heads": dec_heads,
        "encoder_ffn_dim": enc_ffn, "decoder_ffn_dim": dec_ffn,
        "activation_function": activation, "max_position_embeddings": max_positions,
        "scale_embedding": bool(scale_embedding), "normalize_before": bool(pre_norm),
        "normalize_embedding": False, "static_position_embeddings": True, "add_bias_logits": False,
        "share_encoder_decoder_embeddings": not separate,
        "tie_word_embeddings": not untied_lm_head,
        "pad_token_id": pad, "eos_token_id": eos, "decoder_start_token_id": pad,
        "forced_eos_token_id": eos, "bad_words_ids": [[pad]],
        "num_beams": 4, "max_length": 256,
        "dropout": 0.1, "attention_dropout": 0.0, "activation_dropout": 0.0, "init_std": 0.02,
        "is_encoder_decoder": True, "torch_dtype": {"F32": "float32", "F16": "float16",
                                                    "BF16": "bfloat16"}[dtype],
    }
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    gen = {"bad_words_ids": [[pad]], "decoder_start_token_id": pad, "eos_token_id": eos,
           "forced_eos_token_id": eos, "max_length": 256, "num_beams": 4, "pad_token_id": pad}
    with open(os.path.join(out, "generation_config.json"), "w") as f:
        json.dump(gen, f, indent=2)
    for fn in ("source.spm", "target.spm", "vocab.json"):
        shutil.copyfile(os.path.join(DEMO, fn), os.path.join(out, fn))
    if lang_codes or grown:
        with open(os.path.join(out, "vocab.json"), "w", encoding="utf-8") as f:
            json.dump(src_vocab, f, ensure_ascii=False, indent=1)
    tok = {"source_lang": "en", "target_lang": "de", "model_max_length": 256,
           "separate_vocabs": separate, "tokenizer_class": "MarianTokenizer"}
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump(tok, f, indent=2)
    if separate:
        with open(os.path.join(out, "target_vocab.json"), "w", encoding="utf-8") as f:
            json.dump(tgt_vocab, f, ensure_ascii=False, indent=1)
    elif os.path.exists(os.path.join(out, "target_vocab.json")):
        os.remove(os.path.join(out, "target_vocab.json"))
    return cfg


def main():
    ap = argparse.ArgumentParser(description="random HF MarianMT checkpoint")
    ap.add_argument("out")
    ap.add_argument("--preset", choices=sorted(PRESETS), default="small")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--fixed-length", action="store_true",
                    help="</s> is never chosen: outputs run to the length cap (bench/run_shapes.py)")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=JSON",
                    help="override a build() argument, e.g. --set eos_bias=2 --set dtype='\"F16\"'")
    a = ap.parse_args()
    kw = dict(PRESETS[a.preset])
    if a.fixed_length:
        kw["fixed_length"] = True
    for item in a.set:
        k, _, v = item.partition("=")
        kw[k] = json.loads(v)
    build(a.out, seed=a.seed, **kw)
    print(f"wrote {a.out} ({a.preset}, seed {a.seed}{', fixed length' if a.fixed_length else ''})")


if __name__ == "__main__":
    main()
