#!/usr/bin/env bash
# Installs the Debian packages the DUTs need, when missing: strongSwan's charon with the kernel-libipsec
# plugin (libcharon-extra-plugins; userspace ESP over a TUN device, because this kind of kernel may have no
# ESP/XFRM), the kdf plugin (in libstrongswan, needed by charon's PRF+ with the openssl plugin), swanctl,
# the openssl/gcm plugins, nftables (drop DUT), tcpdump (to show the ESP packets) and ping (check.sh).
set -euo pipefail
need=()
[ -x /usr/lib/ipsec/charon ] || need+=(strongswan-charon)
[ -x /usr/sbin/swanctl ] || need+=(strongswan-swanctl)
[ -f /usr/lib/ipsec/plugins/libstrongswan-kernel-libipsec.so ] || need+=(libcharon-extra-plugins)
[ -f /usr/lib/ipsec/plugins/libstrongswan-openssl.so ] || need+=(libstrongswan-standard-plugins)
command -v nft >/dev/null || need+=(nftables)
command -v tcpdump >/dev/null || need+=(tcpdump)
command -v ping >/dev/null || need+=(iputils-ping)
if [ ${#need[@]} -gt 0 ]; then
	echo "dut: installing ${need[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y --no-install-recommends "${need[@]}" >/dev/null || {
		apt-get update >/dev/null && apt-get install -y --no-install-recommends "${need[@]}" >/dev/null
	}
fi
