#!/usr/bin/python3
"""Writes an HF MarianMT checkpoint directory as a Marian checkpoint.

    marian_export.py HF_DIR OUT_DIR [--tying all|tied|untied] [--vocab spm|yml]
                     [--format npz,bin,int8,alphas] [--calibrate TEXT [--calibrate-lines N]]

OUT_DIR receives:
  model.npz        numpy archive (float32, stored entries), Marian's parameter names
  model.bin        Marian binary format, float32 items
  model.int8.bin   Marian binary format, 2-D weights as intgemm8 items (int8, per-tensor scale)
  model.alphas.bin model.int8.bin plus the activation multipliers Marian's int8shiftAlphaAll
                   reads (`<weight>_QuantMultA`), calibrated on the source text --calibrate
                   (see calibrate_alphas)
  vocab.spm | vocab.src.spm + vocab.trg.spm      (--vocab spm: SentencePiece ids)
  vocab.yml | vocab.src.yml + vocab.trg.yml      (--vocab yml: the HF vocab.json order)
  decoder.yml      a Marian decoder config naming the model and vocabularies
Every model file embeds `special:model.yml` (Marian's model options) as an int8 item.

Marian's layout: weights [in, out] (x·W), biases [1, out], layer-norm scale/bias [1, d],
embeddings [vocab, d]. Names:
  encoder_l{i}_self_{Wq,bq,Wk,bk,Wv,bv,Wo,bo,Wo_ln_scale,Wo_ln_bias}
  encoder_l{i}_ffn_{W1,b1,W2,b2,ffn_ln_scale,ffn_ln_bias}
  decoder_l{i}_self_*, decoder_l{i}_context_*, decoder_l{i}_ffn_*
  decoder_l{i}_rnn_{W,Wf,bf,ffn_ln_scale,ffn_ln_bias} instead of decoder_l{i}_self_* when the HF
  directory's config.json says "decoder_layer_kind": "ssru" (make_ssru_checkpoint.py; Marian's
  transformer-decoder-autoreg: rnn, dec-cell: ssru)
  decoder_ff_logit_out_b [1, V]
Tying layouts (--tying):
  all     one `Wemb` for source, target and output           (tied-embeddings-all: true)
  tied    `encoder_Wemb`, `decoder_Wemb`, output = decoder_Wemb (tied-embeddings: true)
  untied  `encoder_Wemb`, `decoder_Wemb`, `decoder_ff_logit_out_Wt` [V, d]
A layout the HF tables cannot express (e.g. `all` with different source and target tables)
is an error.

Vocabulary ids. With SentencePiece vocabularies Marian uses the SentencePiece model's own ids;
HF's vocab.json has an order of its own. With --vocab spm the embedding rows and the logit bias
of each side are reordered to the SentencePiece ids (a piece missing from vocab.json gets the
<unk> row, and on the target side a logit bias of -1e9: HF cannot generate it; entries of
vocab.json that are no SentencePiece piece, e.g. language tokens, are lost). With --vocab yml the
vocab.json order is kept and written as Marian YAML vocabularies.
HF's <pad> row is dropped either way: Marian has no pad token (it starts decoding from a zero
vector); with --vocab yml the pad must be the last id (HF's own Marian conversion appends it).

Marian semantics differ from HF's in three places (the exported model computes Marian's, not
HF's): the sinusoid (exp(-i·log(10000)/(d/2 − 1)) instead of 10000^(−2i/d)), layer-norm eps
(1e-6 instead of 1e-5) and the first decoder input (a zero vector instead of the <pad> embedding).
Positions stored in the HF checkpoint are not exported (Marian computes its own).

Activation multipliers (model.alphas.bin). With `gemm-precision: int8shiftAlphaAll` Marian
(browsermt's fork, as in Bergamot) does not take the activations' max-abs per GEMM call: it reads
the quantization multiplier of a GEMM's activation input from the model item
`<weight name>_QuantMultA` (float32, shape [1]; the loader prefixes "F0::"; a missing one aborts
with "We did not find an alpha in the model named: F0::<weight>_QuantMultA"), looked up by the
name of the GEMM's weight (src/tensors/cpu/intgemm_interface.h, fetchAlphaFromModelNodeOp). The
stored value is the multiplier itself: activations are quantized as round(x · value), clipped
to [-127, 127]. Every int8 GEMM has one: every 2-D `_W*` weight of the encoder and decoder layers
(q, k, v, o, ffn W1/W2, SSRU W/Wf) and the output layer, named by its matrix (`Wemb`,
`decoder_Wemb` or `decoder_ff_logit_out_Wt` by tying), also when that matrix is float32 in the
file (Bergamot quantizes it itself) and also with a shortlist (Bergamot 0.4.9 looks up the full
matrix's name for the shortlisted columns). The recipe of Marian's tools: decode sample text with
`marian-decoder --dump-quantmult` (the float model file, quantized at run time; greedy,
mini-batches of 32 sentences sorted by length), then scripts/alphas/extract_stats.py stores
127 / (mean + 1.1 · stddev) of the per-call max-abs of each GEMM's input, and copies the output
layer's value to `none_QuantMultA` (the name the shortlisted output node has in other builds).
calibrate_alphas does the same with the float32 PyTorch reference (marian_semantics), counting
only the real (unpadded) source positions.
"""
import argparse
import json
import os
import shutil
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

