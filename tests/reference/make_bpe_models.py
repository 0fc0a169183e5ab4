#!/usr/bin/python3
"""Trains the SentencePiece BPE models of the BPE tokenizer tests (tests/data/tokenizer/bpe_*.model).

    /usr/bin/python3 tests/reference/make_bpe_models.py --data DIR

DIR holds the Multi30k and Tatoeba en-de training sets (multi30k.train.{en,de},
tatoeba.train.{en,de}); without --data the models are trained on tests/data/dev. Only the .model
files are kept; tests/unit/host/tokenizer_bpe_test.cc compares the runtime tokenizer with
libsentencepiece on them, so no ids are stored.
"""
import argparse
import os

import sentencepiece as spm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "data", "tokenizer")
DEV = os.path.join(ROOT, "tests", "data", "dev")

MODELS = {
    # The common case: NFKC, dummy prefix, extra whitespace removed, shared en+de vocabulary.
    "bpe_2k": dict(vocab_size=2000, normalization_rule_name="nmt_nfkc", files=("multi30k",)),
    # Larger, with byte fallback (unknown characters become <0xXX> pieces), as NLLB-style models.
    "bpe_8k_bytes": dict(vocab_size=8000, normalization_rule_name="nmt_nfkc", byte_fallback=True,
                         files=("multi30k", "tatoeba")),
    # User-defined and control symbols, case folding, no dummy prefix, whitespace kept as is.
    "bpe_udf": dict(vocab_size=1000, normalization_rule_name="nmt_nfkc_cf", add_dummy_prefix=False,
                    remove_extra_whitespaces=False, user_defined_symbols=["<sep>", "NY", "\u2581New", "ab"],
                    control_symbols=["<ctl>"], pad_id=3, files=("tatoeba",)),
    # Whitespace as suffix, identity normalization, unusual special ids.
    "bpe_suffix": dict(vocab_size=500, normalization_rule_name="identity", treat_whitespace_as_suffix=True,
                       unk_id=2, bos_id=0, eos_id=1, files=("multi30k",)),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", help="directory with multi30k.train.* and tatoeba.train.*")
    args = ap.parse_args()
    for name, opts in MODELS.items():
        opts = dict(opts)
        sets = opts.pop("files")
        if args.data:
            inputs = [os.path.join(args.data, f"{s}.train.{l}") for s in sets for l in ("en", "de")]
        else:
            inputs = [os.path.join(DEV, f) for f in ("multi30k.val.en", "multi30k.val.de", "tatoeba.dev.en",
                                                     "tatoeba.dev.de")]
        spm.SentencePieceTrainer.train(input=",".join(inputs), model_prefix=os.path.join(OUT, name),
                                       model_type="bpe", hard_vocab_limit=False, num_threads=1, minloglevel=2,
                                       **opts)
        os.remove(os.path.join(OUT, name + ".vocab"))
        print(name, os.path.getsize(os.path.join(OUT, name + ".model")), "bytes")


if __name__ == "__main__":
    main()
