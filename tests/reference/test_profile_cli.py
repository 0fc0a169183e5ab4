#!/usr/bin/python3
"""`mtlite profile` and `mtlite attention` end to end on the demo model (run by ctest as
py_test_profile_cli with Debian's python3; stdlib unittest; matplotlib for the plot scripts).

* the trace parses with json and passes profile_trace_check (event fields, names, nesting and
  parents, worker lanes, top-level spans >= 95 % of the measured call time, child spans >= 98 %
  of their parents); the checker itself rejects broken traces;
* the JSON report agrees with the trace (calls per op) and with itself;
* the heatmap's numbers: exact zeros on the padding columns of a padded batch, rows summing to
  1 over the sentence's own source tokens, one SVG cell per number;
* the plot scripts write PNGs; bad arguments and bad input are clear errors (exit 2 / 1).
"""
import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("MTLITE_SOURCE_DIR") or os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import profile_trace_check as ptc  # noqa: E402

DEV = os.path.join(ROOT, "tests", "data", "dev", "multi30k.val.en")
TIMEOUT = 600
# The timing checks tolerate a busy machine (see profile_trace_check.check_nesting); a run that
# still misses them is repeated, up to this many runs: a structural gap fails every run.
TIMING_ATTEMPTS = 3


def run(args, expect=0, stdin=None):
    p = subprocess.run(args, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
    out, err = p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    if p.returncode != expect:
        raise AssertionError(f"`{' '.join(args)}` exited {p.returncode}, expected {expect}:\n{err[-3000:]}")
    return out, err


class ProfileCliTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        for name in ("MTLITE_BIN", "MTLITE_TEST_MODEL_DIR"):
            if not os.environ.get(name):
                raise AssertionError(f"{name} is not set (run through ctest)")
        cls.bin = os.environ["MTLITE_BIN"]
        cls.model = os.path.join(os.environ["MTLITE_TEST_MODEL_DIR"], "demo.int8.mtlite")
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name
        with open(DEV, encoding="utf-8") as f:
            lines = [next(f) for _ in range(8)]
        cls.input = os.path.join(cls.dir, "in.en")
        with open(cls.input, "w", encoding="utf-8") as f:
            f.write(lines[0] + "   \n" + "".join(lines[1:]))  # a blank line: skipped

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def profile(self, tag, *extra):
        trace = os.path.join(self.dir, tag + ".trace.json")
        report = os.path.join(self.dir, tag + ".report.json")
        out, err = run([self.bin, "profile", "-m", self.model, "--input", self.input, "--trace", trace,
                        "--json", report] + list(extra))
        with open(trace, encoding="utf-8") as f:
            t = json.load(f)
        with open(report, encoding="utf-8") as f:
            r = json.load(f)
        return out, t, r

    def checked(self, tag, *extra):
        """Profiles until the timing checks hold (at most TIMING_ATTEMPTS runs); structure always."""
        problems = []
        for attempt in range(TIMING_ATTEMPTS):
            out, t, r = self.profile(f"{tag}.{attempt}", *extra)
            structure = ptc.Checker()
            structure.check_trace(t, timing=False)
            structure.check_report(r, timing=False)
            self.assertEqual(structure.problems, [], f"{tag}: structure")
            timing = ptc.Checker()
            timing.check_trace(t, timing=True)
            timing.check_report(r, timing=True)
            if not timing.problems:
                return out, t, r, timing
            problems.append(timing.problems)
            print(f"{tag}: attempt {attempt + 1}: {timing.problems}", file=sys.stderr)
        self.fail(f"{tag}: timing checks failed in {TIMING_ATTEMPTS} runs: {problems}")

    def test_greedy_single_thread(self):
        out, t, r, c = self.checked("greedy", "--repeat", "2", "--roofline", "--roofline-mib", "16")
        # The table: header, every layer, the summary lines.
        for text in ("op (summed over layers)", "encoder.layer 5", "decoder.layer 1", "time per component",
                     "latency per sentence: p50", "time to first token", "decoder step:", "target tokens/s",
                     "peak RSS", "coverage: top-level spans", "roofline (this host, 1 thread)", "pass 1: warm-up"):
            self.assertIn(text, out)
        s = r["summary"]
        self.assertEqual(r["input"]["sentences"], 8)
        self.assertEqual(r["input"]["blank_lines_skipped"], 1)
        self.assertEqual(r["input"]["calls"], 8)          # --repeat 2: the warm-up pass is excluded
        self.assertEqual(r["config"]["warmup_passes"], 1)
        self.assertEqual(s["latency_unit"], "sentence")
        self.assertEqual(s["latency_ms"]["n"], 8)
        self.assertEqual(s["ttft_ms"]["n"], 8)
        self.assertLess(s["ttft_ms"]["p50"], s["latency_ms"]["max"])
        self.assertGreater(s["target_tokens"], s["sentences"])
        self.assertGreater(s["tokens_per_s"], 0)
        self.assertGreater(s["peak_rss_kb"], 0)
        self.assertEqual(s["dropped_events"], 0)
        self.assertEqual(s["trace_events"], sum(1 for e in t["traceEvents"] if e["ph"] == "X"))
        self.assertGreater(r["roofline"]["memory_read_gbs"], 0)
        self.assertGreater(r["roofline"]["gemm_gops"], 0)
        self.assertEqual(len(t["otherData"]["calls"]), 8)
        self.assertEqual(c.stats["worker_spans"], 0)
        ops = {o["op"]: o for o in r["ops"]}
        # Weight bytes: the output projection reads the whole d_model x vocab int8 matrix per step.
        cfg = r["model"]
        self.assertGreaterEqual(ops["output_projection"]["bytes"],
                                ops["output_projection"]["calls"] * cfg["d_model"] * cfg["target_vocab"])
        self.assertEqual(ops["output_projection"]["macs"] % (cfg["d_model"] * cfg["target_vocab"]), 0)
        self.assertEqual(ops["decoder.step"]["calls"], s["decoder_steps"])
        self.assertEqual(ops["encoder.layer"]["calls"], 8 * cfg["encoder_layers"])
        # Parents carry the bytes of everything nested in them.
        self.assertEqual(ops["decoder.step"]["bytes"],
                         ops["decoder.layer"]["bytes"] + ops["output_projection"]["bytes"])
        self.assertEqual(len([x for x in r["layers"] if x["op"] == "decoder.layer"]), cfg["decoder_layers"])
        # Args of a linear layer's span: shape and work.
        e = next(e for e in t["traceEvents"] if e.get("name") == "decoder.ffn.fc1")
        self.assertEqual((e["args"]["n"], e["args"]["k"]), (cfg["ffn"], cfg["d_model"]))
        self.assertEqual(e["args"]["macs"], e["args"]["m"] * e["args"]["n"] * e["args"]["k"])
        self.assertGreater(e["args"]["bytes"], 0)

    def test_beam_batch_threads(self):
        out, t, r, c = self.checked("beam", "--beam", "4", "--batch", "3", "--threads", "2", "--quiet")
        self.assertEqual(out, "")  # --quiet
        self.assertEqual(r["summary"]["latency_unit"], "call")
        self.assertEqual(r["input"]["calls"], 3)          # 8 sentences in calls of 3
        self.assertEqual([c["sentences"] for c in t["otherData"]["calls"]], [3, 3, 2])
        self.assertGreater(c.stats["worker_spans"], 0)     # lane 1: the second thread's parts
        names = {e["args"]["name"] for e in t["traceEvents"] if e.get("name") == "thread_name"}
        self.assertEqual(names, {"caller (lane 0)", "worker 1"})

    def test_row_parallel(self):
        # 8 sentences x beam 4 on 2 threads: the encoder call and every decoder step run row-parallel
        # (each thread all layers of its rows); the worker's parts lie inside the calling thread's
        # encoder / decoder.step spans, and lane 0 still records each layer once per call / step.
        out, t, r, c = self.checked("rows", "--beam", "4", "--batch", "8", "--threads", "2", "--quiet")
        self.assertGreater(c.stats["worker_spans"], 0)
        cfg = r["model"]
        ops = {o["op"]: o for o in r["ops"]}
        self.assertEqual(r["input"]["calls"], 1)
        self.assertEqual(r["summary"]["dropped_events"], 0)
        # lane 0's waits before and after its rows in each row-parallel call (the steps while
        # enough rows are left: finished sentences leave the batch)
        self.assertGreater(ops["decoder.join"]["calls"], 0)
        self.assertEqual(ops["decoder.join"]["calls"] % 2, 0)
        self.assertLess(ops["decoder.join"]["calls"], 2 * r["summary"]["decoder_steps"])
        self.assertEqual(ops["encoder.join"]["calls"], 2)
        self.assertEqual(ops["decoder.step"]["calls"], r["summary"]["decoder_steps"])
        self.assertEqual(ops["decoder.layer"]["calls"], r["summary"]["decoder_steps"] * cfg["decoder_layers"])
        self.assertEqual(ops["encoder.layer"]["calls"], cfg["encoder_layers"])
        self.assertEqual(ops["decoder.step"]["bytes"],
                         ops["decoder.layer"]["bytes"] + ops["output_projection"]["bytes"])

    def test_json_to_stdout(self):
        out, _ = run([self.bin, "profile", "-m", self.model, "--json", "-", "A dog runs."])
        rep = json.loads(out)
        self.assertEqual(rep["input"]["sentences"], 1)
        self.assertEqual(rep["roofline"], None)

    def test_shortlist(self):
        # --shortlist profiles the restricted output projection: fewer weight bytes per step than the
        # whole matrix; a model without the section is a clear error.
        sl = os.path.join(self.dir, "sl.mtlite")
        data = os.path.join(ROOT, "tests", "data", "shortlist")
        run([self.bin, "shortlist", "-m", self.model, "--source", os.path.join(data, "train.en"),
             "--target", os.path.join(data, "train.de"), "-o", sl])
        reports = {}
        for flag in ([], ["--shortlist"]):
            out, _ = run([self.bin, "profile", "-m", sl, "--input", self.input, "--json", "-"] + flag)
            r = json.loads(out)
            self.assertEqual(r["config"]["shortlist"], bool(flag))
            reports[bool(flag)] = r
        cfg = reports[True]["model"]
        full = {o["op"]: o for o in reports[False]["ops"]}["output_projection"]
        short = {o["op"]: o for o in reports[True]["ops"]}["output_projection"]
        self.assertGreaterEqual(full["bytes"], full["calls"] * cfg["d_model"] * cfg["target_vocab"])
        self.assertLess(short["bytes"], short["calls"] * cfg["d_model"] * cfg["target_vocab"] // 2)
        self.assertGreater(short["bytes"], 0)
        out, _ = run([self.bin, "profile", "-m", sl, "--shortlist", "A dog runs."])
        self.assertIn(", shortlist;", out)
        _, err = run([self.bin, "profile", "-m", self.model, "--shortlist", "A dog runs."], 1)
        self.assertIn("has no shortlist section", err)

    def test_checker_rejects_broken_traces(self):
        _, t, r = self.profile("broken")
        good = ptc.Checker()
        good.check_trace(t, timing=False)
        self.assertEqual(good.problems, [])
        spans = [e for e in t["traceEvents"] if e["ph"] == "X" and e["tid"] == 1]

        def problems(mutate, timing=False):
            tt = copy.deepcopy(t)
            mutate(tt, [e for e in tt["traceEvents"] if e["ph"] == "X" and e["tid"] == 1])
            c = ptc.Checker()
            c.check_trace(tt, timing=timing)
            return " | ".join(c.problems)

        layer = next(i for i, e in enumerate(spans) if e["name"] == "decoder.layer")
        self.assertIn("ends after its parent", problems(lambda tt, s: s[layer + 1].update(dur=s[layer]["dur"] * 2)))
        self.assertIn("nests in decoder.layer, expected",
                      problems(lambda tt, s: s[layer + 1].update(name="decoder.embed")))
        self.assertIn("unknown name", problems(lambda tt, s: s[3].update(name="encoder.bogus")))
        self.assertIn("missing", problems(lambda tt, s: s[3].pop("ts")))
        self.assertIn("args.depth", problems(lambda tt, s: s[3]["args"].update(depth=7)))
        self.assertIn("expected one 'translate'", problems(lambda tt, s: tt["traceEvents"].remove(s[0])))

        # A structural gap: the children of every decoder.layer span 10 % shorter.
        def shrink(tt, s):
            for e in s:
                if ptc.PARENT.get(e["name"]) == "decoder.layer":
                    e["dur"] = round(e["dur"] * 0.9, 3)
        self.assertEqual(problems(shrink), "")
        self.assertIn("children of decoder.layer sum to", problems(shrink, timing=True))

        # Top-level spans that cover only half of each call.
        def halve(tt, s):
            for c in tt["otherData"]["calls"]:
                c["dur"] = c["dur"] * 2
        self.assertIn("top-level spans cover", problems(halve, timing=True))

        rr = copy.deepcopy(r)
        rr["components"][0]["percent"] += 1.0
        c = ptc.Checker()
        c.check_report(rr, timing=False)
        self.assertIn("components sum to", " | ".join(c.problems))

    def test_attention_heatmap_padding(self):
        short, long_ = "A dog runs.", "Two young children are playing in the snow near a big red house."
        svg = os.path.join(self.dir, "map.svg")
        js = os.path.join(self.dir, "map.json")
        run([self.bin, "attention", "-m", self.model, short, long_, "--sentence", "0", "-o", svg, "--json", js])
        with open(js, encoding="utf-8") as f:
            m = json.load(f)
        n, width = m["source_length"], m["source_tokens"]
        self.assertEqual(m["source_pieces"][-1], "</s>")
        self.assertEqual(len(m["source_pieces"]), n)
        self.assertGreater(width, n, "the longer sentence must pad the short one")
        self.assertEqual(m["target_pieces"][-1], "</s>")
        self.assertEqual([x["layer"] for x in m["layers"]], [0, 1])
        for layer in m["layers"]:
            w = layer["weights"]
            self.assertEqual(len(w), len(m["target_pieces"]))
            for row in w:
                self.assertEqual(len(row), width)
                self.assertTrue(all(v == 0.0 for v in row[n:]), f"padding not exactly 0: {row[n:]}")
                self.assertTrue(all(v >= 0.0 for v in row[:n]))
                self.assertAlmostEqual(sum(row[:n]), 1.0, delta=1e-5)
        # The two layers attend differently (the numbers are per layer, not copies).
        self.assertNotEqual(m["layers"][0]["weights"], m["layers"][1]["weights"])
        # The SVG: one cell per number (with its value as a tooltip), padding hatched.
        root = ET.parse(svg).getroot()
        ns = "{http://www.w3.org/2000/svg}"
        cells = [r for r in root.iter(ns + "rect") if r.find(ns + "title") is not None]
        self.assertEqual(len(cells), 2 * len(m["target_pieces"]) * width)
        hatched = [r for r in cells if r.get("fill") == "url(#pad)"]
        self.assertEqual(len(hatched), 2 * len(m["target_pieces"]) * (width - n))
        labels = [x.text for x in root.iter(ns + "text")]
        self.assertIn(m["source_pieces"][1], labels)
        self.assertIn("<pad>", labels)
        # The longer sentence itself has no padding; one layer only.
        run([self.bin, "attention", "-m", self.model, short, long_, "--sentence", "1", "--layer", "1", "-o", js])
        with open(js, encoding="utf-8") as f:
            m2 = json.load(f)
        self.assertEqual(m2["source_length"], m2["source_tokens"])
        self.assertEqual([x["layer"] for x in m2["layers"]], [1])
        for row in m2["layers"][0]["weights"]:
            self.assertAlmostEqual(sum(row), 1.0, delta=1e-5)

    def test_plot_scripts(self):
        _, _, r1 = self.profile("plot1")
        _, _, r2 = self.profile("plot2", "--beam", "2")
        reports = [os.path.join(self.dir, f"plot{i}.report.json") for i in (1, 2)]
        png = os.path.join(self.dir, "components.png")
        out, _ = run(["/usr/bin/python3", os.path.join(ROOT, "bench", "plot_profile.py")] + reports + ["-o", png])
        self.assertIn("output projection", out)
        with open(png, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        js = os.path.join(self.dir, "plot_map.json")
        run([self.bin, "attention", "-m", self.model, "A dog runs.", "Two dogs play in the snow.", "-o", js])
        png2 = os.path.join(self.dir, "map.png")
        run(["/usr/bin/python3", os.path.join(ROOT, "bench", "plot_attention.py"), js, "-o", png2])
        with open(png2, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_bad_arguments_and_input(self):
        _, err = run([self.bin, "profile", "-m", self.model, "--input", os.path.join(self.dir, "missing.txt")], 1)
        self.assertIn("cannot read", err)
        _, err = run([self.bin, "profile", "-m", self.model], 1, stdin=b"\n  \n")
        self.assertIn("no sentences to translate", err)
        _, err = run([self.bin, "profile", "-m", os.path.join(self.dir, "missing.mtlite"), "hi"], 1)
        self.assertIn("missing.mtlite", err)
        _, err = run([self.bin, "profile", "-m", self.model, "--trace", os.path.join(self.dir, "no", "t.json"),
                      "hi"], 1)
        self.assertIn("cannot write", err)
        partial = os.path.join(self.dir, "partial.json")
        _, err = run([self.bin, "profile", "-m", self.model, "--trace", partial], 1, stdin=b"A dog.\n\xff\xfe runs\n")
        self.assertIn("line 2: INVALID_ARGUMENT", err)
        self.assertFalse(os.path.exists(partial), "a failed run leaves no partial trace")
        _, err = run([self.bin, "profile", "-m", self.model, "--repeat", "0", "hi"], 2)
        self.assertIn("--repeat must be an integer", err)
        _, err = run([self.bin, "attention", "-m", self.model, "hi", "-o", "x.png"], 2)
        self.assertIn("must end in .svg or .json", err)
        _, err = run([self.bin, "attention", "-m", self.model, "hi", "--layer", "9", "-o", "x.svg"], 2)
        self.assertIn("the model has 2 decoder layers", err)
        _, err = run([self.bin, "attention", "-m", self.model, "   ", "-o", os.path.join(self.dir, "x.svg")], 1)
        self.assertIn("nothing to draw", err)


if __name__ == "__main__":
    unittest.main(verbosity=2)
