"""Profiling from Python (Translator(profiling=True), translate_batch(profile=True),
last_profile()) and Model.info()'s size profile and arena plan, against the CLI's `info --json`."""
import json
import os
import subprocess
from collections import Counter

import pytest

from conftest import dev_lines

SUMMARY = {"wall_ns", "steps", "sentences", "threads", "dropped_events", "entries", "events"}
ENTRY = {"op", "component", "parent", "layer", "calls", "total_ns", "bytes", "macs"}
EVENT = {"op", "layer", "lane", "depth", "step", "start_ns", "end_ns", "bytes", "macs", "m", "n", "k"}


@pytest.mark.parametrize("beam,threads", [(1, 1), (4, 1), (4, 2)])
def test_profile_structure_and_consistency(mtlite, int8_model, beam, threads):
    cfg = int8_model.config
    tr = mtlite.Translator(int8_model, max_batch=4, threads=threads, profiling=True)
    assert tr.limits["profiling"] is True
    lines = dev_lines("multi30k.val")[:4]
    plain = [r.text for r in tr.translate_batch(lines, beam_size=beam)]
    assert tr.last_profile() is None  # not profiled
    got = [r.text for r in tr.translate_batch(lines, beam_size=beam, profile=True)]
    assert got == plain  # profiling changes nothing
    p = tr.last_profile()
    assert set(p) == SUMMARY
    assert p["sentences"] == 4 and p["threads"] == threads and p["dropped_events"] == 0
    assert p["steps"] > 3 and p["wall_ns"] > 0
    entries, events = p["entries"], p["events"]
    assert entries and events
    assert all(set(e) == ENTRY and e["calls"] > 0 for e in entries)
    assert all(set(e) == EVENT for e in events)
    calls = Counter()
    for e in entries:
        calls[e["op"]] += e["calls"]
        assert e["total_ns"] >= 0 and e["bytes"] >= 0 and e["macs"] >= 0
        assert e["layer"] == -1 or 0 <= e["layer"] < max(cfg["encoder_layers"], cfg["decoder_layers"])
    ops = set(calls)
    assert all(e["parent"] in ops for e in entries if e["op"] != "translate")
    assert [e["parent"] for e in entries if e["op"] == "translate"] == [""]
    # Aggregates match the call: one step span per decoder step, a layer span per layer and step.
    assert calls["translate"] == 1 and calls["encoder"] == 1
    assert calls["decoder.step"] == p["steps"]
    assert calls["output_projection"] == p["steps"]
    assert calls["decoder.layer"] == p["steps"] * cfg["decoder_layers"]
    assert calls["encoder.layer"] == cfg["encoder_layers"]
    translate_ns = sum(e["total_ns"] for e in entries if e["op"] == "translate")
    assert 0 < translate_ns <= p["wall_ns"]
    macs = sum(e["macs"] for e in entries if e["op"] == "output_projection")
    assert macs > 0 and macs % (cfg["d_model"] * cfg["target_vocab_size"]) == 0
    # The trace agrees with the aggregates on the calling thread (lane 0); the search's
    # sub-parts (interleaved per row) are aggregated only.
    lane0 = Counter(e["op"] for e in events if e["lane"] == 0)
    assert all(calls[op] == n for op, n in lane0.items())
    untraced = [e for e in entries if e["op"] not in lane0]
    assert untraced and all(e["parent"] == "search" for e in untraced)
    assert all(0 <= e["start_ns"] <= e["end_ns"] <= p["wall_ns"] for e in events)
    assert {e["step"] for e in events if e["op"] == "decoder.step"} == set(range(p["steps"]))
    root = [e for e in events if e["depth"] == 0 and e["lane"] == 0]
    assert [e["op"] for e in root] == ["translate"]
    if threads == 1:
        assert all(e["lane"] == 0 for e in events)


