#!/usr/bin/env bash
# make push: linerate's two images and its Helm chart into a registry, by name.
#
#   REGISTRY=registry.example.com/linerate TAG=v1.2.3 hack/push.sh [IMAGES_DIR]    (default dist/images)
#
# pushes
#   REGISTRY/manager:TAG, REGISTRY/tester:TAG   hack/build-images.sh's tarballs (crane push); a manager built
#                                               for several architectures (MANAGER_ARCHS) becomes one
#                                               multi-arch index, its images tagged TAG-ARCH
#   oci://REGISTRY/charts/linerate:VERSION      the chart (helm push), packaged by hack/package-chart.sh with
#                                               appVersion TAG and those two images as its defaults
# and checks that the registry serves each image with the digest of the tarball it came from.
#
#   CHART_VERSION  see hack/package-chart.sh (TAG v1.2.3 gives 1.2.3; TAG e2e gives 0.1.0-e2e)
#   PLAIN_HTTP=1   the registry speaks plain HTTP (automatic for localhost and 127.0.0.0/8)
#   PUSH_CHART=0   the images only
#   PUSHED_FILE    also write "manager|tester|chart REFERENCE DIGEST" lines there
#
# Credentials are crane's and helm's: `crane auth login HOST -u USER --password-stdin` and
# `helm registry login HOST` (both read ~/.docker/config.json).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=$(realpath -m "${1:-$ROOT/dist/images}")
REGISTRY=${REGISTRY:?set REGISTRY, e.g. REGISTRY=registry.example.com/linerate (images go to REGISTRY/manager and REGISTRY/tester)}
TAG=${TAG:?set TAG, e.g. TAG=v1.2.3}
REGISTRY=${REGISTRY%/}
log() { printf 'push: %s\n' "$*"; }
die() { printf 'push: %s\n' "$*" >&2; exit 1; }

# An image reference's tag: at most 128 of [A-Za-z0-9_.-], not starting with . or - (the OCI distribution
# spec's rule), so REGISTRY/manager:TAG is a valid name for helm, crane and the kubelet alike.
[[ $TAG =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]] || die "TAG '$TAG' is not an image tag (letters, digits, _ . -; at most 128; not starting with . or -)"
[ -x "$ROOT/bin/crane" ] || bash "$ROOT/hack/install-tools.sh" crane
[ -x "$ROOT/bin/helm" ] || bash "$ROOT/hack/install-tools.sh" helm
crane=("$ROOT/bin/crane")
helm_plain=()
host=${REGISTRY%%/*}
if [ "${PLAIN_HTTP:-0}" = 1 ] || [[ $host =~ ^(localhost|127\.[0-9.]+)(:[0-9]+)?$ ]]; then
  crane+=(--insecure)
  helm_plain=(--plain-http)
fi
pushed=()

# push_checked TARBALL REF: pushes and fails unless the registry serves REF with the tarball's digest.
push_checked() {
  local want got
  want=$("${crane[@]}" digest --tarball "$1")
  "${crane[@]}" push "$1" "$2" >/dev/null
  got=$("${crane[@]}" digest "$2")
  [ "$got" = "$want" ] || die "$2: the registry serves $got, but $1 is $want"
  echo "$got"
}

for image in manager tester; do
  ref=$REGISTRY/$image:$TAG
  mapfile -t per_arch < <(compgen -G "$DIR/$image-linux-*.tar" | sort)
  if [ -f "$DIR/$image.tar" ]; then
    digest=$(push_checked "$DIR/$image.tar" "$ref")
  elif [ ${#per_arch[@]} -gt 0 ]; then
    manifests=()
    for t in "${per_arch[@]}"; do
      arch=${t##*/"$image"-linux-}
      arch=${arch%.tar}
      d=$(push_checked "$t" "$ref-$arch")
      log "$ref-$arch  $d (linux/$arch)"
      manifests+=(-m "$REGISTRY/$image@$d")
    done
    "${crane[@]}" index append "${manifests[@]}" -t "$ref" >/dev/null
    digest=$("${crane[@]}" digest "$ref")
    # the index must list exactly the images just pushed, each with its platform
    listed=$("${crane[@]}" manifest "$ref" | grep -o '"platform"' | wc -l)
    [ "$listed" = ${#per_arch[@]} ] || die "$ref: the index lists $listed images, ${#per_arch[@]} were pushed"
  else
    die "no $image image in $DIR ($image.tar or $image-linux-ARCH.tar): build them with 'make images' (hack/build-images.sh $DIR)"
  fi
  log "$ref  $digest"
  pushed+=("$image $ref $digest")
done

if [ "${PUSH_CHART:-1}" != 0 ]; then
  tgz=$(HELM="$ROOT/bin/helm" bash "$ROOT/hack/package-chart.sh" "$REGISTRY" "$TAG" "$DIR/chart")
  out=$("$ROOT/bin/helm" push "$tgz" "oci://$REGISTRY/charts" "${helm_plain[@]}" 2>&1) || die "helm push $tgz oci://$REGISTRY/charts: $out"
  chart_ref=$(awk '$1 == "Pushed:" {print $2}' <<<"$out")
  chart_digest=$(awk '$1 == "Digest:" {print $2}' <<<"$out")
  version=${tgz##*/linerate-}
  version=${version%.tgz}
  log "oci://$chart_ref  $chart_digest"
  pushed+=("chart oci://$chart_ref $chart_digest")
  echo
  echo "Install what was pushed (the chart's defaults are these images):"
  echo "  helm install linerate oci://$REGISTRY/charts/linerate --version $version -n linerate-system --create-namespace${helm_plain:+ --plain-http}"
  echo "or with kustomize:"
  echo "  make deploy IMG=$REGISTRY/manager:$TAG TESTER_IMG=$REGISTRY/tester:$TAG"
fi
if [ -n "${PUSHED_FILE:-}" ]; then printf '%s\n' "${pushed[@]}" >"$PUSHED_FILE"; fi