MARIAN_FLOAT32 = 0x0404
MARIAN_INT8 = 0x0101
MARIAN_INTGEMM8 = 0x4101
# Marian's "gelu" is x·sigmoid(1.702x), not HF's erf gelu: HF gelu variants have no Marian counterpart.
ACTIVATIONS = {"swish": "swish", "silu": "swish", "relu": "relu"}


def _bytes(path):
    with open(path, "rb") as f:
        return f.read()


def _yaml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '""' if v == "" else v
    return str(v)


def model_yml(cfg, tying, src_vocab, tgt_vocab):
    """Marian's model options (the flat YAML Marian embeds as special:model.yml)."""
    ssru = cfg.get("decoder_layer_kind", "self_attention") == "ssru"
    act = cfg.get("activation_function", "swish")
    if act not in ACTIVATIONS:
        raise SystemExit(f"activation_function {act!r} has no Marian counterpart")
    opts = {
        "type": "transformer",
        "dim-emb": cfg["d_model"],
        "dim-vocabs": [src_vocab, tgt_vocab],
        "enc-depth": cfg["encoder_layers"],
        "dec-depth": cfg["decoder_layers"],
        "transformer-heads": cfg["encoder_attention_heads"],
        "transformer-dim-ffn": cfg["encoder_ffn_dim"],
        "transformer-ffn-depth": 2,
        "transformer-ffn-activation": ACTIVATIONS[act],
        "transformer-preprocess": "",
        "transformer-postprocess": "dan",
        "transformer-postprocess-emb": "d",
        "transformer-postprocess-top": "",
        "transformer-decoder-autoreg": "rnn" if ssru else "self-attention",
        "transformer-no-projection": False,
        "transformer-tied-layers": [],
        "transformer-train-position-embeddings": False,
        "transformer-dim-aan": 2048,
        "transformer-aan-depth": 2,
        "transformer-aan-activation": "swish",
        "transformer-aan-nogate": False,
        "transformer-depth-scaling": False,
        "tied-embeddings": tying == "tied",
        "tied-embeddings-all": tying == "all",
        "tied-embeddings-src": False,
        "output-omit-bias": False,
        "lemma-dim-emb": 0,
        "right-left": False,
        "ulr": False,
        "version": "v1.10.0",
    }
    if ssru:
        opts["dec-cell"] = "ssru"
        opts["layer-normalization"] = False
    lines = []
    for k in sorted(opts):
        v = opts[k]
        if isinstance(v, list):
            lines.append(f"{k}:" if v else f"{k}:\n  []")  # Marian's own way of an empty list
            lines.extend(f"  - {_yaml_value(x)}" for x in v)
        else:
            lines.append(f"{k}: {_yaml_value(v)}")
    return "\n".join(lines) + "\n"