def test_profile_needs_profiling_and_a_full_trace_drops_events(mtlite, int8_model):
    plain = mtlite.Translator(int8_model, max_batch=1)
    with pytest.raises(mtlite.InvalidArgumentError, match="profiling"):
        plain.translate_batch(["A dog runs."], profile=True)
    assert plain.last_profile() is None
    small = mtlite.Translator(int8_model, max_batch=1, profiling=True, profile_events=40)
    small.translate_batch(["A man is riding a bike down the street."], profile=True)
    p = small.last_profile()
    assert len(p["events"]) == 40 and p["dropped_events"] > 0
    assert sum(e["calls"] for e in p["entries"] if e["op"] == "decoder.step") == p["steps"]
    # a failed call leaves no profile
    with pytest.raises(mtlite.InvalidArgumentError):
        small.translate_batch([b"\xff"], profile=True)
    assert small.last_profile() is None


def test_info_size_profile_and_arena_plan_equal_cli(mtlite, cli, int8_model, int8_path):
    info = int8_model.info(max_batch=4, max_source_tokens=128, max_target_tokens=64, max_beam=2, max_input_bytes=4096,
                           max_text_bytes=16384)
    want = json.loads(subprocess.run([cli, "info", int8_path, "--json", "--limits", "4,128,64,2"], check=True,
                                     stdout=subprocess.PIPE).stdout)
    sp = info["size_profile"]
    assert sum(c["bytes"] for c in sp) == info["file_size"] == os.path.getsize(int8_path)
    assert [(c["name"], c["bytes"], "+".join(c["dtypes"])) for c in sp] == \
        [(c["name"], c["bytes"], c["dtype"]) for c in want["components"]]
    assert all(set(c) == {"name", "bytes", "dtypes"} and c["dtypes"] == sorted(c["dtypes"]) for c in sp)
    assert int8_model.size_profile() == sp
    plan = info["arena_plan"]
    assert plan == want["arena_plan"]
    assert info["arena_bytes"] == plan["total_bytes"] == want["arena_bytes"]
    assert set(plan) == {"total_bytes", "unshared_bytes", "phases", "buffers"}
    # unshared: every buffer at its own (aligned) place
    assert plan["unshared_bytes"] >= max(plan["total_bytes"], sum(b["bytes"] for b in plan["buffers"]))
    phase = {p: i for i, p in enumerate(plan["phases"])}
    bufs = plan["buffers"]
    for b in bufs:
        assert set(b) == {"name", "offset", "bytes", "first_phase", "last_phase", "persistent"}
        assert b["offset"] + b["bytes"] <= plan["total_bytes"]
        assert phase[b["first_phase"]] <= phase[b["last_phase"]]
    for i, a in enumerate(bufs):  # buffers live at the same time never share bytes
        for b in bufs[i + 1:]:
            live = phase[a["first_phase"]] <= phase[b["last_phase"]] and phase[b["first_phase"]] <= phase[a["last_phase"]]
            disjoint = a["offset"] + a["bytes"] <= b["offset"] or b["offset"] + b["bytes"] <= a["offset"]
            assert not live or disjoint or not (a["bytes"] and b["bytes"]), (a, b)
    tr = mtlite.Translator(int8_model, max_batch=4, max_source_tokens=128, max_target_tokens=64, max_beam=2,
                           max_input_bytes=4096, max_text_bytes=16384)
    assert tr.arena_bytes == plan["total_bytes"]
    # Profiling reserves its records in the arena.
    prof = int8_model.info(max_batch=4, max_source_tokens=128, max_target_tokens=64, max_beam=2,
                           max_input_bytes=4096, profiling=True, max_text_bytes=16384)
    assert prof["limits"]["profiling"] is True
    assert prof["arena_bytes"] > info["arena_bytes"]
    assert mtlite.Translator(int8_model, max_batch=4, max_source_tokens=128, max_target_tokens=64, max_beam=2,
                             max_input_bytes=4096, profiling=True, max_text_bytes=16384).arena_bytes == prof["arena_bytes"]
    with pytest.raises(mtlite.InvalidArgumentError):
        int8_model.info(max_batch=0)
