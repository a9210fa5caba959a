#!/usr/bin/env bash
# Builds Multus (the "thin" CNI meta-plugin, cmd/multus) from its Go module on the Go module proxy, into DEST
# and a machine-wide cache ($LINERATE_CACHE, default ~/.cache/linerate) so later clones copy it in a second.
#
#   hack/build-multus.sh [DEST]        (default bin/cni; ~1-2 min cold on 2 cores)
#
# The thin plugin is what the kubelet's CNI runs for every pod sandbox: it delegates the default network to
# the node's own CNI config (our bridge) and adds one interface per entry of the pod's
# k8s.v1.cni.cncf.io/networks annotation, reading each NetworkAttachmentDefinition from the API server.
set -euo pipefail
MULTUS_VERSION=${MULTUS_VERSION:-4.3.0}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEST=$(realpath -m "${1:-$ROOT/bin/cni}")
CACHE=${LINERATE_CACHE:-$HOME/.cache/linerate}/multus/$MULTUS_VERSION
mkdir -p "$DEST" "$CACHE"
if [ ! -x "$CACHE/multus" ]; then
  echo "build-multus: building gopkg.in/k8snetworkplumbingwg/multus-cni.v4/cmd/multus@v$MULTUS_VERSION"
  # `go install pkg@version` would also ask the proxy for the module's version list (to warn about
  # deprecation), which the proxy refuses for this module; a throwaway module that requires the exact version
  # needs no list.
  WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
  cd "$WORK"
  printf 'module tmp/multus\n\ngo 1.25.0\n\nrequire gopkg.in/k8snetworkplumbingwg/multus-cni.v4 v%s\n' "$MULTUS_VERSION" > go.mod
  printf '//go:build tools\n\npackage tools\n\nimport _ "gopkg.in/k8snetworkplumbingwg/multus-cni.v4/cmd/multus"\n' > tools.go
  GOFLAGS=-mod=mod go mod tidy
  mkdir -p "$CACHE/gobin"
  CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags="-s -w \
    -X gopkg.in/k8snetworkplumbingwg/multus-cni.v4/pkg/multus.version=v$MULTUS_VERSION" \
    -o "$CACHE/gobin/multus" gopkg.in/k8snetworkplumbingwg/multus-cni.v4/cmd/multus
  mv "$CACHE/gobin/multus" "$CACHE/multus" && rm -rf "$CACHE/gobin"
fi
[ "$CACHE/multus" -ef "$DEST/multus" ] || cp -f "$CACHE/multus" "$DEST/multus"
echo "build-multus: $DEST/multus"
