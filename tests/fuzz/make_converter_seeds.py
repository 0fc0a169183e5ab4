#!/usr/bin/env python3
"""Writes the seeds of the converter's fuzz targets (tests/fuzz/seeds/<name>/) from the test
checkpoints in tests/data/marian, the demo HF directory and tiny CTranslate2 models made here,
with Python's standard library only.
Files named regression-* are kept; every other seed is rewritten.

  python3 tests/fuzz/make_converter_seeds.py
"""
import gzip
import io
import os
import struct
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data", "marian")
SEEDS = os.path.join(ROOT, "tests", "fuzz", "seeds")


def read(*parts):
    with open(os.path.join(*parts), "rb") as f:
        return f.read()


def reset(name):
    d = os.path.join(SEEDS, name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        if not f.startswith("regression-"):
            os.remove(os.path.join(d, f))
    return d


def write(d, name, data):
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def zip_bytes(entries, method, zip64=False):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=method) as z:
        for name, data in entries:
            info = zipfile.ZipInfo(name)
            info.compress_type = method
            with z.open(info, "w", force_zip64=zip64) as f:
                f.write(data)
    return buf.getvalue()


def npz_entries(path):
    with zipfile.ZipFile(path) as z:
        return [(n, z.read(n)) for n in z.namelist()]


def npy_payload(npy):
    major = npy[6]
    hlen = struct.unpack("<H" if major == 1 else "<I", npy[8:10] if major == 1 else npy[8:12])[0]
    return npy[(10 if major == 1 else 12) + hlen:]


# ---- CTranslate2 models (ct2_model target) ---------------------------------------------------
# Tiny TransformerSpec model.bin files (d_model 4, two heads, FFN 8, one layer per stack) written
# here in the layout converter/ct2_model.h describes, with a SentencePiece model of their tokens.
CT2_SEP = b"\n@@\n"
CT2_PIECES = ["<unk>", "<s>", "</s>", "\u2581", "\u2581a", "b", "c", "\u2581the"]
CT2_VOCAB = ["<blank>"] + CT2_PIECES
F32, I8, I16, I32, F16, BF16 = 0, 1, 2, 3, 4, 5


def pb_varint(n):
    n &= (1 << 64) - 1
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def pb_field(num, wire, payload):
    key = pb_varint((num << 3) | wire)
    if wire == 2:
        return key + pb_varint(len(payload)) + payload
    return key + payload


def ct2_spm():
    """A unigram SentencePiece ModelProto of CT2_PIECES (unk 0, bos 1, eos 2, no pad)."""
    out = b""
    for i, p in enumerate(CT2_PIECES):
        kind = 2 if p == "<unk>" else 3 if p in ("<s>", "</s>") else 1
        piece = pb_field(1, 2, p.encode()) + pb_field(2, 5, struct.pack("<f", -float(i))) + pb_field(3, 0, pb_varint(kind))
        out += pb_field(1, 2, piece)
    trainer = pb_field(3, 0, pb_varint(1)) + pb_field(40, 0, pb_varint(0)) + pb_field(41, 0, pb_varint(1))
    trainer += pb_field(42, 0, pb_varint(2)) + pb_field(43, 0, pb_varint(-1))
    norm = pb_field(1, 2, b"identity") + pb_field(3, 0, pb_varint(1)) + pb_field(4, 0, pb_varint(1))
    norm += pb_field(5, 0, pb_varint(1))
    return out + pb_field(2, 2, trainer) + pb_field(3, 2, norm)


def ct2_str(s):
    b = s.encode() + b"\0"
    return struct.pack("<H", len(b)) + b


def ct2_values(n, seed):
    return [((i * 37 + seed * 11) % 23 - 11) / 16.0 for i in range(n)]


