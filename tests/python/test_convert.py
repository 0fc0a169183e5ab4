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
