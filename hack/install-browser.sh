#!/usr/bin/env bash
# Installs the headless Chromium the report's browser test renders the HTML report in
# (internal/report/browser_test.go): the pages are checked as a reader sees them, laid out by a real
# browser. Debian 12's chromium-headless-shell, without the desktop browser. Idempotent and quiet when
# it is already there.
set -euo pipefail
# The layout depends on the fonts: DejaVu is the sans-serif the checks were made with.
pkgs=(chromium-headless-shell fonts-dejavu-core)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
((${#missing[@]})) || exit 0
echo "install-browser: apt-get install ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq || true
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
