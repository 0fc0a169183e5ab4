"""The vocabulary shortlist from Python: Model.has_shortlist and the use_shortlist option of
translate_batch / translate_iterable / translate_file / translate_stream, against
`mtlite translate --shortlist` on a model `mtlite shortlist` made."""
import os

import numpy as np
import pytest

from conftest import ROOT, dev_lines, run_cli

TRAIN = os.path.join(ROOT, "tests", "data", "shortlist", "train")


@pytest.fixture(scope="module")
def shortlist_path(cli, int8_path, tmp_path_factory):
    # A deliberately small shortlist (10 per source token, 20 frequent), so it changes outputs.
    out = str(tmp_path_factory.mktemp("shortlist") / "demo.shortlist.int8.mtlite")
    run_cli(cli, ["shortlist", "-m", int8_path, "--source", TRAIN + ".en", "--target", TRAIN + ".de", "-o", out,
                  "--top-k", "10", "--frequent", "20"], [])
    return out


def lines16():
    return dev_lines("multi30k.val")[:8] + dev_lines("tatoeba.dev")[:8]


def test_has_shortlist(mtlite, int8_model, shortlist_path):
    assert int8_model.has_shortlist is False
    assert mtlite.Model(shortlist_path).has_shortlist is True


@pytest.mark.parametrize("beam", [1, 4])
def test_translate_batch_matches_the_cli(mtlite, cli, shortlist_path, beam):
    lines = lines16()
    tr = mtlite.Translator(shortlist_path, max_batch=16, max_beam=4)
    got = [r.text for r in tr.translate_batch(lines, beam_size=beam, use_shortlist=True)]
    # one runtime call of the 16 lines on both sides: the same candidates
    _, want, _ = run_cli(cli, ["translate", "-m", shortlist_path, "--split", "none", "--beam", str(beam), "--batch", "16",
                               "--shortlist"], lines)
    assert got == want
    _, plain, _ = run_cli(cli, ["translate", "-m", shortlist_path, "--split", "none", "--beam", str(beam), "--batch", "16"], lines)
    assert [r.text for r in tr.translate_batch(lines, beam_size=beam)] == plain  # off by default
    assert got != plain  # the option reaches the runtime (10 candidates per token change outputs)


def test_iterable_file_and_stream(mtlite, shortlist_path, tmp_path):
    lines = lines16()
    tr = mtlite.Translator(shortlist_path, max_batch=4, max_beam=4)
    want = [r.text for r in tr.translate_batch(lines, beam_size=1, use_shortlist=True)]
    got = [r.text for r in tr.translate_iterable(lines, batch_size=4, beam_size=1, use_shortlist=True)]
    assert got == want  # the same windows and calls (16 lines sorted by length, 4 per call)
    src, dst = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    assert tr.translate_file(src, dst, batch_size=4, beam_size=1, use_shortlist=True)["lines"] == 16
    assert dst.read_text(encoding="utf-8").split("\n")[:-1] == want
    for text in lines[:3]:
        final = [e for e in tr.translate_stream(text, beam_size=4, use_shortlist=True) if e.final]
        assert len(final) == 1
        assert final[0].text == tr.translate_batch([text], beam_size=4, use_shortlist=True)[0].text


def test_score_after_a_shortlist_translation(mtlite, shortlist_path):
    # score_batch scores over the whole vocabulary, whatever the translator's previous call was:
    # after translate_batch(use_shortlist=True), the same scores as a translator that never
    # translated (bit for bit: the same computation on the same model and limits).
    src = dev_lines("multi30k.val")[:4] + dev_lines("tatoeba.dev")[:4]
    tgt = dev_lines("multi30k.val", "de")[:4] + dev_lines("tatoeba.dev", "de")[:4]
    want = mtlite.Translator(shortlist_path, max_batch=16, max_beam=4).score_batch(src, tgt)
    tr = mtlite.Translator(shortlist_path, max_batch=16, max_beam=4)
    tr.translate_batch(lines16(), beam_size=4, use_shortlist=True)
    got = tr.score_batch(src, tgt)
    for line, w, g in zip(src, want, got):
        assert g.tokens.tolist() == w.tokens.tolist(), line
        assert np.array_equal(g.log_probs, w.log_probs), (line, g.score, w.score)


def test_model_without_a_shortlist_section(mtlite, int8_model):
    tr = mtlite.Translator(int8_model, max_batch=2)
    with pytest.raises(mtlite.UnsupportedError, match="shortlist"):
        tr.translate_batch(["A dog runs."], use_shortlist=True)
    with pytest.raises(mtlite.UnsupportedError, match="shortlist"):
        list(tr.translate_stream("A dog runs.", use_shortlist=True))
    assert tr.translate_batch(["A dog runs."])[0].text  # the translator still works
