#!/usr/bin/env bash
# Installs clang-tidy from Debian when missing: the engine's static analyser (make lint-c; checks in
# dataplane/.clang-tidy). Named explicitly, as every package here: nothing comes in as a Recommends.
set -euo pipefail
command -v clang-tidy >/dev/null && exit 0
echo "install-lint-c: apt-get install clang-tidy"
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq --no-install-recommends clang-tidy >/dev/null ||
	{ apt-get update -qq && apt-get install -y -qq --no-install-recommends clang-tidy >/dev/null; }
