#!/usr/bin/python3
"""Checks a trace (and optionally the JSON report) written by `mtlite profile`.

  profile_trace_check.py TRACE.json [--report REPORT.json] [--structure-only]

Structure (always): Chrome Trace Event Format, JSON object form; every event has the fields a
viewer needs (complete events "ph": "X" with name, cat, pid, tid, ts, dur >= 0, args; metadata
events "ph": "M" naming the process and threads); every name is a known op; on the calling
thread (tid 1) the spans nest properly and each one's parent is the op the runtime nests it in
(docs/profiling.md), with args.depth equal to its nesting depth; every top-level span is a
"translate" inside one measured call (otherData.calls); worker spans (tid > 1) are
"linear.part" / "attention.part" inside a linear layer / attention span of the calling thread.
Timing (unless --structure-only, e.g. under qemu): the top-level spans cover >= 95 % of the
measured call time, and per parent op the child spans sum to >= 98 % of the parent spans (ops
with >= 1 ms in all; the 2 % of its spans with the largest gaps, at least one, are left out: a
preemption of the thread between two spans is not a gap in the profile). With --report: the report's fields, its op call counts equal the trace's
span counts, its components add up to 100 %.

Exit 0 when everything holds, 1 with one line per problem otherwise. Used by
tests/reference/test_profile_cli.py and scripts/cross_test.sh.
"""
import argparse
import bisect
import json
import sys

# op -> the op it nests in on the calling thread (None: the root); docs/profiling.md.
PARENT = {
    "translate": None,
    "tokenize": "translate",
    "encoder": "translate",
    "encoder.embed": "encoder",
    "encoder.layer": "encoder",
    "encoder.self_attn.qkv": "encoder.layer",
    "encoder.self_attn.attention": "encoder.layer",
    "encoder.self_attn.out": "encoder.layer",
    "encoder.self_attn.norm": "encoder.layer",
    "encoder.ffn.fc1": "encoder.layer",
    "encoder.ffn.fc2": "encoder.layer",
    "encoder.ffn.norm": "encoder.layer",
    "encoder.join": "encoder",
    "cross_kv": "translate",
    "decoder.step": "translate",
    "decoder.embed": "decoder.step",
    "decoder.layer": "decoder.step",
    "decoder.self_attn.qkv": "decoder.layer",
    "decoder.self_attn.attention": "decoder.layer",
    "decoder.self_attn.out": "decoder.layer",
    "decoder.self_attn.norm": "decoder.layer",
    "decoder.cross_attn.q": "decoder.layer",
    "decoder.cross_attn.attention": "decoder.layer",
    "decoder.cross_attn.out": "decoder.layer",
    "decoder.cross_attn.norm": "decoder.layer",
    "decoder.ffn.fc1": "decoder.layer",
    "decoder.ffn.fc2": "decoder.layer",
    "decoder.ffn.norm": "decoder.layer",
    "decoder.join": "decoder.step",
    "output_projection": "decoder.step",
    "search": "translate",
    "finish": "translate",
}
AGGREGATE_ONLY = {"search.log_softmax": "search", "search.candidate_scan": "search"}
# Worker-lane span -> the calling-thread spans it can run inside.
LINEAR_OPS = {"encoder.self_attn.qkv", "encoder.self_attn.out", "encoder.ffn.fc1", "encoder.ffn.fc2",
              "cross_kv", "decoder.self_attn.qkv", "decoder.self_attn.out", "decoder.cross_attn.q",
              "decoder.cross_attn.out", "decoder.ffn.fc1", "decoder.ffn.fc2", "output_projection"}
ATTENTION_OPS = {"encoder.self_attn.attention", "decoder.self_attn.attention", "decoder.cross_attn.attention"}
WORKER = {"linear.part": LINEAR_OPS, "attention.part": ATTENTION_OPS}
# Row-parallel calls: a worker runs every op of its own rows between two joins, so its part of an
# op need not overlap the calling thread's span of that op, only the span around the fork-join.
ROW_PARALLEL = {"encoder": {o for o in LINEAR_OPS | ATTENTION_OPS if o.startswith("encoder.")},
                "decoder.step": {o for o in LINEAR_OPS | ATTENTION_OPS if o.startswith("decoder.")}}
COMPONENTS = ["tokenizer", "encoder", "cross_kv", "decoder.self_attn", "decoder.cross_attn", "decoder.ffn",
              "decoder.other", "output_projection", "search", "finish", "other"]
REPORT_KEYS = {
    "format", "format_version", "mtlite", "model", "config", "input", "summary", "roofline", "components",
    "ops", "layers", "model_size"}
