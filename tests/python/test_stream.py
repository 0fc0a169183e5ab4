"""Translator.translate_stream: the events of one translation, delivered while it runs; the final
event equals translate_batch's result; a generator closed early leaves no thread behind; and
`mtlite translate --stream` on a terminal (the pipe format is tested by cli_stream_test)."""
import gc
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from conftest import dev_lines, in_threads


def os_threads():
    """Threads of this process as the kernel sees them (C++ threads included)."""
    return len(os.listdir("/proc/self/task"))


def settled_threads():
    """The thread count once threads of earlier tests have left (/proc lags join() a little)."""
    last, deadline = os_threads(), time.monotonic() + 5.0
    while time.monotonic() < deadline:
        time.sleep(0.05)
        now = os_threads()
        if now == last:
            break
        last = now
    return last


def wait_for_threads(n, timeout=10.0):
    """Waits until at most n threads are left; returns the count."""
    deadline = time.monotonic() + timeout
    while os_threads() > n and time.monotonic() < deadline:
        time.sleep(0.01)
    return os_threads()


@pytest.mark.parametrize("beam", [1, 4])
def test_final_event_equals_translate_batch(mtlite, int8_model, beam):
    tr = mtlite.Translator(int8_model, max_batch=8, max_beam=4)
    lines = dev_lines("multi30k.val")[:12] + dev_lines("tatoeba.dev")[:12] + [""]
    want = tr.translate_batch(lines, beam_size=beam)
    for line, w in zip(lines, want):
        events = list(tr.translate_stream(line, beam_size=beam))
        assert events, line
        assert all(isinstance(e, mtlite.StreamEvent) for e in events)
        assert [e.final for e in events] == [False] * (len(events) - 1) + [True], line
        last = events[-1]
        assert last.text == w.text, line
        assert last.ids.dtype == np.int32 and np.array_equal(last.ids, w.ids[0]), line
        times = [e.time for e in events]
        assert times == sorted(times) and times[0] >= 0
        if not line:
            assert len(events) == 1 and last.text == ""
        elif beam == 1:  # one event per generated token (</s> excluded), each extending the last
            assert len(events) == len(w.ids[0]) + 1, line
            for i, e in enumerate(events[:-1]):
                assert np.array_equal(e.ids, w.ids[0][:i + 1])
                assert e.text == int8_model.decode(e.ids)
        else:  # beam: only changes of the best running hypothesis are reported
            for a, b in zip(events[:-2], events[1:-1]):
                assert not np.array_equal(a.ids, b.ids)


def test_options_are_those_of_translate_batch(mtlite, int8_model):
    tr = mtlite.Translator(int8_model, max_batch=4, max_beam=3)
    for line in dev_lines("tatoeba.dev")[:10]:
        opts = dict(beam_size=3, max_length=8, length_penalty=0.6)
        assert list(tr.translate_stream(line, **opts))[-1].text == tr.translate(line, **opts)
        assert list(tr.translate_stream(line.encode("utf-8"), beam_size=1))[-1].text == tr.translate(line, beam_size=1)
    with pytest.raises(TypeError):
        tr.translate_stream(line, n_best=2)  # one hypothesis is streamed


def test_events_arrive_before_the_translation_ends(mtlite, int8_model):
    # A long sentence and beam 4: many decoder steps (~40 tokens) after a short encoder. The
    # consumer's clock starts before the runtime call does, so "received (consumer clock) <
    # final event (runtime clock)" means the first event was in Python's hands while the runtime
    # was still translating. Scheduling on a busy machine may delay this thread: a few
    # attempts, one must show it.
    tr = mtlite.Translator(int8_model, max_batch=1)
    text = max(dev_lines("multi30k.val")[:200], key=len)
    seen = []
    for _ in range(5):
        gen = tr.translate_stream(text, beam_size=4)
        t0 = time.perf_counter()
        first = next(gen)
        received = time.perf_counter() - t0
        rest = list(gen)
        assert rest and rest[-1].final and not first.final
        seen.append((received, rest[-1].time))
        if received < rest[-1].time:
            break
    assert any(r < end for r, end in seen), f"first event received / call end (s): {seen}"
    assert len(rest) > 10


def test_closing_early_is_clean(mtlite, int8_model):
    tr = mtlite.Translator(int8_model, max_batch=1)
    text = max(dev_lines("multi30k.val")[:200], key=len)  # ~40 tokens, beam 4: the call outlives next()
    want = tr.translate(text, beam_size=4)
    base = settled_threads()
    gen = tr.translate_stream(text, beam_size=4)
    assert os_threads() == base  # nothing runs before the first next()
    first = next(gen)
    assert not first.final
    assert os_threads() == base + 1  # the worker, still translating
    gen.close()  # joins the worker: gone at once, not merely later
    assert os_threads() <= base
    with pytest.raises(StopIteration):
        next(gen)
    # break out of a for loop, and a generator dropped without close(): garbage collection
    # closes it; a generator never started never had a thread
    for _ in tr.translate_stream(text, beam_size=4):
        break
    assert os_threads() <= base
    gen = tr.translate_stream(text, beam_size=1)
    next(gen)
    del gen
    gc.collect()
    assert os_threads() <= base
    never_started = tr.translate_stream(text)
    del never_started
    # the translator is free again (its mutex was released): no deadlock, same result
    assert tr.translate(text, beam_size=4) == want
    assert list(tr.translate_stream(text, beam_size=4))[-1].text == want


