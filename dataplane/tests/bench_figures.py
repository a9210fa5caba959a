"""The figures make bench prints, kept for its regression check (bench_check.py): each benchmark records
the figures that say how fast the engine is against its reference in the same run (ratios, and a few of
the engine's own costs), one JSON line each, in the file BENCH_FIGURES names (nothing when it is unset)."""
import json
import os


def record(name, value, better, unit=""):
    """A figure: name, its value, and which way is better ("higher" or "lower")."""
    path = os.environ.get("BENCH_FIGURES")
    if not path or value != value:  # unset, or a NaN (the reference did not run)
        return
    with open(path, "a") as f:
        f.write(json.dumps({"name": name, "value": round(value, 4), "better": better, "unit": unit}) + "\n")
