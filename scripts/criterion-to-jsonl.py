#!/usr/bin/env python3
"""Writes one saved Criterion baseline as cargo-criterion `benchmark-complete` JSON lines.

Usage: criterion-to-jsonl.py CRITERION_DIR BASELINE > run.jsonl

Used to keep A/A recordings compact (one file per run instead of three per benchmark).
Throughput units beyond cargo-criterion's own `bytes`/`elements` are written as
`bytes_decimal` and `bits`, which benchgate also reads.
"""
import json
import os
import sys

UNITS = {"Bytes": "bytes", "BytesDecimal": "bytes_decimal", "Elements": "elements", "Bits": "bits"}


def interval(estimate):
    ci = estimate["confidence_interval"]
    return {"estimate": estimate["point_estimate"], "lower_bound": ci["lower_bound"],
            "upper_bound": ci["upper_bound"], "unit": "ns"}


def main(root, baseline):
    for directory, subdirs, _ in sorted(os.walk(root)):
        results = os.path.join(directory, baseline)
        if baseline not in subdirs or not os.path.isfile(os.path.join(results, "estimates.json")):
            continue
        with open(os.path.join(results, "benchmark.json")) as f:
            benchmark = json.load(f)
        with open(os.path.join(results, "estimates.json")) as f:
            estimates = json.load(f)
        with open(os.path.join(results, "sample.json")) as f:
            sample = json.load(f)
        throughput = []
        if benchmark.get("throughput"):
            (kind, amount), = benchmark["throughput"].items()
            throughput = [{"per_iteration": amount, "unit": UNITS[kind]}]
        message = {
            "reason": "benchmark-complete",
            "id": benchmark["full_id"],
            "iteration_count": sample["iters"],
            "measured_values": sample["times"],
            "unit": "ns",
            "throughput": throughput,
            "mean": interval(estimates["mean"]),
            "median": interval(estimates["median"]),
        }
        print(json.dumps(message, separators=(",", ":")))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
