#!/usr/bin/env bash
# Builds the real control plane the end-to-end tier runs against into a cache outside the
# repository, and reuses it on later runs: etcd, Kubernetes and kwok from Go modules fetched
# through the Go module proxy, Metacontroller v4.17.2 from its source archive (see below).
# Nothing built, downloaded or extracted here is ever committed.
#
#   test/e2e/build-binaries.sh      prints KEY=VALUE lines: BIN, METACONTROLLER,
#                                   METACONTROLLER_VERSION, METACONTROLLER_CRDS, HELM, KUEUE,
#                                   KUEUE_VERSION, KUEUE_MANIFESTS, ARGO_VERSION, and ARGO and
#                                   ARGO_CRDS, or ARGO_SKIPPED (why Argo could not be built)
#
# Settings: JOBHOOKS_E2E_CACHE (default $HOME/.cache/jobhooks-e2e), KUBE_VERSION, ETCD_VERSION,
# KWOK_VERSION, HELM_VERSION, KUEUE_VERSION, ARGO_VERSION, METACONTROLLER_SRC,
# METACONTROLLER_SHA256, E2E_ARGO (see build_argo).
#
# Helm (for the chart's tests: lint, template, install), Kueue (cmd/kueue, for the scenarios
# of test/e2e/kueue.e2e.ts) and Argo's workflow controller (for test/e2e/argo-controller.e2e.ts)
# are built from their Go modules too.
#
# Metacontroller v4.17.2 (tag v4.17.2, commit 76b818bdc67b) comes from, in this order:
#   1. METACONTROLLER_SRC: a .tar.gz of its source tree (its sha256 is printed, and checked when
#      METACONTROLLER_SHA256 is set) or a folder holding the unpacked tree (not checked);
#   2. ../shared/third_party/metacontroller-v4.17.2.tar.gz beside the repository, which must
#      have the sha256 below;
#   3. the Go module proxy, as anyone can build it: its module path is the bare `metacontroller`,
#      so it is required through a replace directive pointing at the pseudo-version of that
#      commit. Some proxies refuse every v4 version (403 "This module version is not
#      available"): then use 1. or 2.
# There is no fallback to another version: the tier runs v4.17.2 or not at all.
set -euo pipefail

KUBE_VERSION=${KUBE_VERSION:-v1.36.3}
ETCD_VERSION=${ETCD_VERSION:-v3.6.16}
KWOK_VERSION=${KWOK_VERSION:-v0.8.0}
HELM_VERSION=${HELM_VERSION:-v3.22.0}
KUEUE_VERSION=${KUEUE_VERSION:-v0.17.0}
ARGO_VERSION=${ARGO_VERSION:-v4.0.5}
METACONTROLLER_VERSION=v4.17.2
METACONTROLLER_PSEUDO_VERSION=v1.5.21-0.20260813213314-76b818bdc67b
METACONTROLLER_ARCHIVE_SHA256=a0e15fd8813af99127f00f30853bc05cf72fa6ae4e0ae8d57e2a79c3671ed65f
REPO=$(cd "$(dirname "$0")/../.." && pwd)
DEFAULT_ARCHIVE="$(cd "$REPO/.." && pwd)/shared/third_party/metacontroller-$METACONTROLLER_VERSION.tar.gz"
CACHE=${JOBHOOKS_E2E_CACHE:-$HOME/.cache/jobhooks-e2e}
BIN="$CACHE/kube-$KUBE_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION/bin"
WORK="$CACHE/work"
mkdir -p "$BIN" "$WORK"
# Metacontroller's own source builds with the caller's Go flags; the module builds below resolve
# their dependencies as they go.
CALLER_GOFLAGS=${GOFLAGS:-}
export CGO_ENABLED=0 GOFLAGS=-mod=mod

log() { echo "e2e-build: $*" >&2; }
die() { log "$*"; exit 1; }
have() { [ -x "$BIN/$1" ]; }

sha256() {
  if command -v sha256sum >/dev/null; then sha256sum "$1" | awk '{print $1}'
  else shasum -a 256 "$1" | awk '{print $1}'; fi
}

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