SUMMARY_KEYS = {
    "wall_ms", "translate_ms", "coverage", "latency_unit", "latency_ms", "ttft_ms", "decoder_steps",
    "decoder_step_us", "search_us_per_step", "decoder_step_bytes", "target_tokens", "sentences",
    "tokens_per_s", "sentences_per_s", "model_file_bytes", "arena_bytes", "arena_bytes_without_profiling",
    "peak_rss_kb", "vm_hwm_kb", "trace_events", "dropped_events"}
ROW_KEYS = {"op", "component", "parent", "calls", "total_ms", "mean_us", "percent", "bytes", "macs", "gbs", "gops"}

MIN_COVERAGE = 0.95      # top-level spans / measured call time
MIN_CHILD_SHARE = 0.98   # child spans / parent spans, per parent op
# A parent span shorter than this on average (a decoder layer of a small model at batch 1 with the
# fastest kernels: ~30 us) pays the profiler's fixed cost per child (two clock reads, the record)
# and the loop control between ~11 children, 2-3 % of it; its children must cover
# MIN_CHILD_SHARE_SHORT of it. Unmeasured work of any size shows in the longer parents above it.
SHORT_PARENT_US, MIN_CHILD_SHARE_SHORT = 100.0, 0.95
MIN_PARENT_US = 1000.0   # parents with less time in all are overhead-dominated: not checked
TRIM, TRIM_MIN = 0.02, 10  # per parent op, the spans with the largest gaps left out (see check_nesting)


def ns(x):
    """Microseconds as written ('%d.%03d') -> integer nanoseconds."""
    return int(round(float(x) * 1000.0))


