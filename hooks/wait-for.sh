#!/bin/sh
# wait-for.sh: wait until every HOST:PORT accepts TCP connections, then exit 0.
#   wait-for.sh [-t SECONDS] HOST:PORT [HOST:PORT ...]
# Exits 1 when the timeout (default 300 s) passes first. Needs nc (busybox has it).
set -u
timeout=300
if [ "${1:-}" = "-t" ]; then timeout=${2:?-t needs a number of seconds}; shift 2; fi
[ $# -gt 0 ] || { echo "usage: wait-for.sh [-t SECONDS] HOST:PORT ..." >&2; exit 2; }
command -v nc >/dev/null 2>&1 || { echo "wait-for: needs nc (busybox and netcat images have it)" >&2; exit 2; }
start=$(date +%s)
for target in "$@"; do
  host=${target%:*}
  port=${target##*:}
  [ "$host" != "$target" ] && [ -n "$port" ] || { echo "wait-for: $target is not HOST:PORT" >&2; exit 2; }
  until nc -z -w 2 "$host" "$port" 2>/dev/null; do
    if [ $(( $(date +%s) - start )) -ge "$timeout" ]; then
      echo "wait-for: $host:$port not reachable after ${timeout}s" >&2
      exit 1
    fi
    sleep 2
  done
  echo "wait-for: $host:$port is up"
done
