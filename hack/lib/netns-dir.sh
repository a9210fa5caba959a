# shellcheck shell=bash
# /run/netns, the directory of named network namespaces, is layered: containerd bind-mounts a sandbox's
# namespace onto a file in it, `ip netns add` mounts the directory on itself (recursively, to make it shared)
# the first time it finds it unmounted, and bind-mounts its own namespaces on top. A namespace mounted before
# that self-mount is then mounted twice, once hidden below it: unmounting the visible copy is not enough,
# `rm` of its file fails with "Device or resource busy", and `rm -rf` of the directory leaves it half-removed
# and every later `ip` call printing "Peer netns reference is invalid". So a teardown that made the directory
# removes it whole, newest mount first, and only when nothing in it belongs to anyone else. Sourced by
# hack/cluster-down.sh and hack/lib/bringup.sh.

# lr_remove_netns_dir: removes /run/netns (a directory the caller made) when every namespace left in it is a
# container sandbox's (cni-*) that no process uses any more; says what it leaves otherwise.
lr_remove_netns_dir() {
	local d=/run/netns f n others=() m
	[ -d "$d" ] || return 0
	for f in "$d"/*; do
		[ -e "$f" ] || continue
		n=${f##*/}
		case $n in cni-*) [ -n "$(ip netns pids "$n" 2>/dev/null)" ] || continue ;; esac
		others+=("$n")
	done
	if [ ${#others[@]} -gt 0 ]; then
		printf 'netns-dir: %s still holds %s: left in place\n' "$d" "${others[*]}" >&2
		return 0
	fi
	# newest mount first: the visible namespace copies, then the self-mount, then what it hid
	for _ in $(seq 100); do
		m=$(awk -v d="$d" '$5 == d || index($5, d "/") == 1 {p = $5} END {print p}' /proc/self/mountinfo)
		[ -n "$m" ] || break
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || break
	done
	rm -f "$d"/*
	rmdir "$d"
}
