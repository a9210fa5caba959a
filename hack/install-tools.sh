#!/usr/bin/env bash
# Installs the Go tools the build needs into bin/ (pinned; built from the Go module proxy, cached machine-wide
# in $LINERATE_CACHE so a fresh clone on the same machine copies them in a second).
#   hack/install-tools.sh [controller-gen] [setup-envtest] [helm] [kustomize] [crane] [actionlint]
# crane (go-containerregistry) pushes the image tarballs to a registry and reads digests back (make push);
# actionlint checks .github/workflows (make lint-workflows).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/bin
CACHE=${LINERATE_CACHE:-$HOME/.cache/linerate}/tools
mkdir -p "$BIN" "$CACHE"
declare -A PKG=(
  [controller-gen]=sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0
  [setup-envtest]=sigs.k8s.io/controller-runtime/tools/setup-envtest@release-0.25
  [helm]=helm.sh/helm/v3/cmd/helm@v3.22.0
  [kustomize]=sigs.k8s.io/kustomize/kustomize/v5@v5.8.1
  # the go-containerregistry that go.mod (and so cmd/imagebuilder) uses
  [crane]=github.com/google/go-containerregistry/cmd/crane@v0.22.1
  [actionlint]=github.com/rhysd/actionlint/cmd/actionlint@v1.7.12
)
tools=("$@"); [ ${#tools[@]} -gt 0 ] || tools=(controller-gen)
for t in "${tools[@]}"; do
  pkg=${PKG[$t]:?unknown tool $t}
  stamp=$CACHE/$t-$(echo "${pkg#*@}" | tr '/' '_')
  if [ ! -x "$stamp" ]; then
    echo "install-tools: building $pkg"
    GOBIN=$CACHE/gobin-$t go install "$pkg"
    mv "$CACHE/gobin-$t/$t" "$stamp" && rm -rf "$CACHE/gobin-$t"
  fi
  cp -f "$stamp" "$BIN/$t"
done
