#!/usr/bin/env bash
# Builds a real etcd and kube-apiserver (and, on request, other Kubernetes commands such as kubelet,
# kube-scheduler, kube-controller-manager, kubectl) from the Go module proxy alone: this machine reaches
# package registries, not release downloads.
#
#   hack/build-k8s.sh [DEST] [extra k8s commands...]
#
# Binaries land in DEST (default bin/k8s/<version>-linux-amd64, the layout setup-envtest expects) and in a
# machine-wide cache ($LINERATE_CACHE, default ~/.cache/linerate) so a fresh clone on the same machine
# reuses them in seconds. Cold: ~8 min on 2 cores and ~6 GB of Go build cache.
set -euo pipefail
K8S_VERSION=${K8S_VERSION:-1.37.2}   # k8s.io/kubernetes v1.37.2; staging modules are published as v0.37.2
ETCD_VERSION=${ETCD_VERSION:-3.6.16}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEST=$(realpath -m "${1:-$ROOT/bin/k8s/$K8S_VERSION-linux-amd64}"); shift || true
CACHE=${LINERATE_CACHE:-$HOME/.cache/linerate}/k8s/$K8S_VERSION-etcd$ETCD_VERSION
CMDS=(kube-apiserver "$@")
mkdir -p "$DEST" "$CACHE"

missing=()
for c in etcd "${CMDS[@]}"; do [ -x "$CACHE/$c" ] || missing+=("$c"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "build-k8s: building ${missing[*]} (k8s $K8S_VERSION, etcd $ETCD_VERSION) into $CACHE"
  WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
  export GOFLAGS=-mod=mod CGO_ENABLED=0
  if [ ! -x "$CACHE/etcd" ]; then
    # etcd's own go.mod carries replace directives, so `go install pkg@v` refuses it: build it as a tool of a
    # throwaway module instead.
    mkdir -p "$WORK/etcd" && cd "$WORK/etcd"
    printf 'module tmp/etcd\n\ngo 1.24\n' > go.mod
    go get -tool "go.etcd.io/etcd/server/v3@v$ETCD_VERSION"
    go build -trimpath -ldflags='-s -w' -o "$CACHE/etcd.tmp" go.etcd.io/etcd/server/v3 && mv "$CACHE/etcd.tmp" "$CACHE/etcd"
  fi
  k8s=()
  for c in "${CMDS[@]}"; do [ -x "$CACHE/$c" ] || k8s+=("$c"); done
  if [ ${#k8s[@]} -gt 0 ]; then
    # k8s.io/kubernetes requires its staging modules at v0.0.0 (they live in its own tree); a wrapper module
    # replaces each with the published v0.<minor>.<patch>.
    mkdir -p "$WORK/k8s" && cd "$WORK/k8s"
    gomod=$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')
    {
      printf 'module tmp/k8s\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes v%s\n\nreplace (\n' "$K8S_VERSION"
      sed -n '/^require (/,/^)/p' "$gomod" | awk -v v="v0.${K8S_VERSION#1.}" '$2=="v0.0.0"{print "\t" $1 " => " $1 " " v}'
      printf ')\n'
    } > go.mod
    { printf '//go:build tools\n\npackage tools\n\nimport (\n'
      for c in "${k8s[@]}"; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$c"; done
      printf ')\n'; } > tools.go
    go mod tidy
    minor=$(echo "$K8S_VERSION" | cut -d. -f2)
    ld="-s -w -X k8s.io/component-base/version.gitVersion=v$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1"
    ld="$ld -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
    for c in "${k8s[@]}"; do
      go build -trimpath -ldflags="$ld" -o "$CACHE/$c.tmp" "k8s.io/kubernetes/cmd/$c" && mv "$CACHE/$c.tmp" "$CACHE/$c"
    done
  fi
fi
for c in etcd "${CMDS[@]}"; do
  [ "$CACHE/$c" -ef "$DEST/$c" ] || cp -f "$CACHE/$c" "$DEST/$c"
done
echo "build-k8s: etcd ${CMDS[*]} in $DEST"
