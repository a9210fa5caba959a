#!/usr/bin/env bash
# Installs what the DPDK engine and its tests need from Debian: DPDK 22.11 (headers, libraries, PMDs,
# dpdk-testpmd for the benchmark), a C toolchain with clang (libFuzzer, sanitizers), and the tools the
# tests use to build devices under test (iproute2 for netns/veth/tbf, nftables). Idempotent and quiet
# when everything is already there.
#
# Every package is named: apt-get runs with --no-install-recommends, so nothing may come in as a Recommends.
# clang's sanitizer and libFuzzer runtimes (libclang_rt.fuzzer, .asan, .ubsan) are in libclang-rt-14-dev, a
# Recommends of clang on Debian 12: without it the fuzz target does not link on a fresh machine.
set -euo pipefail
# procps (ps, pgrep) and iproute2 (ip, ss, tc) are used by the tests and by the cluster scripts.
pkgs=(libdpdk-dev dpdk dpdk-dev pkg-config build-essential clang libclang-rt-14-dev nftables iproute2 procps python3)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
	echo "install-dataplane-deps: apt-get install ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq || true
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
pkg-config --exists libdpdk || { echo "install-dataplane-deps: libdpdk not found by pkg-config" >&2; exit 1; }