build_helm() {
  local dir="$CACHE/helm-$HELM_VERSION"
  [ -x "$dir/helm" ] && return
  log "building helm $HELM_VERSION"
  mkdir -p "$dir"
  # Built from the module, helm would call itself "v3.22" without its patch version.
  GOBIN="$dir" go install -trimpath -ldflags "-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
}

# Kueue's binary and its own manifests: config/default rendered by kubectl's kustomize, as
# Kueue's release renders it. One change: cmd/kueue reads its metrics certificate from a fixed
# /etc/kueue/metrics/certs (where its Deployment mounts it) unless it manages its own certificates;
# the tier has no such mount, so its main.go is built from a copy where KUEUE_METRICS_CERT_DIR may
# name another folder. Every other package is the module's own.
build_kueue() {
  local dir="$CACHE/kueue-$KUEUE_VERSION" work="$WORK/kueue-$KUEUE_VERSION" info moddir
  [ -x "$dir/kueue" ] && [ -f "$dir/manifests.yaml" ] && return
  log "building kueue $KUEUE_VERSION"
  mkdir -p "$dir" "$work/cmd/kueue" && cd "$work"
  [ -f go.mod ] || go mod init kueuebuild >/dev/null 2>&1
  go get "sigs.k8s.io/kueue@$KUEUE_VERSION" >/dev/null || die "kueue $KUEUE_VERSION: go get failed"
  info=$(go mod download -json "sigs.k8s.io/kueue@$KUEUE_VERSION") || die "kueue $KUEUE_VERSION: go mod download failed"
  moddir=$(sed -n 's/.*"Dir": "\(.*\)".*/\1/p' <<<"$info")
  local fixed='metricsCertPath := "/etc/kueue/metrics/certs"'
  local settable='metricsCertPath := os.Getenv("KUEUE_METRICS_CERT_DIR"); if metricsCertPath == "" {'
  settable="$settable metricsCertPath = \"/etc/kueue/metrics/certs\" }"
  grep -qF "$fixed" "$moddir/cmd/kueue/main.go" || die "kueue $KUEUE_VERSION: cmd/kueue/main.go has no $fixed"
  sed "s|$fixed|$settable|" "$moddir/cmd/kueue/main.go" >cmd/kueue/main.go
  go build -trimpath -ldflags "-X sigs.k8s.io/kueue/pkg/version.GitVersion=$KUEUE_VERSION" \
    -o "$dir/kueue.new" ./cmd/kueue || die "kueue $KUEUE_VERSION: go build failed in $work"
  rm -rf "$dir/config" && cp -r "$moddir/config" "$dir/config" && chmod -R u+w "$dir/config"
  "$BIN/kubectl" kustomize "$dir/config/default" >"$dir/manifests.yaml.new" ||
    die "kueue $KUEUE_VERSION: kustomize failed"
  mv -f "$dir/kueue.new" "$dir/kueue" && mv -f "$dir/manifests.yaml.new" "$dir/manifests.yaml"
}

