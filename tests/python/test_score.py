"""score_batch: teacher-forced per-token log-probs against the PyTorch reference
(tests/reference/marian_ref.py): log_softmax of its raw logits, gathered at the target ids."""
import sys

import numpy as np
import pytest

from conftest import DEMO_HF, REFERENCE, dev_lines


@pytest.fixture(scope="module")
def reference():
    import torch
    torch.set_num_threads(1)
    sys.path.insert(0, REFERENCE)
    from marian_ref import MarianRef
    return MarianRef(DEMO_HF)


def test_score_equals_pytorch_reference(mtlite, fp32_path, int8_path, reference):
    import torch
    src = dev_lines("multi30k.val")[:6] + ["", ">>deu<< A dog."]
    tgt = dev_lines("multi30k.val", "de")[:6] + ["Ein Hund.", ""]
    fp32 = mtlite.Translator(fp32_path)
    res = fp32.score_batch(src, tgt)
    worst = 0.0
    for s, t, r in zip(src, tgt, res):
        model = fp32.model
        src_ids = model.encode(s)
        assert r.tokens.tolist() == model.encode(t, target=True).tolist() and r.tokens[-1] == model.config["eos_id"]
        assert r.log_probs.dtype == np.float32 and r.log_probs.shape == r.tokens.shape
        with torch.no_grad():
            logits = reference.forced_logits(src_ids.tolist(), r.tokens.tolist()).double()
        want = torch.log_softmax(logits, dim=-1)[torch.arange(len(r.tokens)), torch.from_numpy(r.tokens).long()]
        worst = max(worst, float(np.abs(r.log_probs - want.numpy()).max()))
        assert r.score == pytest.approx(float(np.sum(r.log_probs, dtype=np.float64)), abs=1e-9)
        assert np.all(r.log_probs <= 0) and np.all(np.isfinite(r.log_probs))
    print(f"score_batch fp32 vs PyTorch reference: max abs diff {worst:.2e}")
    assert worst <= 1e-4
    # int8: close to fp32 per sentence (quantization error), same tokens.
    q = mtlite.Translator(int8_path).score_batch(src, tgt)
    for a, b in zip(res, q):
        assert a.tokens.tolist() == b.tokens.tolist()
        assert abs(a.score - b.score) < 0.1 * len(a.tokens) + 0.5


def test_score_prefers_the_translation(mtlite, int8_path):
    tr = mtlite.Translator(int8_path)
    src = dev_lines("tatoeba.dev")[:20]
    ref = dev_lines("tatoeba.dev", "de")[:20]
    good = tr.score_batch(src, ref)
    bad = tr.score_batch(src, ref[1:] + ref[:1])  # mismatched pairs
    better = sum(g.score / len(g.tokens) > b.score / len(b.tokens) for g, b in zip(good, bad))
    assert better >= 18
    greedy = tr.translate_batch(src, beam_size=1, return_scores=True)
    scored = tr.score_batch(src, [r.text for r in greedy])
    # the greedy output's own ids score like its search score (length penalty 1: sum / length);
    # the search masks <pad> before the log-softmax, so allow a small difference
    for g, s in zip(greedy, scored):
        if s.tokens[:-1].tolist() == g.ids[0].tolist():
            assert abs(g.scores[0] - s.score / len(s.tokens)) < 0.05
