#!/usr/bin/env bash
# make lint-workflows: actionlint on .github/workflows (bin/actionlint, built by hack/install-tools.sh when
# missing): the workflows' syntax, expressions, action inputs, job needs, and, through shellcheck (Debian's,
# installed when missing), their run: scripts. They cannot run here; this is what checks them. Any finding
# fails.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x bin/actionlint ] || bash hack/install-tools.sh actionlint
if ! command -v shellcheck >/dev/null; then
	echo "lint-workflows: apt-get install shellcheck"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq --no-install-recommends shellcheck >/dev/null ||
		{ apt-get update -qq && apt-get install -y -qq --no-install-recommends shellcheck >/dev/null; }
fi
mapfile -t workflows < <(find .github/workflows -name '*.y*ml' | sort)
[ ${#workflows[@]} -gt 0 ] || { echo "lint-workflows: no workflow in .github/workflows" >&2; exit 1; }
bin/actionlint -shellcheck="$(command -v shellcheck)" "${workflows[@]}"
echo "lint-workflows: ${#workflows[@]} workflows clean (${workflows[*]})"