# Argo Workflows' workflow controller (cmd/workflow-controller, for test/e2e/argo-controller.e2e.ts),
# built from its module in a throwaway module that requires it, with the version Argo's Makefile
# links in, and its CRDs as the module ships them (manifests/base/crds/minimal, the ones Argo's
# quick-start installs). Unlike the rest, never fatal: when it cannot be built, ARGO_SKIPPED says
# why and only the Argo scenarios are skipped. Its Go builds run at the lowest priority.
# A cold build takes about 10 minutes on 2 cores, which a cold CI run cannot spare: it is built only
# when E2E_ARGO=build; otherwise (E2E_ARGO unset) a build already in the cache is used and a machine
# without one skips the Argo scenarios, saying so.
E2E_ARGO=${E2E_ARGO:-cached}
argo_bin="" argo_crds="" argo_skipped=""
build_argo() {
  local dir="$CACHE/argo-$ARGO_VERSION" work="$WORK/argo-$ARGO_VERSION" info moddir err
  local module=github.com/argoproj/argo-workflows/v4
  argo_bin="$dir/workflow-controller" argo_crds="$dir/crds"
  [ -x "$argo_bin" ] && [ -f "$argo_crds/argoproj.io_workflows.yaml" ] && return
  if [ "$E2E_ARGO" != build ]; then
    argo_skipped="Argo's workflow controller $ARGO_VERSION is not in the cache; E2E_ARGO=build builds it (about 10 min cold)"
    return
  fi
  log "building argo workflow-controller $ARGO_VERSION"
  mkdir -p "$dir" "$work" && cd "$work"
  [ -f go.mod ] || go mod init argobuild >/dev/null 2>&1
  if ! err=$(nice -n 19 go get "$module@$ARGO_VERSION" 2>&1); then
    argo_skipped="go get $module@$ARGO_VERSION failed: $(tr '\n\t' '  ' <<<"$err")"; return
  fi
  info=$(go mod download -json "$module@$ARGO_VERSION" 2>/dev/null) || true
  moddir=$(sed -n 's/.*"Dir": "\(.*\)".*/\1/p' <<<"$info")
  if [ -z "$moddir" ] || [ ! -d "$moddir/manifests/base/crds/minimal" ]; then
    argo_skipped="$module@$ARGO_VERSION has no manifests/base/crds/minimal"; return
  fi
  if ! err=$(nice -n 19 go build -trimpath -ldflags "-X $module.version=$ARGO_VERSION" \
    -o "$argo_bin.new" "$module/cmd/workflow-controller" 2>&1); then
    argo_skipped="go build of $module/cmd/workflow-controller failed in $work: $(tail -c 800 <<<"$err" |
      tr '\n\t' '  ')"; return
  fi
  rm -rf "$argo_crds" && mkdir -p "$argo_crds"
  cp "$moddir"/manifests/base/crds/minimal/argoproj.io_*.yaml "$argo_crds/"
  chmod -R u+w "$argo_crds" && mv -f "$argo_bin.new" "$argo_bin"
}

# The results of the Metacontroller build: the binary and the CRDs of the source it came from.
mc="" mc_crds="" mc_from=""

# Checks that `$1` is a Metacontroller source tree with what the tier needs.
check_tree() {
  [ -f "$1/go.mod" ] && grep -qE '^module metacontroller$' "$1/go.mod" && [ -d "$1/pkg/cmd/metacontroller" ] ||
    die "$2 is not a Metacontroller source tree (no go.mod of module metacontroller with pkg/cmd/metacontroller)"
  [ -f "$1/manifests/production/metacontroller-crds-v1.yaml" ] ||
    die "$2 has no manifests/production/metacontroller-crds-v1.yaml"
}

# Builds `$1/pkg/cmd/metacontroller` into `$2` (reused when there, unless `$3` is "always": a
# folder may have changed since; Go's build cache keeps that rebuild short).
build_tree() {
  local src=$1 out=$2 when=${3:-once}
  mc="$out" mc_crds="$src/manifests/production/metacontroller-crds-v1.yaml"
  [ "$when" != always ] && [ -x "$out" ] && { log "metacontroller $METACONTROLLER_VERSION: reusing $out"; return; }
  log "building metacontroller $METACONTROLLER_VERSION from $mc_from"
  mkdir -p "$(dirname "$out")"
  # Always: straight into place, where Go leaves a binary that is up to date as it is. Once:
  # through a temporary name, so that an interrupted build leaves nothing to reuse.
  local target=$out
  [ "$when" = always ] || target="$out.new"
  (cd "$src" && GOFLAGS="$CALLER_GOFLAGS" go build -trimpath -o "$target" ./pkg/cmd/metacontroller >&2) ||
    die "metacontroller $METACONTROLLER_VERSION: go build failed in $src"
  [ "$target" = "$out" ] || mv -f "$target" "$out"
}