def side_order(spm_path, vocab, mode):
    """Row order of one side: a list of HF ids, one per Marian id, the Marian pieces and the
    Marian ids of pieces the HF vocabulary lacks."""
    if mode == "yml":
        by_id = sorted(vocab.items(), key=lambda kv: kv[1])
        if by_id[-1][0] != "<pad>" or [i for _, i in by_id] != list(range(len(by_id))):
            raise SystemExit("--vocab yml needs dense vocab.json ids with <pad> last")
        return [i for _, i in by_id[:-1]], [p for p, _ in by_id[:-1]], []
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=spm_path)
    unk = vocab.get("<unk>")
    if unk is None:
        raise SystemExit("vocab.json has no <unk>")
    pieces = [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
    missing = [p for p in pieces if p not in vocab]
    if missing:
        print(f"note: {len(missing)} SentencePiece pieces missing from the HF vocabulary get the <unk> row",
              file=sys.stderr)
    return [vocab.get(p, unk) for p in pieces], pieces, [i for i, p in enumerate(pieces) if p not in vocab]


def marian_params(hf_dir, tying, vocab_mode):
    """(params {name: float32 ndarray}, yml text, vocab files {name: source path or pieces})."""
    with open(os.path.join(hf_dir, "config.json")) as f:
        cfg = json.load(f)
    if not cfg.get("scale_embedding", False):
        raise SystemExit("scale_embedding false has no Marian counterpart (Marian scales by sqrt(d))")
    if cfg.get("normalize_before", False) or cfg.get("normalize_embedding", False):
        raise SystemExit("pre-norm / embedding layer norm are not exported")
    if cfg["encoder_attention_heads"] != cfg["decoder_attention_heads"] or \
            cfg["encoder_ffn_dim"] != cfg["decoder_ffn_dim"]:
        raise SystemExit("Marian has one transformer-heads and one transformer-dim-ffn for both sides")
    from marian_ref import read_safetensors
    w = {k: v.numpy() for k, v in read_safetensors(os.path.join(hf_dir, "model.safetensors")).items()}
    with open(os.path.join(hf_dir, "vocab.json")) as f:
        src_vocab = json.load(f)
    tgt_vocab = src_vocab
    tv = os.path.join(hf_dir, "target_vocab.json")
    if os.path.exists(tv):
        with open(tv) as f:
            tgt_vocab = json.load(f)
    src_spm = os.path.join(hf_dir, "source.spm")
    tgt_spm = os.path.join(hf_dir, "target.spm")
    src_rows, src_pieces, _ = side_order(src_spm, src_vocab, vocab_mode)
    tgt_rows, tgt_pieces, tgt_missing = side_order(tgt_spm, tgt_vocab, vocab_mode)

    shared = w.get("model.shared.weight")
    enc_emb = w.get("model.encoder.embed_tokens.weight", shared)
    dec_emb = w.get("model.decoder.embed_tokens.weight", shared)
    out_w = dec_emb if cfg.get("tie_word_embeddings", True) else w["lm_head.weight"]
    enc_emb, dec_emb, out_w = enc_emb[src_rows], dec_emb[tgt_rows], out_w[tgt_rows]
    bias = w.get("final_logits_bias", np.zeros((1, len(tgt_vocab)), np.float32)).reshape(-1)[tgt_rows]
    bias[tgt_missing] = -1e9  # HF cannot generate a piece its vocabulary lacks; nor may Marian

    p = {}
    if tying == "all":
        if not (np.array_equal(enc_emb, dec_emb) and np.array_equal(dec_emb, out_w)):
            raise SystemExit("--tying all: source, target and output tables differ")
        p["Wemb"] = dec_emb
    else:
        p["encoder_Wemb"] = enc_emb
        p["decoder_Wemb"] = dec_emb
        if tying == "tied":
            if not np.array_equal(dec_emb, out_w):
                raise SystemExit("--tying tied: the output table differs from the target embeddings")
        else:
            p["decoder_ff_logit_out_Wt"] = out_w
    p["decoder_ff_logit_out_b"] = bias.reshape(1, -1)

    def lin(marian, hf):
        p[marian.replace("?", "W")] = w[hf + ".weight"].T.copy()
        p[marian.replace("?", "b")] = w[hf + ".bias"].reshape(1, -1)

    def ln(marian, hf):
        p[marian + "_ln_scale"] = w[hf + ".weight"].reshape(1, -1)
        p[marian + "_ln_bias"] = w[hf + ".bias"].reshape(1, -1)

    def attn(marian, hf, norm):
        for m, h in (("q", "q_proj"), ("k", "k_proj"), ("v", "v_proj"), ("o", "out_proj")):
            lin(f"{marian}_?{m}", f"{hf}.{h}")
        ln(f"{marian}_Wo", norm)

    def ffn(marian, hf):
        lin(f"{marian}_ffn_?1", f"{hf}.fc1")
        lin(f"{marian}_ffn_?2", f"{hf}.fc2")
        ln(f"{marian}_ffn_ffn", f"{hf}.final_layer_norm")

    for i in range(cfg["encoder_layers"]):
        hf = f"model.encoder.layers.{i}"
        attn(f"encoder_l{i + 1}_self", f"{hf}.self_attn", f"{hf}.self_attn_layer_norm")
        ffn(f"encoder_l{i + 1}", hf)
    for i in range(cfg["decoder_layers"]):
        hf = f"model.decoder.layers.{i}"
        if cfg.get("decoder_layer_kind", "self_attention") == "ssru":
            p[f"decoder_l{i + 1}_rnn_W"] = w[f"{hf}.ssru.in_proj.weight"].T.copy()
            lin(f"decoder_l{i + 1}_rnn_?f", f"{hf}.ssru.forget_proj")
            ln(f"decoder_l{i + 1}_rnn_ffn", f"{hf}.ssru_layer_norm")
        else:
            attn(f"decoder_l{i + 1}_self", f"{hf}.self_attn", f"{hf}.self_attn_layer_norm")
        attn(f"decoder_l{i + 1}_context", f"{hf}.encoder_attn", f"{hf}.encoder_attn_layer_norm")
        ffn(f"decoder_l{i + 1}", hf)

    yml = model_yml(cfg, tying, len(src_rows), len(tgt_rows))
    same_side = src_pieces == tgt_pieces and (vocab_mode == "yml" or _bytes(src_spm) == _bytes(tgt_spm))
    if vocab_mode == "spm":
        vocabs = {"vocab.spm": src_spm} if same_side else {"vocab.src.spm": src_spm, "vocab.trg.spm": tgt_spm}
    else:
        vocabs = {"vocab.yml": src_pieces} if same_side else {"vocab.src.yml": src_pieces,
                                                              "vocab.trg.yml": tgt_pieces}
    return {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in p.items()}, yml, vocabs


def yml_bytes(yml):
    return np.frombuffer(yml.encode("utf-8") + b"\0", dtype=np.int8)


def write_npz(path, params, yml):
    # np.savez writes stored (uncompressed) entries, like Marian's own npz writer.
    arrays = dict(params)
    arrays["special:model.yml"] = yml_bytes(yml)
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def quantize_intgemm8(a):
    """intgemm8 item payload: int8 of the transposed matrix ([out][in] for a [in, out] weight),
    then the float32 quantization multiplier (w ≈ q / mult), padded to a 256-byte multiple."""
    m = float(np.abs(a).max())
    mult = np.float32(127.0 / m) if m > 0 else np.float32(1.0)
    q = np.clip(np.rint(a.T * mult), -127, 127).astype(np.int8)
    raw = q.tobytes() + struct.pack("<f", mult)
    return raw + b"\0" * (-len(raw) % 256)


ALPHA_SUFFIX = "_QuantMultA"


def output_matrix(tying):
    """The Marian name of the output layer's matrix."""
    return {"all": "Wemb", "tied": "decoder_Wemb", "untied": "decoder_ff_logit_out_Wt"}[tying]


def gemm_weights(cfg, tying):
    """{MarianRef projection key: Marian weight name} of every GEMM with a weight matrix."""
    names = {}
    for side, n in (("encoder", cfg["encoder_layers"]), ("decoder", cfg["decoder_layers"])):
        ssru = side == "decoder" and cfg.get("decoder_layer_kind", "self_attention") == "ssru"
        attn = (("encoder_attn", "context"),) if ssru else (("self_attn", "self"),)
        if side == "decoder" and not ssru:
            attn += (("encoder_attn", "context"),)
        for i in range(n):
            hf, m = f"model/{side}/layers/{i}", f"{side}_l{i + 1}"
            for a, ma in attn:
                for x, mx in (("q", "q"), ("k", "k"), ("v", "v"), ("out", "o")):
                    names[f"{hf}/{a}/{x}_proj"] = f"{m}_{ma}_W{mx}"
            names[f"{hf}/fc1"], names[f"{hf}/fc2"] = f"{m}_ffn_W1", f"{m}_ffn_W2"
            if ssru:
                names[f"{hf}/ssru/in_proj"], names[f"{hf}/ssru/forget_proj"] = f"{m}_rnn_W", f"{m}_rnn_Wf"
    from marian_ref import MarianRef
    names[MarianRef.OUT] = output_matrix(tying)
    return names


def calibrate_alphas(hf_dir, tying, lines, batch=32):
    """{`<weight>_QuantMultA`: float32 multiplier} from greedy decoding of `lines` (source text)
    with the float model and Marian's semantics: per GEMM, the max-abs of its activation input in
    every call (encoder GEMMs once per mini-batch, decoder GEMMs once per step over the sentences
    still running), mini-batches of `batch` sentences sorted by length, outputs capped at 3 x
    the source tokens (Marian's max-length-factor); the value is
    127 / (mean + 1.1 · population stddev) of those maxima (Marian's extract_stats.py).
    `none_QuantMultA` repeats the output layer's."""
    import torch
    from marian_ref import TextTools
    from marian_semantics import MarianSemanticsRef
    with open(os.path.join(hf_dir, "config.json")) as f:
        cfg = json.load(f)
    ref = MarianSemanticsRef(hf_dir)
    tt = TextTools(hf_dir)
    srcs = [tt.encode(line) for line in lines]
    names = gemm_weights(cfg, tying)
    maxima = {n: [] for n in names.values()}
    valid = [None]  # the mini-batch's [B, S] mask of real source positions

    def hook(name):
        def record(_module, inputs):
            x = inputs[0]
            m = valid[0]
            if x.dim() == 3 and tuple(x.shape[:2]) == tuple(m.shape):  # encoder side: [B, S, d]
                x = x[m]
            maxima[name].append(float(x.abs().max()))
        return record

    handles = [ref.proj[key].register_forward_pre_hook(hook(name)) for key, name in names.items()]
    try:
        order = sorted(range(len(srcs)), key=lambda i: len(srcs[i]))
        for at in range(0, len(order), batch):
            chunk = [srcs[i] for i in order[at:at + batch]]
            lens = torch.tensor([len(s) for s in chunk])
            valid[0] = torch.arange(int(lens.max()))[None, :] < lens[:, None]
            ref.greedy(chunk, max_length=[3 * len(s) for s in chunk])
    finally:
        for h in handles:
            h.remove()
    alphas = {}
    for name, m in maxima.items():
        m = np.asarray(m, dtype=np.float64)
        alphas[name + ALPHA_SUFFIX] = np.float32(127.0 / (m.mean() + 1.1 * m.std()))
    alphas["none" + ALPHA_SUFFIX] = alphas[output_matrix(tying) + ALPHA_SUFFIX]
    return alphas


def write_bin(path, params, yml, int8=False, alphas=None):
    """Marian binary model: float32 items; with `int8` the 2-D `_W*` weights (not the embeddings
    or the output matrix) as intgemm8 items; `alphas` ({name: multiplier}) added as float32
    items of shape [1]."""
    items = []  # (name, type, shape, bytes)
    y = yml_bytes(yml)
    items.append(("special:model.yml", MARIAN_INT8, [y.size], y.tobytes()))
    tensors = dict(params)
    tensors.update({k: np.array([v], dtype=np.float32) for k, v in (alphas or {}).items()})
    for name in sorted(tensors):
        a = tensors[name]
        if int8 and a.ndim == 2 and a.shape[0] > 1 and "_W" in "_" + name and not name.endswith(("Wemb", "Wt")):
            items.append((name, MARIAN_INTGEMM8, list(a.shape), quantize_intgemm8(a)))
        else:
            data = a.astype("<f4").tobytes()
            if name.endswith(ALPHA_SUFFIX):  # padded to 256 bytes, as Marian writes its items
                data += b"\0" * (-len(data) % 256)
            items.append((name, MARIAN_FLOAT32, list(a.shape), data))
    head = struct.pack("<QQ", 1, len(items))
    for name, typ, shape, data in items:
        head += struct.pack("<QQQQ", len(name.encode()) + 1, typ, len(shape), len(data))
    for name, _, _, _ in items:
        head += name.encode() + b"\0"
    for _, _, shape, _ in items:
        head += struct.pack(f"<{len(shape)}i", *shape)
    pad = (len(head) + 8 + 255) // 256 * 256 - len(head) - 8
    head += struct.pack("<Q", pad) + b"\0" * pad
    with open(path, "wb") as f:
        f.write(head)
        for _, _, _, data in items:
            f.write(data)


def write_vocabs(out_dir, vocabs):
    for name, v in vocabs.items():
        if isinstance(v, str):
            shutil.copyfile(v, os.path.join(out_dir, name))
        else:
            with open(os.path.join(out_dir, name), "w", encoding="utf-8") as f:
                for i, piece in enumerate(v):
                    f.write(f"{json.dumps(piece, ensure_ascii=False)}: {i}\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("hf_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--tying", choices=["all", "tied", "untied"], default="all")
    ap.add_argument("--vocab", choices=["spm", "yml"], default="spm")
    ap.add_argument("--format", default="npz,bin", help="comma list of npz, bin, int8, alphas")
    ap.add_argument("--calibrate", help="source text (one sentence a line) to calibrate the alphas on")
    ap.add_argument("--calibrate-lines", type=int, default=0,
                    help="use N of its lines, evenly spaced (0: all)")
    a = ap.parse_args(argv)
    formats = a.format.split(",")
    if set(formats) - {"npz", "bin", "int8", "alphas"}:
        ap.error(f"unknown --format {a.format}")
    if ("alphas" in formats) != bool(a.calibrate):
        ap.error("--format alphas and --calibrate go together")
    params, yml, vocabs = marian_params(a.hf_dir, a.tying, a.vocab)
    os.makedirs(a.out_dir, exist_ok=True)
    models = []
    if "npz" in formats:
        write_npz(os.path.join(a.out_dir, "model.npz"), params, yml)
        models.append("model.npz")
    if "bin" in formats:
        write_bin(os.path.join(a.out_dir, "model.bin"), params, yml)
        models.append("model.bin")
    if "int8" in formats:
        write_bin(os.path.join(a.out_dir, "model.int8.bin"), params, yml, int8=True)
        models.append("model.int8.bin")
    if "alphas" in formats:
        with open(a.calibrate, encoding="utf-8") as f:
            lines = [line.rstrip("\n") for line in f]
        if 0 < a.calibrate_lines < len(lines):  # evenly spaced over the file
            lines = [lines[i * len(lines) // a.calibrate_lines] for i in range(a.calibrate_lines)]
        alphas = calibrate_alphas(a.hf_dir, a.tying, lines)
        write_bin(os.path.join(a.out_dir, "model.alphas.bin"), params, yml, int8=True, alphas=alphas)
        models.append("model.alphas.bin")
    write_vocabs(a.out_dir, vocabs)
    names = list(vocabs) if len(vocabs) == 2 else list(vocabs) * 2
    with open(os.path.join(a.out_dir, "decoder.yml"), "w") as f:
        f.write("models:\n" + "".join(f"  - {m}\n" for m in models[:1]))
        f.write("vocabs:\n" + "".join(f"  - {v}\n" for v in names))
        f.write("beam-size: 1\nnormalize: 1\n")
    print(f"wrote {', '.join(models)} and {', '.join(vocabs)} to {a.out_dir}")


if __name__ == "__main__":
    main()
