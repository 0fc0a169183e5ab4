#!/usr/bin/python3
"""Writes the tokenizer oracle used by tests/unit/host/tokenizer_test.cc.

Run with Debian's python3 (python3-sentencepiece):  /usr/bin/python3 tests/reference/make_tokenizer_golden.py

The oracle is libsentencepiece + vocab.json, the way HF MarianTokenizer uses them:
  encode: ids = [vocab.get(p, vocab["<unk>"]) for p in sp.encode(text, out_type=str)]   (no </s>)
  decode: MarianTokenizer.decode(ids, skip_special_tokens=True)
          = sp_target.decode_pieces([vocab piece of id, ids of </s> <unk> <pad> dropped]).strip()

Inputs are split on b"\\n" only (lines may hold \\r, U+2028, ... as text). Outputs, in tests/data/tokenizer/:
  <set>.ids          one line per input line: space-separated model ids
  <set>.decoded      one JSON string per line: decode(ids) (for German sets and the adversarial set)
  <name>.greedy.decoded  decode of the reference greedy outputs (<name>.greedy.ids)
  source_spm.json    sentencepiece's view of source.spm (pieces, scores, kinds, special ids, flags)
  variant_<v>.ids / .decoded   the same oracle for small models with non-default settings
                     (variant_<v>.model, vocab = the model's own pieces), on adversarial.txt, multi30k.val.en
                     and tatoeba.dev.de; variant_flags.bytes.ids / .decoded: hand-made byte-piece sequences.

  lang_codes.jsonl   OPUS-MT language codes (">>deu<<"): one JSON object per input of LANG_CODE_INPUTS with
                     the source and target ids (no </s>) and decode(target ids), for the vocabulary of the
                     "multi" random checkpoint (make_random_checkpoint.py: the demo's vocab.json plus codes);
  lang_codes.vocab.json  the entries that vocabulary adds to the demo's vocab.json.
                     Oracle: MarianTokenizer of transformers 4.2x, reimplemented in marian_tokenize() below.

`--train` first retrains the variant models (they are committed; retraining may change them):
  variant_flags   nmt_nfkc_cf, no dummy prefix, extra whitespace kept, user-defined and control symbols,
                  byte fallback, pad id 3
  variant_suffix  identity normalizer (no charsmap), whitespace as suffix, unk/bos/eos = 2/0/1
"""
import json
import os
import re
import sys

import sentencepiece as spm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = os.path.join(ROOT, "models", "marian-en-de-tiny")
DEV = os.path.join(ROOT, "tests", "data", "dev")
OUT = os.path.join(ROOT, "tests", "data", "tokenizer")
SPECIAL = ("</s>", "<unk>", "<pad>")  # MarianTokenizer.all_special_tokens


def read_lines(path):
    with open(path, "rb") as f:
        data = f.read()
    if data.endswith(b"\n"):
        data = data[:-1]
    return [l.decode("utf-8") for l in data.split(b"\n")]


class Marian:
    def __init__(self):
        self.source = spm.SentencePieceProcessor(model_file=os.path.join(MODEL, "source.spm"))
        self.target = spm.SentencePieceProcessor(model_file=os.path.join(MODEL, "target.spm"))
        with open(os.path.join(MODEL, "vocab.json"), encoding="utf-8") as f:
            self.vocab = json.load(f)
        self.id_to_piece = {v: k for k, v in self.vocab.items()}
        self.special_ids = {self.vocab[t] for t in SPECIAL}

    def encode(self, sp, text):
        return [self.vocab.get(p, self.vocab["<unk>"]) for p in sp.encode(text, out_type=str)]

    def decode(self, ids):
        pieces = [self.id_to_piece[i] for i in ids if i not in self.special_ids]
        return self.target.decode_pieces(pieces).strip()


def write_ids(path, rows):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for ids in rows:
            f.write(" ".join(map(str, ids)) + "\n")


def write_decoded(path, texts):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for t in texts:
            f.write(json.dumps(t, ensure_ascii=False) + "\n")


