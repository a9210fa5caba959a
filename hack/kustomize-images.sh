#!/usr/bin/env bash
# Renders config/default (kustomize) with the images given, on stdout: what `make deploy` applies and
# `make build-installer` writes. The checkout is not changed: an overlay in a temporary directory sets the
# manager's image (kustomize's images transformer) and its --tester-image argument (a JSON patch that first
# tests the argument it replaces, so a reordered config/manager/manager.yaml fails here instead of deploying
# the wrong image).
#
#   hack/kustomize-images.sh MANAGER_IMAGE TESTER_IMAGE     e.g. registry.example.com/linerate/manager:v1.2.3
#                                                           (NAME:TAG or NAME@sha256:...)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: hack/kustomize-images.sh MANAGER_IMAGE TESTER_IMAGE"
manager=${1:?$usage}
tester=${2:?$usage}
# config/manager/manager.yaml's tester argument, and its place among the manager's arguments
base_arg=--tester-image=linerate.dev/tester:dev
arg_path=/spec/template/spec/containers/0/args/3

# NAME:TAG or NAME@DIGEST; a registry's :PORT is part of the name (the tag comes after the last /)
name=$manager tag='' digest=''
case $manager in
*@*) name=${manager%@*} digest=${manager#*@} ;;
*)
  last=${manager##*/}
  if [[ $last == *:* ]]; then name=${manager%:*} tag=${last##*:}; fi
  ;;
esac
[ -n "$tag$digest" ] || { echo "kustomize-images: '$manager' has no tag or digest (want NAME:TAG or NAME@sha256:...)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# kustomize takes no absolute path to a kustomization: the overlay names config/default relative to itself
cat >"$work/kustomization.yaml" <<YAML
resources:
- $(realpath --relative-to="$work" "$ROOT/config/default")
images:
- name: linerate.dev/manager
  newName: $name
${tag:+  newTag: \"$tag\"}${digest:+  digest: $digest}
patches:
- target: {group: apps, version: v1, kind: Deployment, name: linerate-controller-manager}
  patch: |-
    - {op: test, path: $arg_path, value: "$base_arg"}
    - {op: replace, path: $arg_path, value: "--tester-image=$tester"}
YAML
# bin/kustomize, else kubectl's, else installed (a release job on a bare image has neither)
if [ ! -x "$ROOT/bin/kustomize" ] && ! command -v kubectl >/dev/null; then
  bash "$ROOT/hack/install-tools.sh" kustomize >&2
fi
if [ -x "$ROOT/bin/kustomize" ]; then
  render=("$ROOT/bin/kustomize" build)
else
  render=(kubectl kustomize)
fi
if ! out=$("${render[@]}" "$work" 2>&1); then
  if grep -q "test failed" <<<"$out"; then
    echo "kustomize-images: argument ${arg_path##*/} of the manager in config/manager/manager.yaml is not '$base_arg' any more: update base_arg/arg_path in hack/kustomize-images.sh" >&2
  fi
  echo "$out" >&2
  exit 1
fi
echo "$out"
