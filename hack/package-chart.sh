#!/usr/bin/env bash
# Packages charts/linerate for a registry: appVersion TAG and the images REGISTRY/manager and REGISTRY/tester
# as its defaults, so that the packaged chart, installed with no --set, runs the images `make push` pushed
# (REGISTRY/manager:TAG, REGISTRY/tester:TAG). Prints the path of the .tgz. hack/push.sh pushes it.
#
#   hack/package-chart.sh REGISTRY TAG OUTDIR
#   CHART_VERSION  default: TAG without its "v" when TAG is a SemVer (v1.2.3 -> 1.2.3), else Chart.yaml's
#                  version with TAG as its pre-release (0.1.0-e2e)
#
# The checkout's chart is not changed: a copy with the two repositories replaced is packaged, and then
# rendered to check that it names exactly those images.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: hack/package-chart.sh REGISTRY TAG OUTDIR"
REGISTRY=${1:?$usage}
TAG=${2:?$usage}
OUT=$(realpath -m "${3:?$usage}")
HELM=${HELM:-$ROOT/bin/helm}
[ -x "$HELM" ] || bash "$ROOT/hack/install-tools.sh" helm >&2
REGISTRY=${REGISTRY%/}

semver='^v?([0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?)$'
if [ -z "${CHART_VERSION:-}" ]; then
  if [[ $TAG =~ $semver ]]; then
    CHART_VERSION=${BASH_REMATCH[1]}
  else
    base=$(awk '$1 == "version:" {print $2; exit}' "$ROOT/charts/linerate/Chart.yaml")
    CHART_VERSION=$base-${TAG//_/-}
  fi
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$ROOT/charts/linerate" "$work/linerate"
values=$work/linerate/values.yaml
# the two defaults, each exactly once (values.yaml's image.repository and tester.image.repository)
for image in manager tester; do
  n=$(grep -c "^ *repository: linerate\.dev/$image\$" "$values" || true)
  [ "$n" = 1 ] || { echo "package-chart: charts/linerate/values.yaml has $n lines 'repository: linerate.dev/$image', want 1" >&2; exit 1; }
  sed -i "s|^\( *repository: \)linerate\.dev/$image\$|\1$REGISTRY/$image|" "$values"
done
mkdir -p "$OUT"
"$HELM" package "$work/linerate" --version "$CHART_VERSION" --app-version "$TAG" --destination "$OUT" >/dev/null
tgz=$OUT/linerate-$CHART_VERSION.tgz

# What it installs by default must be what was pushed.
rendered=$("$HELM" template linerate "$tgz" --namespace linerate-system)
for want in "image: $REGISTRY/manager:$TAG" "--tester-image=$REGISTRY/tester:$TAG"; do
  grep -qF -- "$want" <<<"$rendered" || { echo "package-chart: $tgz does not render '$want'" >&2; exit 1; }
done
echo "$tgz"
