#!/bin/sh
# retry.sh: run a command until it succeeds, waiting longer after each failure.
#   retry.sh [-n ATTEMPTS] [-d SECONDS] [-m MAX_SECONDS] -- COMMAND [ARG ...]
# Defaults: 5 attempts, 2 s first delay, doubling up to 60 s. Exits with the last exit code.
set -u
attempts=5 delay=2 max=60
while [ $# -gt 0 ]; do
  case "$1" in
    -n) attempts=${2:?-n needs a number}; shift 2 ;;
    -d) delay=${2:?-d needs seconds}; shift 2 ;;
    -m) max=${2:?-m needs seconds}; shift 2 ;;
    --) shift; break ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "usage: retry.sh [-n ATTEMPTS] [-d SECONDS] [-m MAX_SECONDS] -- COMMAND ..." >&2; exit 2; }
try=1
while :; do
  "$@" && exit 0
  code=$?
  if [ "$try" -ge "$attempts" ]; then
    echo "retry: '$*' failed $try times, last exit code $code" >&2
    exit "$code"
  fi
  echo "retry: attempt $try of $attempts failed (exit $code); next in ${delay}s" >&2
  sleep "$delay"
  try=$((try + 1))
  delay=$((delay * 2)); [ "$delay" -gt "$max" ] && delay=$max
done
