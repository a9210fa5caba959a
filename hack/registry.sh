#!/usr/bin/env bash
# A real OCI registry (the CNCF distribution registry, Debian's docker-registry: hack/install-registry.sh)
# on the loopback, plain HTTP, its blobs and its log in a directory of its own. For pushing linerate's images
# and chart somewhere a cluster pulls from (make push, hack/e2e.sh). No root needed.
#
#   hack/registry.sh up DIR [ADDR]   start it (ADDR default 127.0.0.1:25000, away from the usual 5000);
#                                    idempotent: a second `up` finds it running
#   hack/registry.sh down DIR        stop it (only the process `up` recorded) and remove DIR
#
# DIR/registry.log is its log, with an access log line per request (method, path, status, user agent):
# hack/e2e.sh's registry test reads who pulled what from it.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cmd=${1:?usage: hack/registry.sh up|down DIR [ADDR]}
DIR=$(realpath -m "${2:?usage: hack/registry.sh up|down DIR [ADDR]}")
ADDR=${3:-127.0.0.1:25000}
log() { printf 'registry: %s\n' "$*"; }

# ours: the recorded PID still runs and started when we recorded it (field 22 of /proc/PID/stat), so a PID
# reused by another process is never taken for the registry, nor killed.
ours() {
  local pid
  pid=$(cat "$DIR/pid" 2>/dev/null) && kill -0 "$pid" 2>/dev/null &&
    [ "$(awk '{print $22}' "/proc/$pid/stat" 2>/dev/null)" = "$(cat "$DIR/pid.start" 2>/dev/null)" ]
}

# v2_answers: GET /v2/ answers 200 (bash's /dev/tcp: no HTTP client needed on a minimal Debian).
v2_answers() {
  local status
  { exec 3<>"/dev/tcp/${ADDR%:*}/${ADDR##*:}"; } 2>/dev/null || return 1
  printf 'GET /v2/ HTTP/1.0\r\nHost: %s\r\n\r\n' "$ADDR" >&3
  read -r _ status _ <&3 || true
  exec 3<&-
  [ "$status" = 200 ]
}

case $cmd in
up)
  if ours; then
    log "already running at http://$(cat "$DIR/addr") (pid $(cat "$DIR/pid"))"
    exit 0
  fi
  if ss -Hltn "sport = :${ADDR##*:}" | grep -q .; then
    echo "registry: ${ADDR} is in use:" >&2
    ss -Hltnp "sport = :${ADDR##*:}" >&2
    exit 1
  fi
  bin=$(bash "$ROOT/hack/install-registry.sh")
  mkdir -p "$DIR/data"
  cat >"$DIR/config.yml" <<YAML
version: 0.1
log:
  level: info
  formatter: text
  accesslog: {disabled: false}
storage:
  filesystem: {rootdirectory: $DIR/data}
  delete: {enabled: true}
http:
  addr: $ADDR
  secret: $(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
YAML
  "$bin" serve "$DIR/config.yml" >"$DIR/registry.log" 2>&1 &
  echo $! >"$DIR/pid"
  awk '{print $22}' "/proc/$!/stat" >"$DIR/pid.start"
  echo "$ADDR" >"$DIR/addr"
  for _ in $(seq 100); do
    if v2_answers; then
      log "serving http://$ADDR/v2/ (pid $(cat "$DIR/pid"), blobs in $DIR/data, log $DIR/registry.log)"
      exit 0
    fi
    ours || { echo "registry: it exited; its log ($DIR/registry.log):" >&2; cat "$DIR/registry.log" >&2; exit 1; }
    sleep 0.1
  done
  echo "registry: no answer on http://$ADDR/v2/ after 10 s (log: $DIR/registry.log)" >&2
  exit 1
  ;;
down)
  if ours; then
    pid=$(cat "$DIR/pid")
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; fi
    log "stopped (pid $pid)"
  fi
  rm -rf "$DIR"
  ;;
*)
  echo "usage: hack/registry.sh up|down DIR [ADDR]" >&2
  exit 2
  ;;
esac