def spm_view(sp):
    kinds = []
    for i in range(sp.get_piece_size()):
        if sp.is_unknown(i):
            kinds.append("unknown")
        elif sp.is_control(i):
            kinds.append("control")
        elif sp.is_unused(i):
            kinds.append("unused")
        elif sp.is_byte(i):
            kinds.append("byte")
        else:
            kinds.append("normal_or_user_defined")
    return {
        "piece_size": sp.get_piece_size(),
        "pieces": [sp.id_to_piece(i) for i in range(sp.get_piece_size())],
        "scores": [sp.get_score(i) for i in range(sp.get_piece_size())],
        "kinds": kinds,
        "unk_id": sp.unk_id(),
        "bos_id": sp.bos_id(),
        "eos_id": sp.eos_id(),
        "pad_id": sp.pad_id(),
        # Flags as observed through behaviour.
        "add_dummy_prefix": sp.encode("a", out_type=str)[0].startswith("\u2581"),
        "remove_extra_whitespaces": sp.encode("  a  b  ", out_type=str) == sp.encode("a b", out_type=str),
    }


VARIANTS = {
    "variant_flags": dict(vocab_size=700, normalization_rule_name="nmt_nfkc_cf", add_dummy_prefix=False,
                          remove_extra_whitespaces=False, user_defined_symbols=["<sep>", "NY", "\u2581New"],
                          control_symbols=["<ctl>"], byte_fallback=True, pad_id=3),
    "variant_suffix": dict(vocab_size=300, normalization_rule_name="identity", treat_whitespace_as_suffix=True,
                           unk_id=2, bos_id=0, eos_id=1),
}


def train_variants():
    inputs = ",".join(os.path.join(DEV, f) for f in ("multi30k.val.en", "tatoeba.dev.en"))
    for name, opts in VARIANTS.items():
        spm.SentencePieceTrainer.train(input=inputs, model_prefix=os.path.join(OUT, name), model_type="unigram",
                                       hard_vocab_limit=False, num_threads=1, minloglevel=2, **opts)
        os.remove(os.path.join(OUT, name + ".vocab"))


def variant_goldens():
    lines = (read_lines(os.path.join(OUT, "adversarial.txt")) + read_lines(os.path.join(DEV, "multi30k.val.en")) +
             read_lines(os.path.join(DEV, "tatoeba.dev.de")))
    for name in VARIANTS:
        sp = spm.SentencePieceProcessor(model_file=os.path.join(OUT, name + ".model"))
        vocab = {sp.id_to_piece(i): i for i in range(sp.get_piece_size())}
        special = {vocab[t] for t in SPECIAL if t in vocab}

        def decode(ids):
            return sp.decode_pieces([sp.id_to_piece(i) for i in ids if i not in special]).strip()

        rows = [[vocab.get(p, vocab["<unk>"]) for p in sp.encode(l, out_type=str)] for l in lines]
        write_ids(os.path.join(OUT, name + ".ids"), rows)
        write_decoded(os.path.join(OUT, name + ".decoded"), [decode(r) for r in rows])
        print(f"{name}: {len(lines)} lines")
        if name == "variant_flags":  # byte runs: valid, truncated, stray continuation, mixed with pieces
            seqs = [["<0xF0>", "<0x9F>", "<0x98>", "<0x80>"], ["<0xF0>", "<0x9F>", "<0x98>"], ["<0x80>", "<0x41>"],
                    ["<0xE2>", "he", "<0x96>", "<0x81>", "<0xC3>", "<0xA9>"], ["<0xC0>", "<0xAF>", "<0xED>", "<0xA0>", "<0x80>"],
                    ["\u2581", "<0x20>", "<0x41>", "<ctl>", "<0xC3>", "<ctl>", "<0xA9>", "</s>"], ["<unk>", "NY", "<s>", "<pad>"]]
            rows = [[vocab[p] for p in seq] for seq in seqs]
            write_ids(os.path.join(OUT, name + ".bytes.ids"), rows)
            write_decoded(os.path.join(OUT, name + ".bytes.decoded"), [decode(r) for r in rows])


# MarianTokenizer (transformers 4.2x, tokenization_marian.py): language_code_re = re.compile(">>.+<<");
# remove_language_code(text) = ([match at the start of text] or [], language_code_re.sub("", text));
# _tokenize(text) = code + current_spm.encode(rest, out_type=str); tokens -> ids by vocab.get(t, unk).
LANGUAGE_CODE_RE = re.compile(">>.+<<")


def marian_tokenize(sp, vocab, text):
    m = LANGUAGE_CODE_RE.match(text)
    code = [m.group(0)] if m else []
    rest = LANGUAGE_CODE_RE.sub("", text)
    return [vocab.get(p, vocab["<unk>"]) for p in code + sp.encode(rest, out_type=str)]


