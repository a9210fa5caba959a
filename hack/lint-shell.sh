#!/usr/bin/env bash
# make lint-shell: shellcheck (Debian's, installed when missing) on every shell script of hack/ and .ci/.
# Sourced libraries carry a `# shellcheck shell=bash` directive; -x follows the `source=` hints between them.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v shellcheck >/dev/null; then
	echo "lint-shell: apt-get install shellcheck"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq --no-install-recommends shellcheck >/dev/null ||
		{ apt-get update -qq && apt-get install -y -qq --no-install-recommends shellcheck >/dev/null; }
fi
mapfile -t scripts < <(git ls-files --cached --others --exclude-standard hack .ci | while read -r f; do
	case $f in *.sh | .ci/*) echo "$f" ;; *) head -c 64 "$f" 2>/dev/null | grep -q '^#!.*\(ba\)\?sh' && echo "$f" ;; esac
done | sort -u)
shellcheck -x --source-path=SCRIPTDIR "${scripts[@]}"
echo "lint-shell: ${#scripts[@]} scripts clean"
