#!/usr/bin/env bash
# Puts the CNCF distribution registry (Debian's docker-registry package) in the machine-wide cache and
# prints the path of its binary. The package is extracted, not installed: no docker-registry system service
# is enabled or started, nothing is written outside the cache (hack/registry.sh runs the binary).
#
#   hack/install-registry.sh        -> e.g. ~/.cache/linerate/registry-debs/2.8.2-ds1-1/root/usr/bin/docker-registry
set -euo pipefail
CACHE=${LINERATE_CACHE:-$HOME/.cache/linerate}
candidate=$(apt-cache policy docker-registry 2>/dev/null | awk '/Candidate:/{print $2}')
if [ -z "$candidate" ] || [ "$candidate" = "(none)" ]; then
  echo "install-registry: apt knows no docker-registry package (Debian 12 main has it; run 'apt-get update' once)" >&2
  exit 1
fi
# the directory is named after the candidate version, so a Debian point release extracts afresh
dir=$CACHE/registry-debs/${candidate//[~+:]/-}
bin=$dir/root/usr/bin/docker-registry
if [ ! -x "$bin" ]; then
  echo "install-registry: extracting docker-registry $candidate from Debian's package into $dir" >&2
  rm -rf "$dir" && mkdir -p "$dir/debs"
  # (as root, apt would warn that its _apt sandbox user cannot write here: download as root, quietly)
  (cd "$dir/debs" && apt-get download -q -o APT::Sandbox::User=root docker-registry >/dev/null)
  dpkg-deb -x "$dir"/debs/docker-registry_*.deb "$dir/root.tmp"
  mv "$dir/root.tmp" "$dir/root"
fi
echo "$bin"
