#!/usr/bin/env bash
# Builds linerate's container images without a container engine (cmd/imagebuilder) and, when given a
# cluster, imports them into the local cluster's containerd (hack/cluster-up.sh).
#
#   hack/build-images.sh OUTDIR [STATE_DIR]
#
#   OUTDIR     gets manager.tar and (when the engine is built) tester.tar: OCI image tarballs that
#              `ctr -n k8s.io images import`, `docker load` or `crane push` take. Pass them to cluster-up.sh as
#              IMAGES="OUTDIR/manager.tar OUTDIR/tester.tar", or give STATE_DIR to import them right away.
#   STATE_DIR  a running hack/cluster-up.sh cluster: the images are imported into its containerd.
#
#   MANAGER_IMG  default linerate.dev/manager:dev     TESTER_IMG  default linerate.dev/tester:dev
#   IMAGES_ONLY  "manager" or "tester" to build just one      ENGINE  default dataplane/build/linerate-engine
#   MANAGER_ARCHS  default amd64. Several ("amd64 arm64") write manager-linux-ARCH.tar for each instead of
#              manager.tar: hack/push.sh pushes them as one multi-arch image. The tester is amd64 only (it
#              carries Debian amd64's DPDK: cmd/imagebuilder --arch).
#
# The binaries are built here (static Go: ./cmd/manager, ./cmd/linerate); the engine is not (make engine):
# without it the tester image is skipped with a message and the script still succeeds. The same images are
# built with a container engine by Dockerfile and Dockerfile.tester (cmd/imagebuilder/dockerfile_test.go
# keeps the two definitions equal).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(realpath -m "${1:?usage: hack/build-images.sh OUTDIR [STATE_DIR]}")
STATE=${2:-}
MANAGER_IMG=${MANAGER_IMG:-linerate.dev/manager:dev}
TESTER_IMG=${TESTER_IMG:-linerate.dev/tester:dev}
ENGINE=$(realpath -m "${ENGINE:-$ROOT/dataplane/build/linerate-engine}")
ONLY=${IMAGES_ONLY:-}
BIN=$OUT/bin
log() { printf 'build-images: %s\n' "$*"; }
mkdir -p "$OUT" "$BIN"
cd "$ROOT"
t0=$(date +%s.%N)
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}'; }

go build -o "$BIN/imagebuilder" ./cmd/imagebuilder
version=$(git describe --tags --always --dirty 2>/dev/null || echo devel)
gostatic() { CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.version=$version" -o "$1" "$2"; }
built=()

# manager_image ARCH TARBALL
manager_image() {
  local t bin=$BIN/manager-$1
  t=$(date +%s.%N)
  GOARCH=$1 gostatic "$bin" ./cmd/manager
  "$BIN/imagebuilder" manager --arch "$1" --manager "$bin" --tag "$MANAGER_IMG" --out "$2"
  built+=("$2")
  log "manager image $MANAGER_IMG (linux/$1) in $(elapsed "$t") s"
}
if [ -z "$ONLY" ] || [ "$ONLY" = manager ]; then
  read -ra archs <<<"${MANAGER_ARCHS:-amd64}"
  # one form or the other, never both: hack/push.sh pushes what is there
  if [ ${#archs[@]} -eq 1 ]; then
    rm -f "$OUT"/manager-linux-*.tar
    manager_image "${archs[0]}" "$OUT/manager.tar"
  else
    rm -f "$OUT/manager.tar"
    for a in "${archs[@]}"; do manager_image "$a" "$OUT/manager-linux-$a.tar"; done
  fi
fi

if [ -z "$ONLY" ] || [ "$ONLY" = tester ]; then
  t=$(date +%s.%N)
  if ! compgen -G "cmd/linerate/*.go" >/dev/null; then
    log "SKIPPING the tester image: ./cmd/linerate (the runner CLI) is not in the tree yet"
  elif [ ! -x "$ENGINE" ]; then
    log "SKIPPING the tester image: the engine $ENGINE is not built (run 'make engine' first)"
  else
    rm -f "$OUT/tester.tar"
    gostatic "$BIN/linerate" ./cmd/linerate
    "$BIN/imagebuilder" tester --linerate "$BIN/linerate" --engine "$ENGINE" --tag "$TESTER_IMG" --out "$OUT/tester.tar"
    built+=("$OUT/tester.tar")
    log "tester image $TESTER_IMG in $(elapsed "$t") s"
  fi
fi

if [ -n "$STATE" ]; then
  sock=$(realpath -m "$STATE")/containerd/containerd.sock
  [ -S "$sock" ] || { echo "build-images: $STATE has no running containerd ($sock): is the cluster up?" >&2; exit 1; }
  # ctr from the Debian containerd package that cluster-up extracted (its PATH is in STATE_DIR/env)
  # shellcheck disable=SC1091
  source "$(realpath -m "$STATE")/env"
  for t in "${built[@]}"; do
    ctr --address "$sock" -n k8s.io images import "$t" >/dev/null
    log "imported $t into $STATE"
  done
fi
log "done in $(elapsed "$t0") s: ${built[*]:-nothing built}"
