#!/usr/bin/env bash
# npm run e2e: the end-to-end tier. Builds (or reuses) the control plane (test/e2e/build-binaries.sh:
# Kubernetes, etcd, kwok, helm, Kueue and Argo's workflow controller from Go modules, Metacontroller
# v4.17.2 from its source), builds the service from the working tree, and runs test/e2e/*.e2e.ts
# with tap, or the files given:
#
#   npm run e2e -- test/e2e/trust.e2e.ts test/e2e/jobflow.e2e.ts
#
# With E2E_KUBECONFIG set, runs the same scenarios against that cluster instead: it must run
# Metacontroller and jobhooks already (kubectl apply -k manifests) and be able to run busybox pods;
# kubectl and helm (the chart's tests) come from PATH, and the chart is not installed there. The
# Kueue scenarios (test/e2e/kueue.e2e.ts) run there only when that cluster has Kueue installed.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ -z "${E2E_KUBECONFIG:-}" ]; then
  command -v go >/dev/null || { echo "e2e: Go is needed to build the control plane (or set E2E_KUBECONFIG)" >&2; exit 1; }
  started=$(date +%s)
  out=$(bash test/e2e/build-binaries.sh)
  E2E_BIN=$(sed -n 's/^BIN=//p' <<<"$out")
  E2E_METACONTROLLER=$(sed -n 's/^METACONTROLLER=//p' <<<"$out")
  E2E_METACONTROLLER_VERSION=$(sed -n 's/^METACONTROLLER_VERSION=//p' <<<"$out")
  E2E_METACONTROLLER_CRDS=$(sed -n 's/^METACONTROLLER_CRDS=//p' <<<"$out")
  E2E_HELM=$(sed -n 's/^HELM=//p' <<<"$out")
  E2E_KUEUE=$(sed -n 's/^KUEUE=//p' <<<"$out")
  E2E_KUEUE_VERSION=$(sed -n 's/^KUEUE_VERSION=//p' <<<"$out")
  E2E_KUEUE_MANIFESTS=$(sed -n 's/^KUEUE_MANIFESTS=//p' <<<"$out")
  export E2E_BIN E2E_METACONTROLLER E2E_METACONTROLLER_VERSION E2E_METACONTROLLER_CRDS E2E_HELM
  export E2E_KUEUE E2E_KUEUE_VERSION E2E_KUEUE_MANIFESTS
  # Argo's workflow controller may be missing (E2E_ARGO_SKIPPED says why): only its scenarios skip.
  E2E_ARGO=$(sed -n 's/^ARGO=//p' <<<"$out")
  E2E_ARGO_CRDS=$(sed -n 's/^ARGO_CRDS=//p' <<<"$out")
  E2E_ARGO_VERSION=$(sed -n 's/^ARGO_VERSION=//p' <<<"$out")
  E2E_ARGO_SKIPPED=$(sed -n 's/^ARGO_SKIPPED=//p' <<<"$out")
  export E2E_ARGO E2E_ARGO_CRDS E2E_ARGO_VERSION E2E_ARGO_SKIPPED
  versions="Kubernetes from $E2E_BIN, Metacontroller $E2E_METACONTROLLER_VERSION: $E2E_METACONTROLLER"
  versions="$versions, Kueue $E2E_KUEUE_VERSION: $E2E_KUEUE"
  versions="$versions, Argo $E2E_ARGO_VERSION: ${E2E_ARGO:-skipped: $E2E_ARGO_SKIPPED}"
  echo "e2e: control plane binaries ready in $(( $(date +%s) - started ))s ($versions)"
else
  echo "e2e: running against the cluster of E2E_KUBECONFIG with the Metacontroller installed there"
fi

# The service from the checkout, its WebAssembly skip included.
npm run build
# test/e2e is left out of npm test; here it is all there is.
if [ "$#" -eq 0 ]; then set -- test/e2e/*.e2e.ts; fi
for file in "$@"; do [ -f "$file" ] || { echo "e2e: no such scenario file: $file" >&2; exit 1; }; done
npx tap --disable-coverage --reporter=tap --timeout=1800 --exclude='**/node_modules/**' "$@"
