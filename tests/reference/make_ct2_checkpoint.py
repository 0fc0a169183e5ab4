#!/usr/bin/python3
"""Reads and writes CTranslate2 model.bin files (converter/ct2_model.h gives the layout) to make
test variants of a CTranslate2 model directory:

  make_ct2_checkpoint.py SRC DST --dtype float16|bfloat16|int8|int16 [--reference REF]
                                 [--binary-version 3]

DST gets SRC's config.json and vocabularies and a model.bin whose weights ("...weight" variables,
the ones CTranslate2 quantizes) are stored as --dtype: float16 / bfloat16 (rounded to nearest
even), int8 with a per-row "weight_scale" (q = round(w * s), s = 127 / max|row|, CTranslate2's
scheme), int16 with one scalar scale (s = 32767 / max|W|); everything else stays float32. REF gets
the float32 model of exactly the values DST decodes to, so both must translate identically.
--binary-version 3 writes the older layout (item size and count instead of dtype id and bytes; no
int16 scales there, float32 only).

Needs numpy (Debian's python3-numpy).
"""
import argparse
import os
import shutil
import struct
import sys

import numpy as np

F32, I8, I16, I32, F16, BF16 = 0, 1, 2, 3, 4, 5
NP = {F32: np.float32, I8: np.int8, I16: np.int16, I32: np.int32, F16: np.float16, BF16: np.uint16}


def _str(b, o):
    n = struct.unpack_from("<H", b, o)[0]
    s = b[o + 2:o + 2 + n]
    return s.rstrip(b"\0").decode("utf-8"), o + 2 + n


def read_model_bin(path):
    """-> dict(version, spec, revision, variables: [(name, dtype, shape, raw bytes)], aliases: [(alias, name)])."""
    with open(path, "rb") as f:
        b = f.read()
    o = 0
    version = struct.unpack_from("<I", b, o)[0]
    o += 4
    spec, revision = "", 1
    if version >= 2:
        spec, o = _str(b, o)
        revision = struct.unpack_from("<I", b, o)[0]
        o += 4
    n = struct.unpack_from("<I", b, o)[0]
    o += 4
    variables = []
    for _ in range(n):
        name, o = _str(b, o)
        rank = b[o]
        o += 1
        shape = list(struct.unpack_from(f"<{rank}I", b, o))
        o += 4 * rank
        if version >= 4:
            dtype = b[o]
            nbytes = struct.unpack_from("<I", b, o + 1)[0]
            o += 5
        else:
            item = b[o]
            count = struct.unpack_from("<I", b, o + 1)[0]
            o += 5
            dtype = {4: F32, 2: I16, 1: I8}[item]
            nbytes = item * count
        variables.append((name, dtype, shape, b[o:o + nbytes]))
        o += nbytes
    aliases = []
    if version >= 3:
        na = struct.unpack_from("<I", b, o)[0]
        o += 4
        for _ in range(na):
            a, o = _str(b, o)
            t, o = _str(b, o)
            aliases.append((a, t))
    assert o == len(b), f"{path}: {len(b) - o} trailing bytes"
    return dict(version=version, spec=spec, revision=revision, variables=variables, aliases=aliases)


def _wstr(s):
    e = s.encode("utf-8") + b"\0"
    return struct.pack("<H", len(e)) + e


def write_model_bin(path, m, version=None):
    version = m["version"] if version is None else version
    out = [struct.pack("<I", version)]
    if version >= 2:
        out += [_wstr(m["spec"]), struct.pack("<I", m["revision"])]
    out.append(struct.pack("<I", len(m["variables"])))
    for name, dtype, shape, raw in m["variables"]:
        out += [_wstr(name), bytes([len(shape)]), struct.pack(f"<{len(shape)}I", *shape)]
        if version >= 4:
            out += [bytes([dtype]), struct.pack("<I", len(raw))]
        else:
            item = {F32: 4, I16: 2, I8: 1}[dtype]
            out += [bytes([item]), struct.pack("<I", len(raw) // item)]
        out.append(raw)
    if version >= 3:
        out.append(struct.pack("<I", len(m["aliases"])))
        for a, t in m["aliases"]:
            out += [_wstr(a), _wstr(t)]
    with open(path, "wb") as f:
        f.write(b"".join(out))


def _bf16(x):
    """float32 -> bfloat16 bits, round to nearest even."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return u.astype(np.uint16)


def convert(m, dtype):
    """-> (variant model, float32 model of the values the variant decodes to)."""
    var, ref = [], []
    for name, dt, shape, raw in m["variables"]:
        if dt != F32 or not name.endswith("weight") or len(shape) != 2:
            var.append((name, dt, shape, raw))
            ref.append((name, dt, shape, raw))
            continue
        w = np.frombuffer(raw, dtype=np.float32).reshape(shape)
        if dtype == "float16":
            q = w.astype(np.float16)
            var.append((name, F16, shape, q.tobytes()))
            back = q.astype(np.float32)
        elif dtype == "bfloat16":
            q = _bf16(w)
            var.append((name, BF16, shape, q.tobytes()))
            back = (q.astype(np.uint32) << 16).view(np.float32).reshape(shape)
        elif dtype == "int8":
            amax = np.abs(w).max(axis=1)
            s = np.where(amax > 0, np.float32(127) / np.maximum(amax, 1e-30), np.float32(1)).astype(np.float32)
            q = np.clip(np.rint(w * s[:, None]), -127, 127).astype(np.int8)
            var += [(name, I8, shape, q.tobytes()), (name + "_scale", F32, [shape[0]], s.tobytes())]
            back = (q.astype(np.float32) / s[:, None]).astype(np.float32)
        elif dtype == "int16":
            s = np.float32(32767) / np.float32(np.abs(w).max())
            q = np.clip(np.rint(w * s), -32767, 32767).astype(np.int16)
            var += [(name, I16, shape, q.tobytes()), (name + "_scale", F32, [], np.float32(s).tobytes())]
            back = (q.astype(np.float32) / s).astype(np.float32)
        else:
            raise ValueError(dtype)
        ref.append((name, F32, shape, np.ascontiguousarray(back, dtype=np.float32).tobytes()))
    return dict(m, variables=var), dict(m, variables=ref)


def copy_dir(src, dst, model):
    os.makedirs(dst, exist_ok=True)
    for f in os.listdir(src):
        if f != "model.bin" and os.path.isfile(os.path.join(src, f)):
            shutil.copy(os.path.join(src, f), os.path.join(dst, f))
    write_model_bin(os.path.join(dst, "model.bin"), model)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--dtype", choices=["float32", "float16", "bfloat16", "int8", "int16"], default="float32")
    ap.add_argument("--reference", help="also write the float32 model of the decoded values here")
    ap.add_argument("--binary-version", type=int, choices=[3, 4, 5, 6])
    a = ap.parse_args(argv)
    m = read_model_bin(os.path.join(a.src, "model.bin"))
    var, ref = (m, m) if a.dtype == "float32" else convert(m, a.dtype)
    if a.binary_version:
        var = dict(var, version=a.binary_version)
    copy_dir(a.src, a.dst, var)
    if a.reference:
        copy_dir(a.src, a.reference, ref)


if __name__ == "__main__":
    main(sys.argv[1:])
