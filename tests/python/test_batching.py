"""Batching that pays: translate_batch sorts a list longer than max_batch by source length before
cutting it into runtime calls; translate_iterable / translate_file do the same within windows of
sort_window lines. Results come back in input order and equal the unsorted ones."""
import subprocess

import numpy as np
import pytest

from conftest import dev_lines


def mixed_lines(n_each):
    # long multi30k captions among short tatoeba lines
    return dev_lines("multi30k.val")[:n_each] + dev_lines("tatoeba.dev")[:n_each]


def unsorted(tr, lines, step, **options):
    # Calls of at most `step` sentences never sort: the input-order reference.
    return [r for i in range(0, len(lines), step) for r in tr.translate_batch(lines[i:i + step], **options)]


def record_calls(tr):
    """Wraps the translator's runtime call to record the sentences of every call (white box)."""
    calls = []
    run = tr._run

    def recording(chunk, start, options):
        calls.append(list(chunk))
        return run(chunk, start, options)

    tr._run = recording
    return calls


def same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.hypotheses == y.hypotheses
        assert all(np.array_equal(i, j) for i, j in zip(x.ids, y.ids))
        assert x.scores == y.scores


def test_source_lengths_count_tokens_as_the_translator(mtlite, int8_model):
    texts = [b"A dog runs.", b"", b"   ", b"bad \xff", b"x" * 300, "Zwei Hunde.".encode()]
    got = int8_model._impl.source_lengths(texts, 256, 256)
    assert got[0] == len(int8_model.encode(texts[0])) and got[5] == len(int8_model.encode(texts[5]))
    assert got[1:5] == [0, 0, 0, 0]  # empty, blank (no tokens), invalid UTF-8, over max_input_bytes
    long_line = " ".join(["word"] * 40).encode()
    n = len(int8_model.encode(long_line))
    assert int8_model._impl.source_lengths([long_line], 16384, n)[0] == n
    assert int8_model._impl.source_lengths([long_line], 16384, n - 1)[0] == 0  # beyond max_source_tokens


@pytest.mark.parametrize("beam", [1, 4])
def test_translate_batch_sorts_and_restores_order(mtlite, int8_model, beam):
    lines = mixed_lines(50)
    tr = mtlite.Translator(int8_model, max_batch=16, max_beam=4)
    want = unsorted(tr, lines, 16, beam_size=beam, return_scores=True)
    calls = record_calls(tr)
    got = tr.translate_batch(lines, beam_size=beam, return_scores=True)
    same(got, want)
    # The calls hold the sentences in order of length (ties by position), 16 at a time.
    lengths = [len(int8_model.encode(l)) for l in lines]
    order = sorted(range(len(lines)), key=lambda i: (lengths[i], i))
    assert [len(c) for c in calls] == [16] * 6 + [4]
    assert [t for c in calls for t in c] == [lines[i].encode() for i in order]


def test_translate_batch_errors_name_the_sentence_as_unsorted(mtlite, int8_model):
    lines = mixed_lines(20)
    tr = mtlite.Translator(int8_model, max_batch=8, max_input_bytes=256)
    bad = lines[:30] + [b"\xff"] + lines[30:] + ["x" * 300]
    with pytest.raises(mtlite.InvalidArgumentError, match=r"^sentence 30: .*UTF-8"):
        tr.translate_batch(bad)
    bad = lines[:5] + ["y" * 300] + lines[5:25] + [b"\xc0\xaf"]
    with pytest.raises(mtlite.OutOfRangeError, match=r"^sentence 5: .*max_input_bytes"):
        tr.translate_batch(bad)


@pytest.mark.parametrize("window", [None, 0, 1, 24, 1000])
def test_translate_iterable_windows(mtlite, int8_model, window):
    lines = mixed_lines(40)
    tr = mtlite.Translator(int8_model, max_batch=16, max_beam=4)
    want = unsorted(tr, lines, 8, beam_size=4)
    consumed = []

    def source():
        for i, l in enumerate(lines):
            consumed.append(i)
            yield l + "\n"

    it = tr.translate_iterable(source(), batch_size=8, sort_window=window, beam_size=4)
    first = next(it)
    # Lazy: the first result comes once one window is read (default 64 x 8 > 80 lines: all of it).
    expect = {None: 80, 0: 8, 1: 8, 24: 24, 1000: 80}[window]
    assert len(consumed) == expect
    same([first] + list(it), want)


def test_translate_iterable_errors_name_the_position_in_the_iterable(mtlite, int8_model):
    lines = mixed_lines(30)
    lines[45] = "bad \udcff"
    tr = mtlite.Translator(int8_model, max_batch=4)
    got = []
    with pytest.raises(mtlite.InvalidArgumentError, match=r"^sentence 45: .*UTF-8"):
        for r in tr.translate_iterable(lines, sort_window=20, beam_size=1):
            got.append(r.text)
    assert got == [r.text for r in unsorted(tr, lines[:40], 4, beam_size=1)]  # windows [0, 20) and [20, 40)
    with pytest.raises(ValueError, match="sort_window"):
        list(tr.translate_iterable(lines, sort_window=-1))


def test_translate_file_sorted_equals_cli(mtlite, cli, int8_model, int8_path, tmp_path):
    lines = mixed_lines(45)
    lines[3] = "x" * 300
    lines[50] = "bad \udcff"
    lines[70] = ""
    src = tmp_path / "in.txt"
    src.write_bytes("".join(l + "\n" for l in lines).encode("utf-8", "surrogatepass"))
    tr = mtlite.Translator(int8_model, max_batch=8, max_beam=2, max_input_bytes=256)
    def translate_cli(window):
        with open(src, "rb") as f:
            p = subprocess.run([cli, "translate", "-m", int8_path, "--split", "none", "--beam", "2", "--batch", "8",
                                "--max-input-bytes",
                                "256", "--sort-window", window, "-q"], stdin=f, capture_output=True, timeout=900)
        assert p.returncode == 1
        return p.stdout.decode("utf-8").split("\n")[:-1], p.stderr.decode("utf-8")

    want, err = translate_cli("0")
    assert "line 4: OUT_OF_RANGE" in err and "line 51: INVALID_ARGUMENT" in err
    assert translate_cli("32") == (want, err)
    out = tmp_path / "out.txt"
    for window in (None, 0, 32):
        stats = tr.translate_file(src, out, sort_window=window, on_error="empty", beam_size=2)
        assert stats["lines"] == 90
        assert [e[0] for e in stats["errors"]] == [4, 51]
        assert out.read_text(encoding="utf-8").split("\n")[:-1] == want
    # on_error="raise": the first failing line in input order, after the lines before it.
    with pytest.raises(mtlite.OutOfRangeError, match=r"in\.txt:4: .*max_input_bytes"):
        tr.translate_file(src, out, sort_window=32, beam_size=2)
    assert out.read_text(encoding="utf-8").split("\n")[:-1] == want[:3]