def ct2_variables(pre_norm=True, table=True, biases=False, d=4, ffn=8, heads=2, vocab=len(CT2_VOCAB)):
    """[(name, shape, float values or ('int', dtype, value))] of a TransformerSpec."""
    v = []
    seed = [0]

    def t(name, *shape):
        n = 1
        for x in shape:
            n *= x
        seed[0] += 1
        v.append((name, list(shape), ct2_values(n, seed[0])))

    def norm(scope):
        v.append((scope + "/gamma", [d], [1.0 + 0.125 * i for i in range(d)]))
        v.append((scope + "/beta", [d], [0.0625 * i for i in range(d)]))

    def linear(scope, rows, cols):
        t(scope + "/weight", rows, cols)
        if biases:
            t(scope + "/bias", rows)

    for side in ("encoder", "decoder"):
        v.append((side + "/num_heads", [], ("int", I16, heads)))
        v.append((side + "/pre_norm", [], ("int", I8, int(pre_norm))))
        v.append((side + "/activation", [], ("int", I8, 0)))
        v.append((side + "/scale_embeddings", [], ("int", I8, 1)))
        v.append((side + "/alibi", [], ("int", I8, 0)))
        s = side + "/layer_0"
        linear(s + "/self_attention/linear_0", 3 * d, d)
        linear(s + "/self_attention/linear_1", d, d)
        norm(s + "/self_attention/layer_norm")
        if side == "decoder":
            linear(s + "/attention/linear_0", d, d)
            linear(s + "/attention/linear_1", 2 * d, d)
            linear(s + "/attention/linear_2", d, d)
            norm(s + "/attention/layer_norm")
        linear(s + "/ffn/linear_0", ffn, d)
        linear(s + "/ffn/linear_1", d, ffn)
        norm(s + "/ffn/layer_norm")
        if pre_norm:
            norm(side + "/layer_norm")
    v.append(("encoder/multi_query_attention", [], ("int", I8, 0)))
    v.append(("encoder/embeddings_merge", [], ("int", I8, 0)))
    v.append(("decoder/start_from_zero_embedding", [], ("int", I8, 0)))
    v.append(("decoder/alignment_layer", [], ("int", I16, -1)))
    v.append(("decoder/alignment_heads", [], ("int", I16, 1)))
    t("encoder/embeddings_0/weight", vocab, d)
    t("decoder/embeddings/weight", vocab, d)
    t("decoder/projection/bias", vocab)
    if table:
        t("decoder/position_encodings/encodings", 6, d)
    return v