# Extracts archive `$1` (sha256 `$2`) into the cache once, then builds it.
build_archive() {
  local archive=$1 sum=$2 tag=${2:0:12}
  local src="$CACHE/src/metacontroller-$METACONTROLLER_VERSION-$tag"
  if [ ! -f "$src/.extracted" ]; then
    log "extracting $archive into $src"
    rm -rf "$src" "$src.partial" && mkdir -p "$src.partial"
    tar -xzf "$archive" -C "$src.partial" || die "could not extract $archive"
    # An archive may hold the tree itself (git archive) or one folder with it.
    local top
    if [ ! -f "$src.partial/go.mod" ] && [ "$(find "$src.partial" -mindepth 1 -maxdepth 1 | wc -l)" -eq 1 ]; then
      top=$(find "$src.partial" -mindepth 1 -maxdepth 1)
      mv "$top" "$src" && rmdir "$src.partial"
    else
      mv "$src.partial" "$src"
    fi
    check_tree "$src" "$archive"
    echo "$sum" >"$src/.extracted"
  fi
  check_tree "$src" "$archive"
  build_tree "$src" "$CACHE/metacontroller-$METACONTROLLER_VERSION-$tag/metacontroller"
}

# Builds v4.17.2 through the module proxy; fails with the proxy's answer when it is refused.
build_from_proxy() {
  local version=$METACONTROLLER_PSEUDO_VERSION tag=${METACONTROLLER_PSEUDO_VERSION##*-}
  local out="$CACHE/metacontroller-$METACONTROLLER_VERSION-$tag/metacontroller"
  local dir="$WORK/metacontroller-$version" info mod moddir
  mc_from="github.com/metacontroller/metacontroller@$version (commit $tag) through the Go module proxy"
  mkdir -p "$dir" && cd "$dir"
  [ -f go.mod ] || go mod init mcbuild >/dev/null 2>&1
  # The checksum database has no entry for a module whose go.mod names another path.
  export GONOSUMDB=github.com/metacontroller/metacontroller
  go mod edit -require metacontroller@v0.0.0-00010101000000-000000000000 \
    -replace "metacontroller=github.com/metacontroller/metacontroller@$version"
  info=$(go mod download -json "github.com/metacontroller/metacontroller@$version" 2>/dev/null) || true
  mod=$(sed -n 's/.*"GoMod": "\(.*\)".*/\1/p' <<<"$info")
  moddir=$(sed -n 's/.*"Dir": "\(.*\)".*/\1/p' <<<"$info")
  if [ -z "$mod" ] || [ ! -f "$mod" ] || [ -z "$moddir" ]; then
    log "Metacontroller $METACONTROLLER_VERSION could not be built: no source archive at $DEFAULT_ARCHIVE, METACONTROLLER_SRC is not set, and the Go module proxy ($(go env GOPROXY)) refuses github.com/metacontroller/metacontroller@$version: $(go mod download "github.com/metacontroller/metacontroller@$version" 2>&1 | tr "\n\t" "  ")"
    die "set METACONTROLLER_SRC to a .tar.gz or an unpacked folder of its source (github.com/metacontroller/metacontroller, tag $METACONTROLLER_VERSION), or put the archive at $DEFAULT_ARCHIVE"
  fi
  mc="$out" mc_crds="$moddir/manifests/production/metacontroller-crds-v1.yaml"
  [ -f "$mc_crds" ] || die "$mc_from has no manifests/production/metacontroller-crds-v1.yaml"
  [ -x "$out" ] && { log "metacontroller $METACONTROLLER_VERSION: reusing $out"; return; }
  # Replace directives of a dependency do not apply to us: copy Metacontroller's own.
  sed -n '/^replace (/,/^)/p' "$mod" | grep '=>' | while read -r from _ to toversion; do
    go mod edit -replace "$from=$to@$toversion"
  done
  log "building metacontroller $METACONTROLLER_VERSION from $mc_from"
  mkdir -p "$(dirname "$out")"
  go build -trimpath -o "$out.new" metacontroller >&2 || die "metacontroller $METACONTROLLER_VERSION: go build failed in $dir"
  mv -f "$out.new" "$out"
}

build_metacontroller() {
  local src=${METACONTROLLER_SRC:-} sum
  if [ -n "$src" ]; then
    if [ -d "$src" ]; then
      src=$(cd "$src" && pwd)
      mc_from="the folder $src (METACONTROLLER_SRC; not checked: it must hold $METACONTROLLER_VERSION)"
      check_tree "$src" "METACONTROLLER_SRC=$src"
      # Built in place, into a binary named after the folder: a folder may change, so it is
      # rebuilt every run.
      build_tree "$src" "$CACHE/metacontroller-$METACONTROLLER_VERSION-dir-$(printf %s "$src" | cksum | awk '{print $1}')/metacontroller" always
    elif [ -f "$src" ]; then
      case $src in *.tar.gz | *.tgz) ;; *) die "METACONTROLLER_SRC=$src is neither a folder nor a .tar.gz" ;; esac
      sum=$(sha256 "$src")
      log "METACONTROLLER_SRC=$src: sha256 $sum"
      if [ -n "${METACONTROLLER_SHA256:-}" ] && [ "$sum" != "$METACONTROLLER_SHA256" ]; then
        die "refusing METACONTROLLER_SRC=$src: its sha256 is $sum, METACONTROLLER_SHA256 says $METACONTROLLER_SHA256"
      fi
      mc_from="$src (METACONTROLLER_SRC, sha256 $sum${METACONTROLLER_SHA256:+, as METACONTROLLER_SHA256 says})"
      build_archive "$src" "$sum"
    else
      die "METACONTROLLER_SRC=$src does not exist"
    fi
  elif [ -f "$DEFAULT_ARCHIVE" ]; then
    sum=$(sha256 "$DEFAULT_ARCHIVE")
    [ "$sum" = "$METACONTROLLER_ARCHIVE_SHA256" ] ||
      die "refusing $DEFAULT_ARCHIVE: its sha256 is $sum, not $METACONTROLLER_ARCHIVE_SHA256 (the git archive of Metacontroller $METACONTROLLER_VERSION); replace it, or set METACONTROLLER_SRC"
    mc_from="$DEFAULT_ARCHIVE (sha256 $sum, checked)"
    build_archive "$DEFAULT_ARCHIVE" "$sum"
  else
    log "no source archive at $DEFAULT_ARCHIVE and no METACONTROLLER_SRC: trying the Go module proxy"
    build_from_proxy
  fi
}