LANG_CODE_INPUTS = [
    ">>deu<< Hello", ">>deu<<Hello", "Hello >>fra<< there", ">>xx<<", ">>unknown<< x",
    ">>fra<< A man is riding a bike.", ">>por<<  Two dogs play in the snow. ", ">>zho_Hans<< Ein Mann",
    ">>\u00fcn\u00ef<< caf\u00e9", ">>deu<<", " >>deu<< leading space", "\t>>deu<< tab",
    ">>fra<< >>deu<< two codes (greedy: one token)", ">>deu<< We use cout<< to print", ">>deu<< a<<b",
    "x >>deu<< y >>fra<< z", ">><< no character between", ">>><< one bracket", ">>>deu<< three",
    ">>deu<<< three", ">>d<<", ">> deu << spaced", ">>deu", "deu<<", "<<deu>> reversed", ">>>>", "<<<<",
    ">>\n<<", ">>deu<<\n>>fra<< two lines", ">>de\nu<< split by a newline", "Hello\n>>fra<< second line",
    ">>deu<<\r\nx", ">>DEU<< case", ">>deu<<>>fra<<", "<unk> >>deu<< </s>", ">>\u2581deu<< x",
    ">>deu<<\u0301 combining mark", "e>>deu<<\u0301 joins", "\uff1e\uff1edeu\uff1c\uff1c fullwidth", "",
    "plain text without codes",
]


def lang_code_goldens():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from make_random_checkpoint import PRESETS, vocab_with_codes
    vocab = vocab_with_codes(PRESETS["multi"]["lang_codes"])
    id_to_piece = {v: k for k, v in vocab.items()}
    special = {vocab[t] for t in SPECIAL}
    source = spm.SentencePieceProcessor(model_file=os.path.join(MODEL, "source.spm"))
    target = spm.SentencePieceProcessor(model_file=os.path.join(MODEL, "target.spm"))
    with open(os.path.join(OUT, "lang_codes.jsonl"), "w", encoding="utf-8", newline="\n") as f:
        for text in LANG_CODE_INPUTS:
            src = marian_tokenize(source, vocab, text)
            tgt = marian_tokenize(target, vocab, text)
            decoded = target.decode_pieces([id_to_piece[i] for i in tgt if i not in special]).strip()
            f.write(json.dumps({"text": text, "source_ids": src, "target_ids": tgt, "decoded": decoded},
                               ensure_ascii=False) + "\n")
    with open(os.path.join(MODEL, "vocab.json"), encoding="utf-8") as f:
        demo = json.load(f)
    with open(os.path.join(OUT, "lang_codes.vocab.json"), "w", encoding="utf-8", newline="\n") as f:
        json.dump({k: v for k, v in vocab.items() if k not in demo}, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"lang_codes: {len(LANG_CODE_INPUTS)} inputs")


def main():
    if "--train" in sys.argv[1:]:
        train_variants()
    variant_goldens()
    lang_code_goldens()
    m = Marian()
    sets = [("multi30k.val.en", m.source), ("multi30k.val.de", m.target),
            ("tatoeba.dev.en", m.source), ("tatoeba.dev.de", m.target)]
    for name, sp in sets:
        lines = read_lines(os.path.join(DEV, name))
        rows = [m.encode(sp, l) for l in lines]
        write_ids(os.path.join(OUT, name + ".ids"), rows)
        if name.endswith(".de"):
            write_decoded(os.path.join(OUT, name + ".decoded"), [m.decode(r) for r in rows])
        print(f"{name}: {len(lines)} lines, {sum(map(len, rows))} ids")

    lines = read_lines(os.path.join(OUT, "adversarial.txt"))
    for side, sp in (("source", m.source), ("target", m.target)):
        rows = [m.encode(sp, l) for l in lines]
        write_ids(os.path.join(OUT, f"adversarial.{side}.ids"), rows)
        if side == "target":
            write_decoded(os.path.join(OUT, "adversarial.target.decoded"), [m.decode(r) for r in rows])
    print(f"adversarial: {len(lines)} lines")

    for name in ("multi30k.val", "tatoeba.dev"):
        with open(os.path.join(OUT, name + ".greedy.ids"), encoding="utf-8") as f:
            rows = [[int(x) for x in l.split()] for l in f.read().split("\n")[:-1]]
        write_decoded(os.path.join(OUT, name + ".greedy.decoded"), [m.decode(r) for r in rows])
        print(f"{name}.greedy: {len(rows)} lines")

    with open(os.path.join(OUT, "source_spm.json"), "w", encoding="utf-8") as f:
        json.dump(spm_view(m.source), f, ensure_ascii=False)


if __name__ == "__main__":
    main()
