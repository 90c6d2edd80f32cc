#!/bin/sh
# http-check.sh: wait until a URL answers with a 2xx or 3xx status, then exit 0.
#   http-check.sh [-t SECONDS] URL
# Exits 1 when the timeout (default 300 s) passes first. Uses wget (busybox has it) or curl.
set -u
timeout=300
if [ "${1:-}" = "-t" ]; then timeout=${2:?-t needs a number of seconds}; shift 2; fi
url=${1:?usage: http-check.sh [-t SECONDS] URL}
probe() {
  if command -v curl >/dev/null 2>&1; then curl -fsS -o /dev/null --max-time 5 "$url"
  else wget -q -O /dev/null -T 5 "$url"; fi
}
start=$(date +%s)
until probe; do
  if [ $(( $(date +%s) - start )) -ge "$timeout" ]; then
    echo "http-check: $url not healthy after ${timeout}s" >&2
    exit 1
  fi
  sleep 2
done
echo "http-check: $url is healthy"