start=$(date +%s)
# Metacontroller first: a wrong archive is refused before the long Kubernetes build.
build_metacontroller
build_etcd
build_kwok
build_kube
build_helm
kueue_start=$(date +%s)
build_kueue
log "kueue $KUEUE_VERSION ready in $(( $(date +%s) - kueue_start ))s"
argo_start=$(date +%s)
build_argo
if [ -n "$argo_skipped" ]; then log "argo $ARGO_VERSION skipped: $argo_skipped"
else log "argo $ARGO_VERSION ready in $(( $(date +%s) - argo_start ))s"; fi
log "binaries ready in $(( $(date +%s) - start ))s; metacontroller $METACONTROLLER_VERSION from $mc_from"
echo "BIN=$BIN"
echo "METACONTROLLER=$mc"
echo "METACONTROLLER_VERSION=$METACONTROLLER_VERSION"
echo "METACONTROLLER_CRDS=$mc_crds"
echo "HELM=$CACHE/helm-$HELM_VERSION/helm"
echo "KUEUE=$CACHE/kueue-$KUEUE_VERSION/kueue"
echo "KUEUE_VERSION=$KUEUE_VERSION"
echo "KUEUE_MANIFESTS=$CACHE/kueue-$KUEUE_VERSION/manifests.yaml"
echo "ARGO_VERSION=$ARGO_VERSION"
if [ -n "$argo_skipped" ]; then echo "ARGO_SKIPPED=$argo_skipped"
else echo "ARGO=$argo_bin"; echo "ARGO_CRDS=$argo_crds"; fi
