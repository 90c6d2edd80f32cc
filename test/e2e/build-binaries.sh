#!/usr/bin/env bash
# Builds the real control plane the end-to-end tier runs against, from Go modules fetched through
# the Go module proxy, into a cache outside the repository, and reuses it on later runs.
# Nothing built or downloaded here is ever committed.
#
#   test/e2e/build-binaries.sh      prints KEY=VALUE lines: BIN, METACONTROLLER, METACONTROLLER_VERSION
#
# Settings: JOBHOOKS_E2E_CACHE (default $HOME/.cache/jobhooks-e2e), KUBE_VERSION, ETCD_VERSION,
# KWOK_VERSION, METACONTROLLER_VERSIONS (tried in order; see below).
#
# Metacontroller's module path is the bare `metacontroller`, so it is built through a replace
# directive pointing at github.com/metacontroller/metacontroller. v4.17.2 is commit 76b818bdc67b
# (pseudo-version v1.5.21-0.20260813213314-76b818bdc67b). The module proxy this project can
# reach refuses every v4 pseudo-version (403 "This module version is not available"); it serves
# v1.5.20, a real but older Metacontroller (no hook `version` field: it calls hooks with v1
# keying, which our hooks accept). The first version that builds is used, and the run says which.
set -euo pipefail

KUBE_VERSION=${KUBE_VERSION:-v1.36.3}
ETCD_VERSION=${ETCD_VERSION:-v3.6.16}
KWOK_VERSION=${KWOK_VERSION:-v0.8.0}
METACONTROLLER_VERSIONS=${METACONTROLLER_VERSIONS:-"v1.5.21-0.20260813213314-76b818bdc67b v1.5.20"}
CACHE=${JOBHOOKS_E2E_CACHE:-$HOME/.cache/jobhooks-e2e}
BIN="$CACHE/kube-$KUBE_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION/bin"
WORK="$CACHE/work"
mkdir -p "$BIN" "$WORK"
export CGO_ENABLED=0 GOFLAGS=-mod=mod

log() { echo "e2e-build: $*" >&2; }
have() { [ -x "$BIN/$1" ]; }

build_kube() {
  have kube-apiserver && have kube-controller-manager && have kube-scheduler && have kubectl && return
  local dir="$WORK/kube-$KUBE_VERSION" minor staging
  minor=${KUBE_VERSION#v1.}; minor=${minor%%.*}
  staging="v0.${KUBE_VERSION#v1.}"
  mkdir -p "$dir" && cd "$dir"
  [ -f go.mod ] || go mod init kubebuild >/dev/null 2>&1
  log "kubernetes $KUBE_VERSION: pinning its staging modules to $staging"
  local gomod
  gomod=$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  # k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them with local folders;
  # a dependent must replace them with the published versions itself.
  grep -oE '^\s*k8s\.io/[a-z0-9-]+ => \./staging' "$gomod" | awk '{print $1}' | sort -u | while read -r module; do
    go mod edit -replace "$module=$module@$staging"
  done
  go get "k8s.io/kubernetes@$KUBE_VERSION" >/dev/null
  local ldflags="" pkg
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags="$ldflags -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  done
  log "building kube-apiserver, kube-controller-manager, kube-scheduler, kubectl (the slow part)"
  go build -trimpath -ldflags "$ldflags" -o "$BIN/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl
}

build_etcd() {
  have etcd && return
  local dir="$WORK/etcd-$ETCD_VERSION"
  mkdir -p "$dir" && cd "$dir"
  [ -f go.mod ] || go mod init etcdbuild >/dev/null 2>&1
  go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >/dev/null
  log "building etcd $ETCD_VERSION"
  go build -trimpath -o "$BIN/etcd" go.etcd.io/etcd/server/v3
}

build_kwok() {
  have kwok && return
  log "building kwok $KWOK_VERSION"
  GOBIN="$BIN" go install "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
}

# Builds Metacontroller at one module version; fails (returns 1) when the proxy refuses it.
build_metacontroller() {
  local version=$1 out="$CACHE/metacontroller-$1/metacontroller"
  [ -x "$out" ] && { echo "$out"; return 0; }
  local dir="$WORK/metacontroller-$version" mod
  mkdir -p "$dir" && cd "$dir"
  [ -f go.mod ] || go mod init mcbuild >/dev/null 2>&1
  # The checksum database has no entry for a module whose go.mod names another path.
  export GONOSUMDB=github.com/metacontroller/metacontroller
  go mod edit -require metacontroller@v0.0.0-00010101000000-000000000000 \
    -replace "metacontroller=github.com/metacontroller/metacontroller@$version"
  mod=$(go mod download -json "github.com/metacontroller/metacontroller@$version" 2>/dev/null | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p') || true
  if [ -z "$mod" ] || [ ! -f "$mod" ]; then
    log "metacontroller $version: not available: $(go mod download "github.com/metacontroller/metacontroller@$version" 2>&1 | tr "\n\t" "  ")"
    return 1
  fi
  # Replace directives of a dependency do not apply to us: copy Metacontroller's own.
  sed -n '/^replace (/,/^)/p' "$mod" | grep '=>' | while read -r from _ to toversion; do
    go mod edit -replace "$from=$to@$toversion"
  done
  log "building metacontroller $version"
  mkdir -p "$(dirname "$out")"
  go build -trimpath -o "$out" metacontroller >&2 || return 1
  echo "$out"
}

start=$(date +%s)
build_etcd
build_kwok
build_kube
mc="" mcversion=""
for version in $METACONTROLLER_VERSIONS; do
  if mc=$(build_metacontroller "$version"); then mcversion=$version; break; fi
done
[ -n "$mc" ] || { log "no Metacontroller version could be built"; exit 1; }
log "binaries ready in $(( $(date +%s) - start ))s"
echo "BIN=$BIN"
echo "METACONTROLLER=$mc"
echo "METACONTROLLER_VERSION=$mcversion"
