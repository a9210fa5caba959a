#!/usr/bin/env bash
# Installs bin/mlrsearch: a Python venv with FD.io CSIT's MLRsearch (PyPI mlrsearch, pinned), the peer that
# make bench-search-mlr compares linerate's search with (hack/bench/mlrsearch_peer.py). Only the benchmark
# needs it; make test does not. Idempotent: a venv with the pinned version is kept.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VERSION=1.2.1
VENV=$ROOT/bin/mlrsearch
if [ -x "$VENV/bin/python" ] && [ "$("$VENV/bin/python" -c 'from importlib.metadata import version; print(version("mlrsearch"))' 2>/dev/null)" = "$VERSION" ]; then
	exit 0
fi
echo "install-mlrsearch: mlrsearch $VERSION into $VENV"
if ! python3 -c 'import ensurepip' 2>/dev/null; then
	# Debian keeps venv's pip bootstrap in its own package
	echo "install-mlrsearch: apt-get install python3-venv"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq --no-install-recommends python3-venv >/dev/null ||
		{ apt-get update -qq && apt-get install -y -qq --no-install-recommends python3-venv >/dev/null; }
fi
rm -rf "$VENV"
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet "mlrsearch==$VERSION"