class Checker:
    def __init__(self):
        self.problems = []
        self.stats = {}

    def fail(self, msg):
        self.problems.append(msg)

    def check_trace(self, trace, timing=True):
        if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
            self.fail("not a JSON object with a traceEvents list")
            return
        other = trace.get("otherData")
        if not isinstance(other, dict) or not isinstance(other.get("calls"), list):
            self.fail("otherData.calls missing")
            return
        calls = [(ns(c["ts"]), ns(c["dur"])) for c in other["calls"]]
        spans, meta = [], []
        for i, e in enumerate(trace["traceEvents"]):
            ph = e.get("ph")
            if ph == "M":
                if e.get("name") not in ("process_name", "thread_name", "thread_sort_index") or \
                        not isinstance(e.get("args"), dict) or "pid" not in e:
                    self.fail(f"event {i}: bad metadata event {e}")
                meta.append(e)
                continue
            if ph != "X":
                self.fail(f"event {i}: ph {ph!r}, expected 'X' or 'M'")
                continue
            missing = [k for k in ("name", "cat", "pid", "tid", "ts", "dur", "args") if k not in e]
            if missing:
                self.fail(f"event {i}: missing {missing}")
                continue
            if not isinstance(e["pid"], int) or not isinstance(e["tid"], int) or e["tid"] < 1:
                self.fail(f"event {i}: pid/tid must be integers, tid >= 1")
            if e["dur"] < 0 or e["ts"] < 0:
                self.fail(f"event {i} ({e['name']}): negative ts or dur")
            if e["name"] not in PARENT and e["name"] not in WORKER:
                self.fail(f"event {i}: unknown name {e['name']!r}")
                continue
            a = e["args"]
            if not isinstance(a.get("call"), int) or not isinstance(a.get("depth"), int):
                self.fail(f"event {i} ({e['name']}): args.call / args.depth missing")
                continue
            for k in ("bytes", "macs", "m", "n", "k", "layer", "step"):
                if k in a and not (isinstance(a[k], int) and a[k] >= 0):
                    self.fail(f"event {i} ({e['name']}): args.{k} = {a[k]!r}")
            if a["call"] < 0 or a["call"] >= len(calls):
                self.fail(f"event {i} ({e['name']}): args.call {a['call']} outside otherData.calls")
                continue
            spans.append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e))
        if not any(m.get("name") == "process_name" for m in meta):
            self.fail("no process_name metadata")
        tids = {s[2]["tid"] for s in spans}
        named = {m["tid"] for m in meta if m.get("name") == "thread_name"}
        if not tids <= named:
            self.fail(f"threads without a thread_name: {sorted(tids - named)}")
        main = sorted((s for s in spans if s[2]["tid"] == 1), key=lambda s: (s[0], -s[1]))
        workers = [s for s in spans if s[2]["tid"] != 1]
        self.stats["spans"] = len(main)
        self.stats["worker_spans"] = len(workers)
        self.stats["counts"] = {}
        for s in main:
            self.stats["counts"][s[2]["name"]] = self.stats["counts"].get(s[2]["name"], 0) + 1
        self.check_nesting(main, calls, timing)
        self.check_workers(main, workers)
        if not main:
            self.fail("no spans on the calling thread (tid 1)")

    def check_nesting(self, main, calls, timing):
        stack = []
        roots = [0] * len(calls)
        root_ns = 0
        parent_ns, child_ns, mean_ns = {}, {}, {}
        kids = {}
        for start, end, e in main:
            while stack and start >= stack[-1][1]:
                stack.pop()
            name = e["name"]
            if name in WORKER:
                self.fail(f"{name} on the calling thread")
                continue
            if stack:
                p = stack[-1]
                if end > p[1]:
                    self.fail(f"{name} at {start} ns ends after its parent {p[2]['name']}")
                if p[2]["args"]["call"] != e["args"]["call"]:
                    self.fail(f"{name} nests in a span of another call")
                if PARENT[name] != p[2]["name"]:
                    self.fail(f"{name} nests in {p[2]['name']}, expected {PARENT[name]}")
                kids[id(p[2])] = kids.get(id(p[2]), 0) + (end - start)
            else:
                if name != "translate":
                    self.fail(f"top-level span {name!r}, expected 'translate'")
                c = e["args"]["call"]
                roots[c] += 1
                cs, cd = calls[c]
                if start < cs or end > cs + cd:
                    self.fail(f"translate of call {c} [{start}, {end}] ns outside the call [{cs}, {cs + cd}]")
                root_ns += end - start
            if e["args"]["depth"] != len(stack):
                self.fail(f"{name}: args.depth {e['args']['depth']} but nested {len(stack)} deep")
            stack.append((start, end, e))
        for c, n in enumerate(roots):
            if n != 1:
                self.fail(f"call {c} has {n} top-level spans, expected one 'translate'")
        # Per parent op: (parent, children) of every span that has children. The spans with the
        # largest gaps, up to TRIM of them (at least one when there are >= TRIM_MIN), are left out:
        # one preemption of the thread between two spans (a busy machine) lands in a few spans,
        # a structural gap (unmeasured work) is in every one of them.
        pairs = {}
        for start, end, e in main:
            if id(e) in kids:
                pairs.setdefault(e["name"], []).append((end - start, kids[id(e)]))
        for op, v in pairs.items():
            v.sort(key=lambda pc: pc[0] - pc[1])
            drop = max(1, int(TRIM * len(v))) if len(v) >= TRIM_MIN else 0
            kept = v[:len(v) - drop]
            parent_ns[op] = sum(p for p, _ in kept)
            child_ns[op] = sum(c for _, c in kept)
            mean_ns[op] = parent_ns[op] / len(kept) if kept else 0.0
        wall = sum(d for _, d in calls)
        self.stats["coverage"] = root_ns / wall if wall else 0.0
        self.stats["child_share"] = {k: child_ns[k] / v for k, v in parent_ns.items() if v}
        if not timing:
            return
        if self.stats["coverage"] < MIN_COVERAGE:
            self.fail(f"top-level spans cover {100 * self.stats['coverage']:.2f} % of the measured call time "
                      f"(< {100 * MIN_COVERAGE:.0f} %)")
        for op, p in parent_ns.items():
            need = MIN_CHILD_SHARE if mean_ns[op] >= SHORT_PARENT_US * 1000 else MIN_CHILD_SHARE_SHORT
            if p >= MIN_PARENT_US * 1000 and child_ns[op] < need * p:
                self.fail(f"children of {op} sum to {100 * child_ns[op] / p:.2f} % of it "
                          f"(< {100 * need:.0f} %; mean span {mean_ns[op] / 1000:.1f} us)")

    def check_workers(self, main, workers):
        by_call = {}
        for start, end, e in main:
            by_call.setdefault(e["args"]["call"], []).append((start, end, e["name"], e["args"].get("layer", -1)))
        for v in by_call.values():
            v.sort()
        outer = {c: [(s0, s1, op) for s0, s1, op, _ in v if op in ROW_PARALLEL] for c, v in by_call.items()}
        for start, end, e in workers:
            name = e["name"]
            if name not in WORKER:
                self.fail(f"{name} on worker thread {e['tid']}")
                continue
            if e["args"]["depth"] != 0:
                self.fail(f"{name} on tid {e['tid']}: depth {e['args']['depth']}, expected 0")
            cand = by_call.get(e["args"]["call"], [])
            i = bisect.bisect_right(cand, (start, float("inf")))
            ok = False
            for s0, s1, op, layer in reversed(cand[max(0, i - 200):i]):
                if s0 <= start and end <= s1 and op in WORKER[name]:
                    ok = name == "linear.part" or layer == e["args"].get("layer", -1)
                    break
            if not ok:  # a row-parallel part: inside the calling thread's encoder / decoder.step
                box = outer.get(e["args"]["call"], [])
                j = bisect.bisect_right(box, (start, float("inf")))
                ok = j > 0 and end <= box[j - 1][1] and bool(ROW_PARALLEL[box[j - 1][2]] & WORKER[name])
            if not ok:
                self.fail(f"{name} on tid {e['tid']} at {start} ns is not inside a matching span of the calling thread")

    def check_report(self, rep, timing=True):
        missing = REPORT_KEYS - set(rep)
        if missing:
            self.fail(f"report: missing {sorted(missing)}")
            return
        if rep["format"] != "mtlite-profile" or rep["format_version"] != 1:
            self.fail("report: format / format_version")
        missing = SUMMARY_KEYS - set(rep["summary"])
        if missing:
            self.fail(f"report: summary misses {sorted(missing)}")
            return
        s = rep["summary"]
        for k in ("p50", "p90", "p99", "mean", "max", "n"):
            if k not in s["latency_ms"] or k not in s["ttft_ms"]:
                self.fail(f"report: latency_ms / ttft_ms misses {k}")
        if not (s["latency_ms"]["p50"] <= s["latency_ms"]["p90"] <= s["latency_ms"]["p99"] <= s["latency_ms"]["max"]):
            self.fail("report: latency percentiles out of order")
        if s["ttft_ms"]["n"] and s["ttft_ms"]["p50"] > s["latency_ms"]["max"]:
            self.fail("report: time to first token above the longest call")
        if s["arena_bytes"] <= s["arena_bytes_without_profiling"] or s["model_file_bytes"] <= 0:
            self.fail("report: arena / model bytes")
        names = [c["name"] for c in rep["components"]]
        if names != COMPONENTS:
            self.fail(f"report: components {names}")
        total = sum(c["percent"] for c in rep["components"])
        if abs(total - 100.0) > 0.05:
            self.fail(f"report: components sum to {total:.4f} %")
        for r in rep["ops"] + rep["layers"]:
            if ROW_KEYS - set(r):
                self.fail(f"report: row {r.get('op')} misses {sorted(ROW_KEYS - set(r))}")
                return
            if r["op"] not in PARENT and r["op"] not in AGGREGATE_ONLY:
                self.fail(f"report: unknown op {r['op']!r}")
            elif (PARENT.get(r["op"]) or AGGREGATE_ONLY.get(r["op"]) or "") != r["parent"]:
                self.fail(f"report: {r['op']} has parent {r['parent']!r}")
        ops = {r["op"]: r for r in rep["ops"]}
        if "translate" not in ops or abs(ops["translate"]["percent"] - 100.0) > 1e-6:
            self.fail("report: translate must be 100 % of the translation time")
        layer_calls = {}
        for r in rep["layers"]:
            layer_calls[r["op"]] = layer_calls.get(r["op"], 0) + r["calls"]
        for op, c in layer_calls.items():
            if ops.get(op, {}).get("calls") != c:
                self.fail(f"report: {op}: per-layer calls {c} != op calls {ops.get(op, {}).get('calls')}")
        if ops.get("decoder.step", {}).get("calls", 0) != s["decoder_steps"]:
            self.fail("report: decoder_steps != decoder.step calls")
        if timing and s["coverage"] < MIN_COVERAGE:
            self.fail(f"report: coverage {s['coverage']}")
        counts = self.stats.get("counts")
        if counts is not None and s["dropped_events"] == 0:
            for op, r in ops.items():
                if op in PARENT and counts.get(op, 0) != r["calls"]:
                    self.fail(f"report: {op} has {r['calls']} calls, the trace {counts.get(op, 0)} spans")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--report")
    ap.add_argument("--structure-only", action="store_true", help="no timing checks (emulators)")
    a = ap.parse_args()
    c = Checker()
    with open(a.trace, encoding="utf-8") as f:
        c.check_trace(json.load(f), timing=not a.structure_only)
    if a.report:
        with open(a.report, encoding="utf-8") as f:
            c.check_report(json.load(f), timing=not a.structure_only)
    for p in c.problems[:50]:
        print("profile_trace_check: " + p, file=sys.stderr)
    if len(c.problems) > 50:
        print(f"profile_trace_check: ... {len(c.problems) - 50} more problems", file=sys.stderr)
    share = c.stats.get("child_share", {})
    print(f"profile_trace_check: {c.stats.get('spans', 0)} spans, {c.stats.get('worker_spans', 0)} worker spans, "
          f"coverage {100 * c.stats.get('coverage', 0):.2f} %, child share min "
          f"{100 * min(share.values()) if share else 0:.2f} %: {'FAIL' if c.problems else 'ok'}")
    return 1 if c.problems else 0


if __name__ == "__main__":
    sys.exit(main())
