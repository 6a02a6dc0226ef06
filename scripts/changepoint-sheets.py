#!/usr/bin/env python3
"""Draws change points and random places for labelling by eye, blind (docs/changepoints.md).

Input: the series as the site searches them, from
  DUMP=/tmp/series.json cargo test -p benchgate-dashboards --release --test changepoints \
      series_for_labelling -- --ignored
Output: OUT/sheet0.png … (20 charts each: the 15 runs either side of a red line, the series as
the site searches it in blue and as stored in grey, in per cent from the window's median) and
OUT/key.json, which says which chart is a change point and which a random place. Label the
sheets before opening the key. Charts already labelled (items of --exclude, a labels file such
as dashboards/tests/fixtures/changepoint-labels.json) are not drawn again.

Needs matplotlib (pip install matplotlib). Not part of the test suite: the labels it leads to
are checked by `precision_by_eye_on_labelled_charts`.
"""

import argparse
import json
import math
import random
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SIDE = 15
PER_SHEET = 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("series", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--change-points", type=int, default=60)
    parser.add_argument("--places", type=int, default=40)
    parser.add_argument("--exclude", type=Path, help="a labels file whose charts are not drawn again")
    parser.add_argument("--first-panel", type=int, default=0, help="the number of the first chart")
    args = parser.parse_args()

    series = json.loads(args.series.read_text())
    key = lambda s: (s["history"], s["benchmark"])  # noqa: E731
    shown = set()
    if args.exclude:
        for item in json.loads(args.exclude.read_text())["items"]:
            shown.add((item["history"], item["benchmark"], item["index"]))

    def seen(s, t):
        return any((*key(s), u) in shown for u in (t - 1, t, t + 1))

    rng = random.Random(args.seed)
    points = [(i, t) for i, s in enumerate(series) for t in s["found"] if not seen(s, t)]
    places = [
        (i, t)
        for i, s in enumerate(series)
        for t in range(3, len(s["raw"]) - 1)
        if (*key(s), t) not in shown
    ]
    items = [("change point", i, t) for i, t in rng.sample(points, args.change_points)]
    items += [("random place", i, t) for i, t in rng.sample(places, args.places)]
    rng.shuffle(items)

    args.out.mkdir(parents=True, exist_ok=True)
    described = []
    for sheet in range(math.ceil(len(items) / PER_SHEET)):
        fig, axes = plt.subplots(5, 4, figsize=(16, 14))
        for k, ax in enumerate(axes.flat):
            n = sheet * PER_SHEET + k
            if n >= len(items):
                ax.axis("off")
                continue
            shown_as, i, t = items[n]
            s = series[i]
            low, high = max(0, t - SIDE), min(len(s["raw"]), t + SIDE)
            xs = range(low, high)
            for values, colour, width in ((s["raw"], "#bbbbbb", 0.8), (s["adjusted"], "#1f5fbf", 1.0)):
                window = values[low:high]
                middle = sorted(window)[len(window) // 2]
                ax.plot(xs, [100 * math.log(v / middle) for v in window], "o-", color=colour, ms=3, lw=width)
            ax.axvline(t - 0.5, color="red", ls="--", lw=1)
            ax.set_title(f"#{args.first_panel + n}", fontsize=10)
            ax.grid(True, alpha=0.3)
            ax.tick_params(labelsize=7)
            described.append(
                {"panel": args.first_panel + n, "history": s["history"], "benchmark": s["benchmark"], "index": t, "shown": shown_as}
            )
        fig.tight_layout()
        fig.savefig(args.out / f"sheet{sheet}.png", dpi=60)
        plt.close(fig)
    (args.out / "key.json").write_text(json.dumps(described, indent=1))
    print(f"{len(items)} charts on {math.ceil(len(items) / PER_SHEET)} sheets in {args.out}; the key is key.json")


if __name__ == "__main__":
    main()
