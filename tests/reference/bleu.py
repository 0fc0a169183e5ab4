#!/usr/bin/python3
"""Corpus BLEU with the 13a tokenizer, as sacrebleu's defaults compute it
(4-gram, uniform weights, no smoothing, brevity penalty, one reference per segment).

    BLEU = BP * exp( (1/4) * sum_{n=1..4} log p_n ) * 100
    p_n  = sum over segments of clipped n-gram matches / sum of hypothesis n-grams
    BP   = 1 if c >= r else exp(1 - r / c)  (0 if c == 0);  c, r = total hyp / ref tokens
Any p_n equal to 0 (including no hypothesis n-grams at all) makes BLEU 0 (no smoothing).

Usage: bleu.py HYP_FILE REF_FILE  -> prints the score with 2 decimals.
"""
import math
import re
import sys
from collections import Counter

# 13a (mteval-v13a) punctuation splitting. Characters split off as their own token:
# ASCII 0x20-0x26 (space ! " # $ % &), ( ) * +, / , : ; < = > ? @, [ \ ] ^ _ `, { | } ~
_PUNCT = re.compile(r"([ !\"#$%&()*+/:;<=>?@\[\\\]^_`{|}~])")
_PERIOD_COMMA_NOT_AFTER_DIGIT = re.compile(r"([^0-9])([.,])")
_PERIOD_COMMA_NOT_BEFORE_DIGIT = re.compile(r"([.,])([^0-9])")
_DASH_AFTER_DIGIT = re.compile(r"([0-9])(-)")


def tokenize_13a(line):
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        line = (line.replace("&quot;", '"').replace("&amp;", "&")
                .replace("&lt;", "<").replace("&gt;", ">"))
    line = " " + line + " "
    line = _PUNCT.sub(r" \1 ", line)
    line = _PERIOD_COMMA_NOT_AFTER_DIGIT.sub(r"\1 \2 ", line)
    line = _PERIOD_COMMA_NOT_BEFORE_DIGIT.sub(r" \1 \2", line)
    line = _DASH_AFTER_DIGIT.sub(r"\1 \2 ", line)
    return line.split()


def _ngrams(tokens, n):
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def corpus_stats(hyps, refs, max_n=4, tokenize=None):
    """Returns (matches[n], totals[n], hyp_len, ref_len)."""
    tokenize = tokenize or tokenize_13a
    if len(hyps) != len(refs):
        raise ValueError(f"{len(hyps)} hypotheses but {len(refs)} references")
    matches = [0] * max_n
    totals = [0] * max_n
    hyp_len = ref_len = 0
    for h, r in zip(hyps, refs):
        ht, rt = tokenize(h), tokenize(r)
        hyp_len += len(ht)
        ref_len += len(rt)
        for n in range(1, max_n + 1):
            hc, rc = _ngrams(ht, n), _ngrams(rt, n)
            totals[n - 1] += max(0, len(ht) - n + 1)
            matches[n - 1] += sum(min(c, rc[g]) for g, c in hc.items())
    return matches, totals, hyp_len, ref_len


def bleu_from_stats(matches, totals, hyp_len, ref_len):
    max_n = len(matches)
    if hyp_len == 0:
        return 0.0
    if any(m == 0 for m in matches) or any(t == 0 for t in totals):
        return 0.0
    log_p = sum(math.log(m / t) for m, t in zip(matches, totals)) / max_n
    bp = 1.0 if hyp_len >= ref_len else math.exp(1.0 - ref_len / hyp_len)
    return 100.0 * bp * math.exp(log_p)


def corpus_bleu(hyps, refs, tokenize=None):
    return bleu_from_stats(*corpus_stats(hyps, refs, tokenize=tokenize))


def _read(path):
    with open(path, encoding="utf-8") as f:
        return [l.rstrip("\n") for l in f]


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: bleu.py HYP REF", file=sys.stderr)
        sys.exit(2)
    print(f"{corpus_bleu(_read(sys.argv[1]), _read(sys.argv[2])):.2f}")
