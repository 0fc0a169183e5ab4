#!/usr/bin/python3
"""Convert an old HF `pytorch_model.bin` (torch pickle state_dict) to `model.safetensors`.

Needs Debian's python3-torch only: the safetensors file is written by hand (8-byte little-endian
header length, JSON header, raw little-endian tensor data), no `safetensors` package.

    /usr/bin/python3 converter/pt_to_safetensors.py hf_dir/pytorch_model.bin hf_dir/model.safetensors

Every tensor of the state dict is written under its own name (tied tensors are written once per
name; `mtlite convert` ignores the duplicates). Floating tensors keep their dtype (F32/F16/BF16)
unless --dtype f32 asks for float32.
"""
import argparse
import json
import os
import struct
import sys

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402  (after the OpenMP settings)

DTYPES = {
    torch.float64: "F64", torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
    torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8",
    torch.uint8: "U8", torch.bool: "BOOL",
}


def load_state_dict(path):
    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except TypeError:  # torch without weights_only
        obj = torch.load(path, map_location="cpu")
    if isinstance(obj, dict) and "state_dict" in obj and isinstance(obj["state_dict"], dict):
        obj = obj["state_dict"]
    if not isinstance(obj, dict) or not all(isinstance(v, torch.Tensor) for v in obj.values()):
        raise SystemExit(f"{path}: not a flat state_dict of tensors")
    return obj


def tensor_bytes(t):
    t = t.detach().contiguous().cpu()
    if t.dtype == torch.bfloat16:  # numpy has no bfloat16: reinterpret the bits
        t = t.view(torch.int16)
    return t.numpy().tobytes()  # native order == little-endian (checked in main)


def write_safetensors(state, out_path, force_f32):
    header, chunks, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name in sorted(state):
        t = state[name]
        if force_f32 and t.is_floating_point():
            t = t.float()
        if t.dtype not in DTYPES:
            raise SystemExit(f"tensor '{name}': dtype {t.dtype} has no safetensors equivalent")
        data = tensor_bytes(t)
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    blob = json.dumps(header, separators=(",", ":")).encode("utf-8")
    blob += b" " * (-(8 + len(blob)) % 8)  # data section 8-byte aligned
    tmp = out_path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(blob)))
        f.write(blob)
        for c in chunks:
            f.write(c)
    os.replace(tmp, out_path)
    return len(state), 8 + len(blob) + offset


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", help="pytorch_model.bin")
    p.add_argument("output", help="model.safetensors")
    p.add_argument("--dtype", choices=["keep", "f32"], default="keep",
                   help="keep the floating dtypes (default) or convert them to float32")
    args = p.parse_args(argv)
    if sys.byteorder != "little":
        raise SystemExit("safetensors data is little-endian; run this on a little-endian host")
    n, size = write_safetensors(load_state_dict(args.input), args.output, args.dtype == "f32")
    print(f"{args.output}: {n} tensors, {size} bytes")


if __name__ == "__main__":
    main(sys.argv[1:])
