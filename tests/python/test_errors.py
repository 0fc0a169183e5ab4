"""Bad input and bad arguments raise mtlite.Error subclasses that carry the runtime's message;
nothing crashes."""
import os
import shutil

import numpy as np
import pytest


def test_error_hierarchy(mtlite):
    assert issubclass(mtlite.InvalidArgumentError, mtlite.Error) and issubclass(mtlite.InvalidArgumentError, ValueError)
    assert issubclass(mtlite.OutOfRangeError, ValueError) and issubclass(mtlite.IoError, OSError)
    assert issubclass(mtlite.ResourceExhaustedError, MemoryError) and issubclass(mtlite.Error, RuntimeError)
    assert mtlite.InvalidModelError.code == "INVALID_MODEL" and mtlite.ChecksumMismatchError.code == "CHECKSUM_MISMATCH"


def test_bad_text(mtlite, int8_model):
    tr = mtlite.Translator(int8_model, max_batch=2, max_input_bytes=64, max_source_tokens=16)
    with pytest.raises(mtlite.InvalidArgumentError, match=r"sentence 1: tokenizer: invalid UTF-8 in input at byte offset 3"):
        tr.translate_batch(["fine", "abc\udc80"])  # a lone surrogate in a str
    with pytest.raises(mtlite.InvalidArgumentError, match=r"byte offset 1"):
        tr.translate(b"a\xc0\xafb")  # overlong encoding in bytes
    with pytest.raises(mtlite.OutOfRangeError, match=r"65 bytes exceed max_input_bytes 64"):
        tr.translate("x" * 65)
    with pytest.raises(mtlite.OutOfRangeError, match=r"more than 15 source tokens"):
        tr.translate("a b c d e f g h i j k l m n o p")
    assert tr.translate("") == "" and tr.translate("\0") is not None
    with pytest.raises(TypeError):
        tr.translate_batch("not a list")
    with pytest.raises(TypeError):
        tr.translate_batch([1, 2])


def test_bad_options(mtlite, int8_model):
    tr = mtlite.Translator(int8_model, max_batch=2, max_beam=2)
    cases = [
        (dict(beam_size=3), r"beam_size 3 outside \[1, max_beam=2\]"),
        (dict(beam_size=0), r"beam_size 0"),
        (dict(beam_size=2, n_best=3), r"n_best 3 must be in"),
        (dict(beam_size=1, max_length=0), r"max_length must be >= 1"),
        (dict(beam_size=1, return_alignments=True), r"TranslatorLimits.alignments is false"),
        (dict(beam_size=1, length_penalty=float("nan")), r"length_penalty"),
        (dict(), r"beam_size 4 outside \[1, max_beam=2\]"),  # the default beam_size is 4
    ]
    for kw, msg in cases:
        with pytest.raises(mtlite.InvalidArgumentError, match=msg):
            tr.translate_batch(["A dog."], **kw)


@pytest.mark.parametrize("kw,msg", [
    (dict(max_batch=0), r"TranslatorLimits.max_batch = 0 is outside \[1, 4096\]"),
    (dict(max_beam=2, max_n_best=3), r"max_n_best = 3"),
    (dict(threads=0), r"num_threads = 0"),
    (dict(max_target_tokens=0), r"max_target_tokens = 0"),
])
def test_bad_limits(mtlite, int8_model, kw, msg):
    with pytest.raises(mtlite.InvalidArgumentError, match=msg):
        mtlite.Translator(int8_model, **kw)
    with pytest.raises(mtlite.InvalidArgumentError, match=msg):
        int8_model.info(**kw)


def test_bad_model_files(mtlite, int8_path, tmp_path):
    with pytest.raises(mtlite.IoError, match="nonexistent"):
        mtlite.Model(tmp_path / "nonexistent.mtlite")
    with pytest.raises(mtlite.IoError):
        mtlite.Translator(str(tmp_path / "nonexistent.mtlite"))
    junk = tmp_path / "junk.mtlite"
    junk.write_bytes(b"\x00" * 100)
    with pytest.raises(mtlite.InvalidModelError) as e:
        mtlite.Model(junk)
    assert str(junk) in str(e.value) and len(str(e.value)) > len(str(junk)) + 5
    truncated = tmp_path / "truncated.mtlite"
    truncated.write_bytes(open(int8_path, "rb").read()[:100000])
    with pytest.raises(mtlite.InvalidModelError):
        mtlite.Model(truncated)
    # A flipped bit inside the weights: loads, but checksum verification names the tensor.
    flipped = tmp_path / "flipped.mtlite"
    shutil.copyfile(int8_path, flipped)
    data = bytearray(flipped.read_bytes())
    data[len(data) // 2] ^= 0x10
    flipped.write_bytes(bytes(data))
    m = mtlite.Model(flipped)
    with pytest.raises(mtlite.ChecksumMismatchError, match=r"CRC32C|checksum|crc"):
        m.verify_checksums()
    with pytest.raises(mtlite.ChecksumMismatchError):
        mtlite.Model(flipped, verify_checksums=True)


def test_score_errors(mtlite, int8_model):
    tr = mtlite.Translator(int8_model, max_target_tokens=8, max_source_tokens=8)
    with pytest.raises(ValueError, match="2 sources but 1 targets"):
        tr.score_batch(["a", "b"], ["c"])
    with pytest.raises(mtlite.OutOfRangeError, match=r"pair 0: target length 11 outside \[1, max_target_tokens\]"):
        tr.score_batch(["A dog."], ["Ein Hund rennt schnell durch den großen grünen Park."])
    with pytest.raises(mtlite.OutOfRangeError, match=r"pair 0: .*source tokens exceed max_source_tokens 8"):
        tr.score_batch(["A very long sentence with many many words in it."], ["Ein Hund."])
    with pytest.raises(mtlite.InvalidArgumentError):
        tr.score_batch(["\udc80"], ["x"])


def test_convert_errors(mtlite, tmp_path):
    with pytest.raises(mtlite.Error, match="config.json"):
        mtlite.convert(tmp_path, tmp_path / "out.mtlite")
    with pytest.raises(mtlite.InvalidArgumentError, match="quantize"):
        mtlite.convert(tmp_path, tmp_path / "out.mtlite", quantize="int4")
    assert not (tmp_path / "out.mtlite").exists()


def test_decode_errors(mtlite, int8_model):
    with pytest.raises(mtlite.InvalidArgumentError, match="outside the vocab"):
        int8_model.decode([5, 999999])
    with pytest.raises(mtlite.InvalidArgumentError, match="not a valid token id"):
        int8_model.decode([-1])
    assert int8_model.decode(np.array([], dtype=np.int32)) == ""


def test_inputs_without_tokens_after_errors(mtlite, int8_model):
    # A fresh translator whose first successful call holds only inputs without tokens, after
    # calls that failed before the search (heap garbage in a small arena): "" for each.
    junk = [bytearray(b"\xff" * (1 << 20)) for _ in range(8)]
    del junk
    for beam in (1, 4):
        tr = mtlite.Translator(int8_model, max_batch=3, max_input_bytes=32, max_source_tokens=8)
        for bad in (["x" * 40], ["a b c d e f g h i"], [b"\xff"]):
            with pytest.raises(mtlite.Error):
                tr.translate_batch(bad, beam_size=beam)
        assert [r.text for r in tr.translate_batch(["", "   ", "\t"], beam_size=beam)] == ["", "", ""]
