"""make bench's regression check: the figures this run recorded (bench_figures.py) against the last
accepted ones (dataplane/bench-accepted.json). A figure worse than its accepted value by more than the
tolerance (10 % unless the accepted file says otherwise) fails the check, so a change that costs that much
is seen the day it lands. This machine's noise between two runs is a few percent on medians; a figure
that fails once is run again (make bench) before it is believed. `make bench-accept` takes this run's
figures as the new accepted ones (commit the file, and say why in the commit).

Usage: bench_check.py FIGURES.jsonl ACCEPTED.json [--accept]
"""
import json
import sys

TOLERANCE = 0.10


def load_run(path):
    figures = {}
    with open(path) as f:
        for line in f:
            if line.strip():
                d = json.loads(line)
                figures[d["name"]] = d
    return figures


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    run = load_run(argv[1])
    if "--accept" in argv[3:]:
        with open(argv[2], "w") as f:
            json.dump({"tolerance": TOLERANCE, "figures": {k: {"value": v["value"], "better": v["better"],
                                                               "unit": v["unit"]} for k, v in sorted(run.items())}},
                      f, indent=1, sort_keys=True)
            f.write("\n")
        print("bench: %d figures accepted into %s" % (len(run), argv[2]))
        return 0
    try:
        with open(argv[2]) as f:
            accepted = json.load(f)
    except FileNotFoundError:
        accepted = {"figures": {}}
    tol = accepted.get("tolerance", TOLERANCE)
    worse = []
    print("\nRegression check against %s (tolerance %.0f %%):" % (argv[2], tol * 100))
    print("%-44s %12s %12s %9s  %s" % ("figure", "accepted", "this run", "change", ""))
    for name in sorted(run):
        now = run[name]
        old = accepted["figures"].get(name)
        if old is None:
            print("%-44s %12s %12g %9s  new" % (name, "-", now["value"], ""))
            continue
        base = old["value"]
        change = (now["value"] - base) / base if base else 0.0
        bad = change < -tol if now["better"] == "higher" else change > tol
        if bad:
            worse.append(name)
        print("%-44s %12g %12g %+8.1f%%  %s" % (name, base, now["value"], 100 * change,
                                                  "WORSE" if bad else "ok"))
    for name in sorted(set(accepted["figures"]) - set(run)):
        print("%-44s %12g %12s %9s  not measured in this run" % (name, accepted["figures"][name]["value"], "-", ""))
    if worse:
        print("bench: %d figures worse than accepted by more than %.0f %%: %s (run make bench again; if it "
              "stays, find the cause, or make bench-accept with the reason in the commit)" % (
                  len(worse), tol * 100, ", ".join(worse)))
        return 1
    print("bench: no figure worse than accepted by more than %.0f %%" % (tol * 100))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
