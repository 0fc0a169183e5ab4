"""mtlite.convert writes the same bytes as `mtlite convert` and the file translates."""
import filecmp
import os

import pytest

from conftest import DEMO_HF


@pytest.mark.parametrize("quantize", ["int8", "fp16"])
def test_convert_equals_cli_output(mtlite, model_dir, tmp_path, quantize):
    out = tmp_path / f"demo.{quantize}.mtlite"
    report = mtlite.convert(DEMO_HF, out, quantize=quantize)
    assert report["path"] == str(out) and report["quantize"] == quantize
    assert report["file_bytes"] == os.path.getsize(out) and report["safetensors_bytes"] > report["file_bytes"]
    assert report["warnings"] == []
    assert filecmp.cmp(out, os.path.join(model_dir, f"demo.{quantize}.mtlite"), shallow=False)
    m = mtlite.Model(out, verify_checksums=True)
    assert m.config["weight_type"] == {"int8": "int8", "fp16": "f16"}[quantize]
    assert mtlite.Translator(m).translate("A man is riding a bike.", beam_size=1)


def test_convert_marian_checkpoint(mtlite, tmp_path):
    """A Marian checkpoint with its vocabularies (the ids from the YAML) converts with Marian's
    semantics, as `mtlite convert` does; a missing vocabulary or a bad semantics is named."""
    data = os.path.join(os.path.dirname(DEMO_HF), "..", "tests", "data", "marian")
    spm, yml = os.path.join(DEMO_HF, "source.spm"), os.path.join(data, "vocab.yml")
    out = tmp_path / "tiny.mtlite"
    report = mtlite.convert(os.path.join(data, "all.int8.bin"), out, vocab=[spm, yml])
    assert (report["kind"], report["semantics"], report["vocab"]) == ("marian", "marian", [spm, yml])
    m = mtlite.Model(out, verify_checksums=True)
    assert m.config["layer_norm_eps"] == pytest.approx(1e-6) and m.config["pad_id"] == 11
    report = mtlite.convert(os.path.join(data, "all.npz"), out, quantize="fp32", vocab=[spm, yml], semantics="hf")
    assert report["semantics"] == "hf"
    assert mtlite.Model(out).config["layer_norm_eps"] == pytest.approx(1e-5)
    with pytest.raises(mtlite.InvalidArgumentError, match="needs its vocabularies"):
        mtlite.convert(os.path.join(data, "all.npz"), out)
    with pytest.raises(mtlite.InvalidArgumentError, match="semantics"):
        mtlite.convert(os.path.join(data, "all.npz"), out, vocab=spm, semantics="fairseq")
