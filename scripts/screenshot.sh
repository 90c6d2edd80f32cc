#!/usr/bin/env bash
# bash scripts/screenshot.sh: regenerates docs/jobflow-example.png, the picture of the JobFlow
# example, from `npm run simulate -- manifests/examples/jobflow.yaml --output html` rendered by
# headless Chromium (Debian's `chromium` package; CHROMIUM names another binary). The picture is
# drawn by the simulator, never by hand: run this after changing the example or the pictures.
set -euo pipefail
cd "$(dirname "$0")/.."

CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$CHROMIUM" ]; then
  echo "screenshot: no chromium on the PATH (apt-get install chromium, or set CHROMIUM)" >&2
  exit 1
fi
OUT=${OUT:-docs/jobflow-example.png}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

npm run --silent simulate -- manifests/examples/jobflow.yaml --output html > "$work/jobflow.html"
# --no-sandbox: a container's root has no user namespaces for Chromium's sandbox; the page is our
# own and has no script. The window fits the example's graph and Gantt chart.
"$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=900,600 \
  --screenshot="$work/shot.png" "file://$work/jobflow.html" 2> "$work/chromium.log" || {
  cat "$work/chromium.log" >&2
  exit 1
}
cp "$work/shot.png" "$OUT"
echo "screenshot: wrote $OUT"
