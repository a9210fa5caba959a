#!/usr/bin/env bash
# make lint-go: golangci-lint with the checked-in .golangci.yml, kube-api-linter on api/ (bin/golangci-lint,
# built by hack/install-lint-go.sh when missing). Any finding fails.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x bin/golangci-lint ] || bash hack/install-lint-go.sh
bin/golangci-lint run ./...
echo "lint-go: clean"