def test_same_translator_while_a_stream_is_open(mtlite, int8_model):
    # The consumer holds a started, unfinished stream and translates with the same Translator:
    # that call waits for the streamed call, then runs (no deadlock).
    tr = mtlite.Translator(int8_model, max_batch=2)
    lines = dev_lines("tatoeba.dev")[:2]
    want = [r.text for r in tr.translate_batch(lines, beam_size=1)]
    gen = tr.translate_stream(lines[0], beam_size=1)
    next(gen)
    result = []
    th = threading.Thread(target=lambda: result.append([r.text for r in tr.translate_batch(lines, beam_size=1)]))
    th.start()
    th.join(timeout=60)
    assert not th.is_alive(), "translate_batch did not finish while a stream was open"
    assert result == [want]
    assert list(gen)[-1].text == want[0]


DROP_STREAMS = """
import faulthandler, sys, threading
import mtlite, mtlite._mtlite
faulthandler.dump_traceback_later(float(sys.argv[3]), exit=True)  # a deadlock: stacks, then exit 1
tr = mtlite.Translator(sys.argv[1], max_batch=4, max_beam=4)
text = sys.argv[2]
stop = threading.Event()

def translate():
    while not stop.is_set():
        tr.translate_batch([text] * 4, beam_size=4)

th = threading.Thread(target=translate)
th.start()
options = mtlite._mtlite._Options()
options.beam_size = 4
for _ in range(30):
    stream = tr._impl.stream(text, options)
    stream.start()  # the worker waits for the translator while the other thread translates
    del stream      # destroyed without close(): its destructor waits for the worker
stop.set()
th.join()
print("done")
"""


def test_dropping_a_stream_while_another_thread_translates(int8_path):
    # A started stream object destroyed without close(), while another thread translates with the
    # same Translator, must not deadlock: its worker waits for that thread's call, and that call
    # must not need the GIL the destructor holds before it lets the translator go. A subprocess
    # (and a watchdog in it), so that a deadlock fails the test instead of hanging it.
    text = max(dev_lines("multi30k.val")[:50], key=len)
    p = subprocess.run([sys.executable, "-c", DROP_STREAMS, int8_path, text, "120"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=300)
    assert p.returncode == 0 and p.stdout.decode().split() == ["done"], p.stderr.decode()[-4000:]


def test_two_streams_in_two_threads(mtlite, int8_model):
    lines = {name: dev_lines(name)[:15] for name in ("multi30k.val", "tatoeba.dev")}
    serial = {n: [r.text for r in mtlite.Translator(int8_model, max_batch=1).translate_batch(ls, beam_size=2)]
              for n, ls in lines.items()}

    def work(name):
        tr = mtlite.Translator(int8_model, max_batch=1)
        return [list(tr.translate_stream(line, beam_size=2))[-1].text for line in lines[name]]

    assert in_threads(work, lines) == serial


def test_errors(mtlite, int8_model):
    tr = mtlite.Translator(int8_model, max_batch=1, max_source_tokens=16, max_input_bytes=4096)
    base = settled_threads()
    with pytest.raises(TypeError):
        tr.translate_stream(["a list"])
    gen = tr.translate_stream(b"caf\xc3")  # raised by next(), not by translate_stream()
    with pytest.raises(mtlite.InvalidArgumentError, match="UTF-8"):
        next(gen)
    with pytest.raises(StopIteration):
        next(gen)
    with pytest.raises(mtlite.OutOfRangeError, match="max_source_tokens"):
        list(tr.translate_stream("word " * 40))
    with pytest.raises(mtlite.InvalidArgumentError):
        list(tr.translate_stream("A dog.", beam_size=9))  # beyond max_beam
    assert wait_for_threads(base) <= base
    assert list(tr.translate_stream("A dog."))[-1].text == tr.translate("A dog.")


def test_stream_profile(mtlite, int8_model):
    tr = mtlite.Translator(int8_model, max_batch=1, profiling=True)
    events = list(tr.translate_stream("Two dogs play in the snow.", beam_size=1, profile=True))
    p = tr.last_profile()
    assert p is not None and p["sentences"] == 1
    assert p["steps"] == len(events[-1].ids) + 1  # one step per token, plus the step that chose </s>


@pytest.mark.parametrize("columns", [0, 24])  # 0: the terminal reports no size (80 assumed)
def test_cli_stream_on_a_terminal(cli, int8_path, columns):
    """On a TTY the partial line is redrawn ("\\r" + erase line), cut from the left to fit the
    terminal's width, and the final line stays, whole."""
    import fcntl
    import pty
    import struct
    import subprocess
    import termios
    text = "A man in a blue shirt is standing on a ladder cleaning windows."
    want = subprocess.run([cli, "translate", "-m", int8_path, "--split", "none", text], stdout=subprocess.PIPE, check=True).stdout
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    try:
        p = subprocess.Popen([cli, "translate", "-m", int8_path, "--stream", text], stdout=slave,
                             stderr=subprocess.PIPE)
        os.close(slave)
        raw = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            raw += chunk
        assert p.wait(timeout=60) == 0, p.stderr.read()
    finally:
        os.close(master)
    raw = raw.replace(b"\r\n", b"\n")  # the terminal's output processing (onlcr)
    redraws = raw.split(b"\r\x1b[K")
    assert len(redraws) >= 3, raw  # partial lines, then the erase before the final line
    assert redraws[0] == b"" and redraws[-1] == want, raw
    assert b"\n" not in b"".join(redraws[:-1])  # partial text never ends a line
    partial = [r.decode("utf-8") for r in redraws[1:-1]]
    final = want.decode("utf-8").rstrip("\n")
    width = (columns or 80) - 1
    assert all(len(x) <= width for x in partial), partial
    if columns:
        assert len(final) > width and partial[-1] == "\u2026" + final[-(width - 1):]
    else:
        assert partial[-1] == final  # greedy: the last partial is the whole translation
    for x in partial:  # the end of a prefix of the translation
        assert final.startswith(x) or (x.startswith("\u2026") and x[1:] in final), x
