#!/usr/bin/python3
"""Stacked bar chart of the time per component from `mtlite profile --json` reports: one bar
per report (configuration), one segment per component (tokenizer, encoder, cross-attention K/V,
decoder self-attention, cross-attention, FFN, other decoder work, output projection, search,
finish, other), in ms per sentence (default), per call, or % of translation time.

  /usr/bin/python3 bench/plot_profile.py a.json b.json ... -o chart.png
      [--labels "greedy,beam 4"] [--unit sentence|call|percent] [--title TEXT]

Needs Debian's python3-matplotlib (PNG or SVG, by the output's extension). Also prints the
numbers as a table. Field names: docs/profiling.md.
"""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# component -> (label, colour); order = stacking order from the bottom.
COMPONENTS = [
    ("tokenizer", "tokenizer", "#9e9e9e"),
    ("encoder", "encoder", "#1f77b4"),
    ("cross_kv", "cross-attn K/V (once per sentence)", "#aec7e8"),
    ("decoder.self_attn", "decoder self-attn", "#ff7f0e"),
    ("decoder.cross_attn", "decoder cross-attn", "#ffbb78"),
    ("decoder.ffn", "decoder FFN", "#2ca02c"),
    ("decoder.other", "decoder other (embed, gaps)", "#98df8a"),
    ("output_projection", "output projection", "#d62728"),
    ("search", "search", "#9467bd"),
    ("finish", "finish (backtrack, detokenize)", "#c5b0d5"),
    ("other", "other (outside named spans)", "#e7e7e7"),
]


def default_label(rep):
    c = rep["config"]
    model = os.path.basename(rep["model"]["path"])
    for ext in (".mtlite",):
        model = model[: -len(ext)] if model.endswith(ext) else model
    search = "greedy" if c["beam"] == 1 else f"beam {c['beam']}"
    return f"{model}\n{search}, batch {c['batch']}, {c['threads']} thr"


def values(rep, unit):
    comp = {c["name"]: c for c in rep["components"]}
    s = rep["summary"]
    div = {"sentence": max(1, s["sentences"]), "call": max(1, rep["input"]["calls"])}.get(unit)
    out = []
    for name, _, _ in COMPONENTS:
        c = comp.get(name, {"total_ms": 0.0, "percent": 0.0})
        out.append(c["percent"] if unit == "percent" else c["total_ms"] / div)
    return out


def main():
    ap = argparse.ArgumentParser(description="stacked bars of time per component from mtlite profile --json")
    ap.add_argument("reports", nargs="+")
    ap.add_argument("-o", "--output", required=True, help="PNG (or .svg) file")
    ap.add_argument("--labels", help="comma-separated bar labels (default: model, search, batch, threads)")
    ap.add_argument("--unit", choices=["sentence", "call", "percent"], default="sentence")
    ap.add_argument("--title", default="Where the translation time goes (mtlite profile)")
    a = ap.parse_args()
    reps = []
    for path in a.reports:
        with open(path, encoding="utf-8") as f:
            rep = json.load(f)
        if rep.get("format") != "mtlite-profile":
            sys.exit(f"plot_profile: {path} is not an `mtlite profile --json` report")
        reps.append(rep)
    labels = a.labels.split(",") if a.labels else [default_label(r) for r in reps]
    if len(labels) != len(reps):
        sys.exit("plot_profile: --labels needs one label per report")
    data = [values(r, a.unit) for r in reps]

    ylabel = {"sentence": "ms per sentence", "call": "ms per translate call", "percent": "% of translation time"}[a.unit]
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(reps) + 4.5), 5.2))
    bottom = [0.0] * len(reps)
    x = list(range(len(reps)))
    for i, (name, label, colour) in enumerate(COMPONENTS):
        h = [d[i] for d in data]
        if not any(h):
            continue
        ax.bar(x, h, bottom=bottom, color=colour, edgecolor="white", linewidth=0.5, label=label, width=0.6)
        bottom = [b + v for b, v in zip(bottom, h)]
    for xi, total in zip(x, bottom):
        ax.text(xi, total, f"{total:.2f}" if a.unit != "percent" else "", ha="center", va="bottom", fontsize=8)
    ax.set_xticks(x)
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(a.title, fontsize=11)
    handles, names = ax.get_legend_handles_labels()
    ax.legend(handles[::-1], names[::-1], fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.spines["top"].set_visible(False)
    ax.spines["right"].set_visible(False)
    fig.tight_layout()
    fig.savefig(a.output, dpi=110)

    print(f"{'component':34s}" + "".join(f"{lab.splitlines()[0][:18]:>20s}" for lab in labels))
    for i, (_, label, _) in enumerate(COMPONENTS):
        print(f"{label:34s}" + "".join(f"{d[i]:20.3f}" for d in data))
    print(f"{'total (' + ylabel + ')':34s}" + "".join(f"{b:20.3f}" for b in bottom))
    print(f"plot_profile: wrote {a.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
