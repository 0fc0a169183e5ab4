"""A model's recorded decoding defaults (a Marian release's decoder.yml) are the defaults of every
translate_* call; keyword arguments override them; a model without them decodes as before."""
import os
import shutil

import pytest

from conftest import DEMO_HF, ROOT

MARIAN = os.path.join(ROOT, "tests", "data", "marian")
SENTENCES = ["a b c d e f", "g a g a", "b b c", "f e d c b a g", "c", "a g f b"]
EXPLICIT = dict(beam_size=3, length_penalty=0.6, max_length_ratio=2.0, max_length_offset=1)
PLAIN = dict(beam_size=4, length_penalty=1.0, max_length_ratio=0.0, max_length_offset=10)


@pytest.fixture(scope="module")
def models(mtlite, tmp_path_factory):
    """(with, without): the Marian fixture as an OPUS-MT folder with a decoder.yml (beam 3,
    normalize 0.6, max-length-factor 2), converted with and without its decoding defaults."""
    d = tmp_path_factory.mktemp("release")
    shutil.copy(os.path.join(MARIAN, "untied.npz"), d / "opus.spm8k-spm8k.transformer.model1.npz")
    shutil.copy(os.path.join(DEMO_HF, "source.spm"), d / "source.spm")
    shutil.copy(os.path.join(DEMO_HF, "source.spm"), d / "target.spm")
    shutil.copy(os.path.join(MARIAN, "vocab.yml"), d / "opus.spm8k-spm8k.vocab.yml")
    (d / "decoder.yml").write_text("beam-size: 3\nnormalize: 0.6\nmax-length-factor: 2\n")
    out = tmp_path_factory.mktemp("models")
    report = mtlite.convert(d, out / "with.mtlite")
    assert report["decoding_defaults_recorded"] is True
    report = mtlite.convert(d, out / "without.mtlite", decoding_defaults="none")
    assert report["decoding_defaults_recorded"] is False
    with pytest.raises(mtlite.InvalidArgumentError, match="decoding_defaults"):
        mtlite.convert(d, out / "x.mtlite", decoding_defaults="always")
    return mtlite.Model(out / "with.mtlite"), mtlite.Model(out / "without.mtlite")


def best(results):
    return [(r.ids[0].tolist(), r.scores[0]) for r in results]


def test_decoding_defaults_are_the_translate_defaults(mtlite, models):
    with_, without = models
    assert with_.decoding_defaults == {"beam_size": 3, "length_penalty": pytest.approx(0.6),
                                       "max_length_ratio": 2.0, "max_length_offset": 1, "source": "decoder.yml"}
    assert without.decoding_defaults == {}
    tw, tn = mtlite.Translator(with_), mtlite.Translator(without)
    by_default = best(tw.translate_batch(SENTENCES, return_scores=True))
    assert by_default == best(tw.translate_batch(SENTENCES, return_scores=True, **EXPLICIT))
    assert by_default == best(tn.translate_batch(SENTENCES, return_scores=True, **EXPLICIT))
    # each keyword overrides its default; all of them give the model without defaults
    plain = best(tn.translate_batch(SENTENCES, return_scores=True))
    assert plain != by_default
    assert plain == best(tn.translate_batch(SENTENCES, return_scores=True, **PLAIN))
    assert plain == best(tw.translate_batch(SENTENCES, return_scores=True, **PLAIN))
    # the other entry points take them too
    assert tw.translate(SENTENCES[3]) == tn.translate(SENTENCES[3], **EXPLICIT)
    events = list(tw.translate_stream(SENTENCES[3]))
    assert events[-1].final and events[-1].text == tn.translate(SENTENCES[3], **EXPLICIT)
    assert [r.text for r in tw.translate_iterable(SENTENCES)] == \
        [r.text for r in tn.translate_iterable(SENTENCES, **EXPLICIT)]
    assert tw.translate_text(SENTENCES[0], split="none").text == \
        tn.translate_text(SENTENCES[0], split="none", **EXPLICIT).text


def test_translator_limits_fit_the_models_beam(mtlite, models, tmp_path):
    with_, _ = models
    assert mtlite.Translator(with_).limits["max_beam"] == 4
    # a release beam larger than the package's default max_beam 4 gets room for it
    d = tmp_path / "release"
    d.mkdir()
    for name in ("untied.npz", "vocab.yml"):
        shutil.copy(os.path.join(MARIAN, name), d / ("opus.model1.npz" if name.endswith(".npz") else "opus.vocab.yml"))
    shutil.copy(os.path.join(DEMO_HF, "source.spm"), d / "source.spm")
    shutil.copy(os.path.join(DEMO_HF, "source.spm"), d / "target.spm")
    (d / "decoder.yml").write_text("beam-size: 6\nnormalize: 1\n")
    mtlite.convert(d, tmp_path / "b6.mtlite")
    m = mtlite.Model(tmp_path / "b6.mtlite")
    tr = mtlite.Translator(m)
    assert tr.limits["max_beam"] == 6
    assert tr.translate(SENTENCES[0]) == tr.translate(SENTENCES[0], beam_size=6, length_penalty=1.0,
                                                      max_length_ratio=3.0, max_length_offset=1)
    with pytest.raises(mtlite.InvalidArgumentError, match="beam_size 6"):
        mtlite.Translator(m, max_beam=4).translate(SENTENCES[0])


def test_hf_generation_config_only_on_request(mtlite, tmp_path):
    report = mtlite.convert(DEMO_HF, tmp_path / "auto.mtlite")
    assert report["decoding_defaults_recorded"] is False
    assert mtlite.Model(tmp_path / "auto.mtlite").decoding_defaults == {}
    mtlite.convert(DEMO_HF, tmp_path / "record.mtlite", decoding_defaults="record")
    m = mtlite.Model(tmp_path / "record.mtlite")
    assert m.decoding_defaults == {"beam_size": 4, "max_length": 255, "source": "generation_config.json"}
