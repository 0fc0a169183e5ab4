"""The GIL is released while translating: two Python threads with two translators run in
parallel (the speed-up is measured by bench/python_threads.py, not here), with the same outputs
as serial runs; one translator used from two threads is serialised, not corrupted."""
import threading
import time

from conftest import dev_lines, in_threads


def test_gil_released_during_translation(mtlite, int8_model):
    tr = mtlite.Translator(int8_model, max_batch=16)
    lines = dev_lines("multi30k.val")[:64]
    t0 = time.perf_counter()
    tr.translate_batch(lines, beam_size=4)
    single = time.perf_counter() - t0
    reps = max(1, int(0.8 / max(single, 1e-3)))  # a call of about a second
    inside = threading.Event()
    done = threading.Event()

    def work():
        inside.set()
        for _ in range(reps):
            tr.translate_batch(lines, beam_size=4)
        done.set()

    th = threading.Thread(target=work)
    th.start()
    inside.wait()
    gaps, last, ticks = [], time.perf_counter(), 0
    start = last
    while not done.is_set():  # this thread must keep running Python code meanwhile
        now = time.perf_counter()
        gaps.append(now - last)
        last = now
        ticks += 1
        time.sleep(0.001)
    th.join()
    busy = time.perf_counter() - start
    # With the GIL held for the whole call this loop would stall for ~busy seconds at once.
    assert ticks > 20, f"main thread ran {ticks} times during {busy:.2f}s of translation"
    assert max(gaps) < 0.5 * busy, f"longest stall {max(gaps):.3f}s of {busy:.3f}s"


def test_two_translators_two_threads_same_as_serial(mtlite, int8_model):
    lines = {name: dev_lines(name)[:60] for name in ("multi30k.val", "tatoeba.dev")}
    serial = {}
    for name, ls in lines.items():
        serial[name] = [r.text for r in mtlite.Translator(int8_model, max_batch=8).translate_batch(ls, beam_size=2)]

    def work(name):
        tr = mtlite.Translator(int8_model, max_batch=8)
        return [r.text for r in tr.translate_batch(lines[name], beam_size=2)]

    assert in_threads(work, lines) == serial


def test_one_translator_shared_by_threads_is_serialised(mtlite, int8_model):
    tr = mtlite.Translator(int8_model, max_batch=4)
    lines = dev_lines("tatoeba.dev")[:24]
    want = [r.text for r in tr.translate_batch(lines, beam_size=1)]
    results, errors = [None] * 4, []

    def work(k):
        try:
            results[k] = [r.text for r in tr.translate_batch(lines, beam_size=1)]
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and all(r == want for r in results)
