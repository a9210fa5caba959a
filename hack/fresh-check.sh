#!/usr/bin/env bash
# make fresh-check: runs a README command (default `make test`) in a clean Debian 12 root, on a fresh clone of
# this repository's HEAD, from nothing. It proves that hack/ installs every package and tool the command needs:
# a package this machine happens to have (or that a Recommends pulled in here) is not in the root, so a missing
# install step fails here instead of on a user's first run.
#
# The root gets what every machine of this kind has before the project touches it, and nothing else:
#   - Debian 12 minbase (debootstrap, from this machine's apt sources), make, git and ca-certificates;
#   - the machine's Go toolchain (GOROOT, copied: it is not a Debian package) and its environment for the
#     package registries (apt sources, resolv.conf, trusted CAs, GOPROXY/GOSUMDB);
#   - /proc, /sys, /dev and a private /run, so network namespaces, cgroups and hugepages work as on a host.
# Go's module and build caches start empty: Kubernetes is built from the Go proxy as on a fresh machine.
#
#   hack/fresh-check.sh [COMMAND...]     (root; default: make test)
#   FRESH_DIR=/var/tmp/linerate-fresh    where the root lives (removed at the end unless KEEP=1)
#   FRESH_BASE=keep                      reuse an earlier minbase tarball from $FRESH_DIR/base.tgz
set -euo pipefail
ROOT_SRC=$(cd "$(dirname "$0")/.." && pwd)
DIR=$(realpath -m "${FRESH_DIR:-/var/tmp/linerate-fresh}")
R=$DIR/root
SUITE=bookworm
[ "$(id -u)" = 0 ] || { echo "fresh-check: run as root (debootstrap, chroot, mounts)" >&2; exit 1; }
[ $# -gt 0 ] || set -- make test
log() { printf '\033[1m==> fresh-check [%4ss] %s\033[0m\n' "$(($(date +%s) - t0))" "$*" >&2; }
t0=$(date +%s)

# umount_below DIR: every mount at or below DIR, deepest first (a test that failed may leave some)
umount_below() {
	local m
	while read -r m; do
		umount "$m" 2>/dev/null || umount -l "$m"
	done < <(awk -v s="$1" '$5 == s || index($5, s "/") == 1 {print $5}' /proc/self/mountinfo | sort -r)
}
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	local rc=$?
	umount_below "$R"
	if [ "${KEEP:-0}" = 1 ]; then
		log "KEEP=1: the root stays in $R"
	else
		rm -rf "$R"
	fi
	log "exit $rc"
	exit "$rc"
}

if ! command -v debootstrap >/dev/null; then
	log "installing debootstrap"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null ||
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null; }
fi
# The Debian mirror this machine uses (deb822 sources or a classic sources.list), never a hard-coded one.
mirror=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $3 !~ /security/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
[ -n "$mirror" ] || { echo "fresh-check: no Debian mirror in /etc/apt/sources.list*" >&2; exit 1; }

mkdir -p "$DIR"
umount_below "$R"
rm -rf "$R"
trap cleanup EXIT
trap 'exit 130' INT TERM
if [ "${FRESH_BASE:-}" = keep ] && [ -f "$DIR/base.tgz" ]; then
	log "unpacking the minbase root kept in $DIR/base.tgz"
	mkdir -p "$R" && tar -xzf "$DIR/base.tgz" -C "$R"
else
	log "debootstrap --variant=minbase $SUITE (make, git, ca-certificates)"
	debootstrap --variant=minbase --include=make,git,ca-certificates "$SUITE" "$R" "$mirror" >"$DIR/debootstrap.log" 2>&1 ||
		{ tail -20 "$DIR/debootstrap.log" >&2; exit 1; }
	tar -czf "$DIR/base.tgz" -C "$R" .
fi

# The machine's environment for the registries: apt sources, DNS, trusted CAs (the workplace's proxies), Go.
rm -f "$R/etc/apt/sources.list"
cp -a /etc/apt/sources.list.d/. "$R/etc/apt/sources.list.d/" 2>/dev/null || true
[ -f /etc/apt/sources.list ] && cp /etc/apt/sources.list "$R/etc/apt/sources.list"
find "$R/etc/apt/sources.list.d" -name '*.disabled*' -delete
cp -L /etc/resolv.conf "$R/etc/resolv.conf"
cp -L /etc/hosts "$R/etc/hosts" # localhost, as every installed machine has it (debootstrap writes none)
if [ -d /usr/local/share/ca-certificates ]; then
	cp -a /usr/local/share/ca-certificates/. "$R/usr/local/share/ca-certificates/"
	chroot "$R" update-ca-certificates >/dev/null 2>&1
fi
GOROOT_HOST=$(go env GOROOT)
mkdir -p "$R/usr/local/go"
cp -a "$GOROOT_HOST/." "$R/usr/local/go/"

# A fresh clone of HEAD: what CI and a user get, not this work tree's uncommitted files.
git clone -q "$ROOT_SRC" "$R/src/linerate"
log "clone of $(git -C "$ROOT_SRC" rev-parse --short HEAD) in $R/src/linerate"

# The root is a mount point of its own, as / is on a machine: `ip netns exec` and `ip -n` make / a slave mount
# (EINVAL on a plain directory under a chroot).
mount --bind "$R" "$R"
mount -t proc proc "$R/proc"
mount --rbind /sys "$R/sys" && mount --make-rslave "$R/sys"
mount --rbind /dev "$R/dev" && mount --make-rslave "$R/dev"
mount -t tmpfs -o mode=755 tmpfs "$R/run"
mount -t tmpfs -o mode=1777 tmpfs "$R/tmp"
mkdir -p "$R/dev/hugepages"

log "running '$*' in the root (log: $DIR/run.log)"
t1=$(date +%s)
set +e
chroot "$R" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 CI=true \
	PATH=/usr/local/go/bin:/root/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	GOPROXY="$(go env GOPROXY)" GOSUMDB="$(go env GOSUMDB)" GOFLAGS="$(go env GOFLAGS)" \
	bash -c 'cd /src/linerate && "$@"' fresh-check "$@" 2>&1 | tee "$DIR/run.log"
rc=${PIPESTATUS[0]}
set -e
log "'$*' exited $rc after $(($(date +%s) - t1)) s in the fresh root ($(($(date +%s) - t0)) s in all)"
exit "$rc"