def ct2_model_bin(variables, aliases=(), version=6, weights=F32, spec="TransformerSpec"):
    """model.bin bytes; `weights` is the dtype of the '.../weight' matrices (int8: per-row scales,
    int16: one scale)."""
    out = struct.pack("<I", version)
    if version >= 2:
        out += ct2_str(spec) + struct.pack("<I", 7)
    entries = []
    for name, shape, values in variables:
        if isinstance(values, tuple):
            _, dt, x = values
            fmt = {I8: "<b", I16: "<h", I32: "<i"}[dt]
            entries.append((name, shape, dt, struct.pack(fmt, x)))
            continue
        dt = weights if name.endswith("/weight") and len(shape) == 2 else F32
        if dt == F32:
            entries.append((name, shape, F32, struct.pack("<%df" % len(values), *values)))
        elif dt in (F16, BF16):
            if dt == F16:
                data = b"".join(struct.pack("<e", x) for x in values)
            else:
                data = b"".join(struct.pack("<f", x)[2:] for x in values)
            entries.append((name, shape, dt, data))
        elif dt == I8:
            rows, cols = shape
            scales = []
            q = []
            for r in range(rows):
                row = values[r * cols:(r + 1) * cols]
                m = max(abs(x) for x in row) or 1.0
                scales.append(127.0 / m)
                q += [max(-127, min(127, round(x * scales[-1]))) for x in row]
            entries.append((name, shape, I8, struct.pack("<%db" % len(q), *q)))
            entries.append((name + "_scale", [rows], F32, struct.pack("<%df" % rows, *scales)))
        elif dt == I16:
            m = max(abs(x) for x in values) or 1.0
            sc = 32767.0 / m
            q = [round(x * sc) for x in values]
            entries.append((name, shape, I16, struct.pack("<%dh" % len(q), *q)))
            entries.append((name + "_scale", [], F32, struct.pack("<f", sc)))
    out += struct.pack("<I", len(entries))
    for name, shape, dt, data in entries:
        out += ct2_str(name) + struct.pack("<B", len(shape)) + struct.pack("<%dI" % len(shape), *shape)
        if version >= 4:
            out += struct.pack("<BI", dt, len(data))
        else:
            item = {F32: 4, I16: 2, I8: 1}[dt]
            out += struct.pack("<BI", item, len(data) // item)
        out += data
    if version >= 3:
        out += struct.pack("<I", len(aliases))
        for a, target in aliases:
            out += ct2_str(a) + ct2_str(target)
    return out


CT2_CONFIG = (b'{"add_source_bos": false, "add_source_eos": false, "bos_token": "<s>", "decoder_start_token": "<s>",'
              b' "eos_token": "</s>", "layer_norm_epsilon": null, "multi_query_attention": false, "unk_token": "<unk>"}')


def ct2_vocab_json(tokens):
    return ("[" + ", ".join('"%s"' % t for t in tokens) + "]").encode()


def ct2_seed(mode, *parts):
    return bytes([mode]) + CT2_SEP.join(parts)


def ct2_seeds(d):
    spm = ct2_spm()
    vj = ct2_vocab_json(CT2_VOCAB)
    vt = "\n".join(CT2_VOCAB).encode() + b"\n"
    pos_alias = [("encoder/position_encodings/encodings", "decoder/position_encodings/encodings")]
    tied = pos_alias + [("decoder/projection/weight", "decoder/embeddings/weight")]
    pre = ct2_model_bin(ct2_variables(), tied)
    write(d, "prenorm-table.int8", ct2_seed(0, pre, CT2_CONFIG, vj, spm))
    write(d, "prenorm-table.fp16", ct2_seed(4, pre, CT2_CONFIG, vj, spm))
    write(d, "prenorm-table.no-config.txt", ct2_seed(1 | 8, pre, b"", vt, spm))
    untied = ct2_variables(pre_norm=False, biases=True)
    untied.append(("decoder/projection/weight", [len(CT2_VOCAB), 4], ct2_values(len(CT2_VOCAB) * 4, 99)))
    post = ct2_model_bin(untied, pos_alias, weights=I8)
    write(d, "postnorm-bias.int8-weights", ct2_seed(0, post, CT2_CONFIG, vj, spm))
    builtin = ct2_model_bin(ct2_variables(table=False), tied[1:], weights=F16)
    write(d, "prenorm-builtin.f16-weights.separate", ct2_seed(2, builtin, CT2_CONFIG, vj, vj, spm, spm))
    write(d, "prenorm-builtin.separate.txt", ct2_seed(2 | 16 | 8, builtin, CT2_CONFIG, vt, vt, spm))
    write(d, "bf16-weights", ct2_seed(0, ct2_model_bin(ct2_variables(), tied, weights=BF16), CT2_CONFIG, vj, spm))
    own_projection = ct2_variables() + [("decoder/projection/weight", [len(CT2_VOCAB), 4], ct2_values(len(CT2_VOCAB) * 4, 7))]
    write(d, "int16-weights", ct2_seed(0, ct2_model_bin(own_projection, pos_alias, weights=I16), CT2_CONFIG, vj, spm))
    write(d, "binary-version-3", ct2_seed(8, ct2_model_bin(ct2_variables(), tied, version=3), CT2_CONFIG, vj, spm))
    v1 = own_projection + [("encoder/position_encodings/encodings", [6, 4], ct2_values(24, 5))]
    write(d, "binary-version-1", ct2_seed(8, ct2_model_bin(v1, version=1), CT2_CONFIG, vj, spm))
    # An Argos package: the model directory as model/ inside a zip with metadata.json.
    meta = b'{"package_version": "1.0", "from_code": "en", "to_code": "de", "type": "translate"}'
    pkg = [("translate-en_de/metadata.json", meta), ("translate-en_de/sentencepiece.model", spm),
           ("translate-en_de/model/model.bin", pre), ("translate-en_de/model/config.json", CT2_CONFIG),
           ("translate-en_de/model/shared_vocabulary.json", vj)]
    write(d, "argos.stored", bytes([3]) + zip_bytes(pkg, zipfile.ZIP_STORED))
    write(d, "argos.deflate", bytes([3 | 4]) + zip_bytes(pkg, zipfile.ZIP_DEFLATED))
    # Damaged files: each is an error with a message.
    write(d, "damaged.truncated", ct2_seed(0, pre[:len(pre) // 2], CT2_CONFIG, vj, spm))
    write(d, "damaged.count", ct2_seed(0, pre[:-4 - 3] + b"\xff\xff\xff", CT2_CONFIG, vj, spm))
    bad = bytearray(pre)
    bad[bad.find(b"encoder/embeddings_0/weight") + 28] = 9  # the rank
    write(d, "damaged.rank", ct2_seed(0, bytes(bad), CT2_CONFIG, vj, spm))
    nan = ct2_variables()
    nan[-1] = (nan[-1][0], nan[-1][1], [float("nan")] * len(nan[-1][2]))
    write(d, "damaged.nan", ct2_seed(0, ct2_model_bin(nan, tied), CT2_CONFIG, vj, spm))
    write(d, "damaged.vocab-size", ct2_seed(0, pre, CT2_CONFIG, ct2_vocab_json(CT2_VOCAB[:-1]), spm))
    write(d, "damaged.config", ct2_seed(0, pre, b'{"eos_token": 3, "layer_norm_epsilon": -1}', vj, spm))
    write(d, "damaged.spec", ct2_seed(0, ct2_model_bin(ct2_variables(), tied, spec="TransformerDecoderSpec"),
                                      CT2_CONFIG, vj, spm))
    write(d, "damaged.alias", ct2_seed(0, ct2_model_bin(ct2_variables(), tied + [("a", "b"), ("decoder/pre_norm", "x")]),
                                       CT2_CONFIG, vj, spm))


def main():
    # Marian checkpoints: .bin and .npz (stored, deflate as np.savez_compressed, zip64 as numpy's
    # force_zip64), each a few KB.
    d = reset("marian_checkpoint")
    for f in ("all.bin", "all.int8.bin", "tied.bin", "all.npz", "untied.npz"):
        write(d, f, read(DATA, f))
    entries = npz_entries(os.path.join(DATA, "all.npz"))
    write(d, "all.deflate.npz", zip_bytes(entries, zipfile.ZIP_DEFLATED))
    write(d, "all.zip64.npz", zip_bytes(entries, zipfile.ZIP_STORED, zip64=True))
    write(d, "untied.deflate.zip64.npz", zip_bytes(npz_entries(os.path.join(DATA, "untied.npz")), zipfile.ZIP_DEFLATED, True))

    # special:model.yml of the test checkpoints, and release decoder configs.
    d = reset("model_yml")
    for f in ("all.npz", "untied.npz"):
        for n, data in npz_entries(os.path.join(DATA, f)):
            if n == "special:model.yml.npy":
                write(d, f.replace(".npz", ".model.yml"), npy_payload(data).rstrip(b"\0"))
    write(d, "decoder.yml", b"relative-paths: true\nmodels:\n  - opus.npz\nvocabs:\n  - source.spm\n  - target.spm\n"
                            b"beam-size: 6\nnormalize: 0.6\nword-penalty: 0\nmini-batch: 1\nmaxi-batch: 1\n")
    write(d, "config.intgemm8bitalpha.yml",
          b"models: [model.enit.intgemm.alphas.bin]\nvocabs: [vocab.enit.spm, vocab.enit.spm]\nbeam-size: 1\n"
          b"normalize: 1.0\nword-penalty: 0\nmax-length-factor: 2.0\nshortlist: [lex.50.50.enit.s2t.bin, false]\n"
          b"gemm-precision: int8shiftAlphaAll\n# comment\n'quoted key': \"quoted value\"\n")

    d = reset("vocab_yml")
    write(d, "vocab.yml", read(DATA, "vocab.yml"))
    write(d, "escapes.yml", b'"\\u2581x": 0\n"\\x41": 1\n\'it\'\'s\': 2\n"\\"": 3\n"<unk>": 4\n')
    write(d, "unordered.yml", b"b: 1\na: 0\n\"c\": 2\n# comment\n\n")

    # Binary lexical shortlists: valid (checksum right), and one with a wrong checksum.
    d = reset("lex_binary")

    def lex(first, best, lists, fix=True):
        offsets = [0]
        targets = []
        for l in lists:
            targets += l
            offsets.append(len(targets))
        body = struct.pack("<4Q", first, best, len(offsets), len(targets))
        body += struct.pack("<%dQ" % len(offsets), *offsets) + struct.pack("<%dI" % len(targets), *targets)
        seed = 0
        for i in range(0, len(body) - len(body) % 8, 8):
            w = struct.unpack("<Q", body[i:i + 8])[0]
            seed ^= (w + 0x9E3779B9 + (seed << 6) + (seed >> 2)) & 0xFFFFFFFFFFFFFFFF
            seed &= 0xFFFFFFFFFFFFFFFF
        return struct.pack("<2Q", 0xF11A48D5013417F5, seed if fix else seed ^ 1) + body

    # byte 47 (the top byte of shortListsSize) is 0: the fuzz target recomputes the checksum
    write(d, "small.bin", lex(4, 50, [[], [], [3, 9], [], [5], [], [], [2, 6, 10], [], [], []]))
    write(d, "empty_lists.bin", lex(0, 0, [[]] * 8))
    write(d, "bad_checksum.bin", lex(2, 2, [[1], [2]], fix=False))

    # HF: config.json, then NUL, then model.safetensors.
    d = reset("hf")
    hf = os.path.join(DATA, "hf")
    write(d, "tiny_marian", read(hf, "config.json") + b"\0" + read(hf, "model.safetensors"))
    write(d, "config_only.json", read(ROOT, "models", "marian-en-de-tiny", "config.json"))
    st_header = b'{"__metadata__":{"format":"pt"},"a":{"dtype":"F16","shape":[2,2],"data_offsets":[0,8]},' \
                b'"b":{"dtype":"BF16","shape":[2],"data_offsets":[8,12]}}'
    write(d, "f16_bf16", read(hf, "config.json") + b"\0" + struct.pack("<Q", len(st_header)) + st_header + bytes(range(12)))

    # zip archives: stored, deflate, zip64, an Argos-like package, a comment.
    d = reset("zip")
    argos = [("en_de/metadata.json", b'{"package_version": "1.0", "from_code": "en", "to_code": "de"}'),
             ("en_de/sentencepiece.model", read(ROOT, "models", "marian-en-de-tiny", "source.spm")[:1500]),
             ("en_de/model/model.bin", bytes(range(256)) * 4),
             ("en_de/model/", b"")]
    write(d, "argos_deflate.zip", zip_bytes(argos, zipfile.ZIP_DEFLATED))
    write(d, "stored.zip", zip_bytes(argos[:3], zipfile.ZIP_STORED))
    write(d, "zip64.zip", zip_bytes(argos[:2], zipfile.ZIP_DEFLATED, zip64=True))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.comment = b"an archive comment"
        z.writestr("a.txt", b"hello hello hello hello\n")
    write(d, "comment.zip", buf.getvalue())

    d = reset("gzip")
    write(d, "text.gz", gzip.compress(read(DATA, "vocab.yml"), mtime=0))
    write(d, "two_members.gz", gzip.compress(b"first\n", mtime=0) + gzip.compress(b"second\n", mtime=0))
    write(d, "empty.gz", gzip.compress(b"", mtime=0))
    write(d, "binary.gz", gzip.compress(read(DATA, "all.int8.bin")[:3000], mtime=0))
    with io.BytesIO() as b:  # a gzip header with FNAME and FCOMMENT
        with gzip.GzipFile(filename="model.bin", mode="wb", fileobj=b, mtime=0) as g:
            g.write(b"\x01\x00" * 100)
        write(d, "named.gz", b.getvalue())


    ct2_seeds(reset("ct2_model"))


if __name__ == "__main__":
    main()
