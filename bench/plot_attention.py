#!/usr/bin/python3
"""Cross-attention heatmap as PNG from `mtlite attention ... --json map.json`: one panel per
decoder layer (mean over heads), rows = target tokens (generated + </s>), columns = source
tokens of the batch; padding columns (masked, weight exactly 0) are hatched and labelled <pad>.

  /usr/bin/python3 bench/plot_attention.py map.json -o map.png [--crop]

Needs Debian's python3-matplotlib. `mtlite attention -o map.svg` draws the same without Python.
"""
import argparse
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.patches as patches  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description="cross-attention heatmap (PNG) from mtlite attention --json")
    ap.add_argument("json")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--crop", action="store_true", help="only the sentence's own source tokens")
    a = ap.parse_args()
    with open(a.json, encoding="utf-8") as f:
        m = json.load(f)
    if m.get("format") != "mtlite-attention":
        sys.exit(f"plot_attention: {a.json} is not an `mtlite attention` JSON file")
    real = m["source_length"]
    cols = real if a.crop else m["source_tokens"]
    xl = m["source_pieces"] + ["<pad>"] * (cols - real)
    yl = m["target_pieces"]
    layers = m["layers"]
    n = len(layers)
    per_row = min(3, n)
    rows = (n + per_row - 1) // per_row
    cw = 0.34
    fig, axes = plt.subplots(rows, per_row, squeeze=False,
                             figsize=(per_row * (cols * cw + 1.6), rows * (len(yl) * cw + 1.8) + 0.6))
    im = None
    for p, layer in enumerate(layers):
        ax = axes[p // per_row][p % per_row]
        w = [row[:cols] for row in layer["weights"]]
        im = ax.imshow(w, cmap="Blues", vmin=0.0, vmax=1.0, aspect="equal", interpolation="nearest")
        for j in range(real, cols):
            if all(row[j] == 0.0 for row in w):
                ax.add_patch(patches.Rectangle((j - 0.5, -0.5), 1, len(yl), fill=False, hatch="///",
                                               edgecolor="#bbbbbb", linewidth=0))
        ax.set_xticks(range(cols))
        ax.set_xticklabels(xl, rotation=60, ha="left", fontsize=8)
        ax.xaxis.tick_top()
        for j, t in enumerate(ax.get_xticklabels()):
            if j >= real:
                t.set_color("#888888")
        ax.set_yticks(range(len(yl)))
        ax.set_yticklabels(yl, fontsize=8)
        ax.set_xlabel(f"decoder layer {layer['layer']}", fontsize=9)
    for p in range(n, rows * per_row):
        axes[p // per_row][p % per_row].axis("off")
    fig.suptitle(f"cross-attention (mean over {m['heads']} heads): {m['text']}\n-> {m['translation']}", fontsize=9)
    if im is not None:
        fig.colorbar(im, ax=axes.ravel().tolist(), shrink=0.6, label="attention weight")
    fig.savefig(a.output, dpi=110, bbox_inches="tight")
    print(f"plot_attention: wrote {a.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
