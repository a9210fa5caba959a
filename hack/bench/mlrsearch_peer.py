"""FD.io CSIT's MLRsearch (PyPI mlrsearch 1.2.1, unmodified) as the peer of linerate's search in
make bench-search: bench-search runs this as a co-process and drives it over stdin/stdout, one JSON
object a line, so both searches measure the same simulated DUT of the same seed (the trials are
simulated in Go, internal/engine/sim).

Protocol (bench-search writes the odd lines, this driver the even ones):
  {"search": {"min_load": fps, "max_load": fps, "warmup": s, "goals": [{...SearchGoal fields...}]}}
  {"trial": {"duration": s, "load": fps}}             once per trial MLRsearch asks for
  {"offered": n, "forwarded": n, "intended": n, "duration": s}
  {"result": [{"lower": fps|null, "upper": fps|null, "conditional": fps|null}, ...]}  per goal
An exception of MLRsearch ends the search with {"error": "..."}; end of input ends the driver.

The goals arrive in MLRsearch's own terms: the mapping from linerate's goal is bench-search's
(internal/search/cmd/bench-search/peer.go), where it is stated beside the table it prints.
"""

import json
import sys

import MLRsearch
from MLRsearch import (AbstractMeasurer, Config, MeasurementResult,
                       MultipleLossRatioSearch, SearchGoal)

WANT_VERSION = "1.2.1"


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def receive():
    line = sys.stdin.readline()
    if not line:
        return None
    return json.loads(line)


class PipeMeasurer(AbstractMeasurer):
    """Asks bench-search for each trial; counts trials and traffic time as MLRsearch spends them."""

    def __init__(self):
        self.trials = 0
        self.traffic = 0.0

    def measure(self, intended_duration, intended_load):
        send({"trial": {"duration": intended_duration, "load": intended_load}})
        reply = receive()
        if reply is None:
            raise RuntimeError("bench-search closed the pipe during a trial")
        self.trials += 1
        self.traffic += reply["duration"]
        return MeasurementResult(
            intended_duration=intended_duration,
            intended_load=intended_load,
            offered_count=reply["offered"],
            forwarding_count=reply["forwarded"],
            intended_count=reply["intended"],
            offered_duration=reply["duration"],
        )


def bound(stat):
    return None if stat is None else float(stat)


def run(spec):
    config = Config()
    # the order matters: Config checks min_load < max_load as each is set
    config.max_load = spec["max_load"]
    config.min_load = spec["min_load"]
    config.warmup_duration = spec.get("warmup") or None
    # MLRsearch's timeout is wall-clock time; the trials are simulated and return at once
    config.search_duration_max = spec.get("search_duration_max", 3600.0)
    goals = [SearchGoal(**g) for g in spec["goals"]]
    config.goals = goals
    measurer = PipeMeasurer()
    results = MultipleLossRatioSearch(config=config).search(measurer=measurer, debug=lambda _msg: None)
    out = []
    for goal in goals:
        r = results[goal]
        ct = r.conditional_throughput
        out.append({
            "lower": bound(r.relevant_lower_bound),
            "upper": bound(r.relevant_upper_bound),
            "conditional": None if ct is None else float(ct),
        })
    send({"result": out, "trials": measurer.trials, "traffic": measurer.traffic})


def main():
    version = getattr(MLRsearch, "__version__", None)
    if version is None:
        from importlib.metadata import version as dist_version
        version = dist_version("mlrsearch")
    if version != WANT_VERSION:
        send({"error": f"MLRsearch {version} is installed, bench-search is written against {WANT_VERSION} (bash hack/install-mlrsearch.sh)"})
        return 1
    send({"ready": version})
    while (msg := receive()) is not None:
        try:
            run(msg["search"])
        except Exception as e:  # noqa: BLE001 -- every failure goes back to bench-search, named
            send({"error": f"{type(e).__name__}: {e}"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
