#!/usr/bin/env bash
# npm run image: builds jobhooks:<version> from the Dockerfile with podman or docker (whichever
# answers; podman when both do, IMAGE_TOOL=docker|podman to choose), then prints the image, its
# size and the size of what it adds on top of its base (the budget is 60 MB).
#
# The base is node:22-bookworm-slim pinned by digest (NODE_IMAGE overrides it). When it cannot be
# pulled (no registry reachable), the script says so and assembles a local stand-in once
# (scripts/image-base.sh; docs/development.md, "Building the image"), then builds on that.
#
# Behind a TLS-inspecting proxy: BUILD_CA_FILE names the proxy's CA (it defaults to
# NODE_EXTRA_CA_CERTS when that is set); it reaches `npm ci` as a build secret, never a layer.
set -euo pipefail
cd "$(dirname "$0")/.."

# The multi-arch digest of node:22-bookworm-slim as Node 22.23.3 (the Dockerfile says more).
PINNED_BASE=node:22-bookworm-slim@sha256:43ac6c60b8f89723f746e8a92ce91abd5017e627ce1ddfe4238355d3a30b772c
NODE_IMAGE=${NODE_IMAGE:-$PINNED_BASE}
VERSION=$(node -p 'require("./package.json").version')
IMAGE=${IMAGE:-jobhooks:$VERSION}
# The label the budget test reads to tell the image's own layers from its base's.
BASE_LABEL=org.opencontainers.image.base.name

say() { echo "image: $*" >&2; }
started=$(date +%s)

choose_tool() {
  if [ -n "${IMAGE_TOOL:-}" ]; then echo "$IMAGE_TOOL"; return; fi
  if command -v podman >/dev/null && podman info >/dev/null 2>&1; then echo podman; return; fi
  if command -v docker >/dev/null && docker info >/dev/null 2>&1; then echo docker; return; fi
  say "neither podman nor docker can build here (podman info and docker info both fail)"
  exit 1
}

# Podman's defaults can fail on some hosts: crun where cgroups are hybrid, and a file-descriptor
# limit above the host's hard limit ("operation not permitted"). runc, when installed, and
# explicit limits within the host's work everywhere.
podman_args() {
  local hard_files hard_procs limit=20000
  hard_files=$(ulimit -Hn); hard_procs=$(ulimit -Hu)
  [ "$hard_files" != unlimited ] && [ "$hard_files" -lt "$limit" ] && limit=$hard_files
  [ "$hard_procs" != unlimited ] && [ "$hard_procs" -lt "$limit" ] && limit=$hard_procs
  if command -v runc >/dev/null; then echo "--runtime runc"; fi
  echo "--ulimit nofile=$limit:$limit --ulimit nproc=$limit:$limit"
}

# The pinned base if it is here or can be pulled; otherwise the local stand-in.
resolve_base() {
  if "$TOOL" image inspect "$NODE_IMAGE" >/dev/null 2>&1; then echo "$NODE_IMAGE"; return; fi
  say "pulling $NODE_IMAGE"
  if "$TOOL" pull "$NODE_IMAGE" >/dev/null 2>&1; then echo "$NODE_IMAGE"; return; fi
  say "cannot pull $NODE_IMAGE (no image registry reachable?): building on a local base instead,"
  say "assembled once from Debian's mirror and the npm registry (scripts/image-base.sh)"
  bash scripts/image-base.sh "$TOOL" | sed -n 's/^BASE_IMAGE=//p'
}

ca_args() {
  local ca=${BUILD_CA_FILE:-${NODE_EXTRA_CA_CERTS:-}}
  [ -n "$ca" ] || return 0
  [ -r "$ca" ] || { say "BUILD_CA_FILE (or NODE_EXTRA_CA_CERTS) names $ca, which cannot be read"; exit 1; }
  say "npm in the build trusts the extra CA $ca (a build secret, not in the image)"
  echo "--secret id=extra-ca,src=$ca"
}

megabytes() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1000000 }'; }

TOOL=$(choose_tool)
EXTRA=""
[ "$TOOL" = podman ] && EXTRA=$(podman_args)
BASE=$(resolve_base)
[ -n "$BASE" ] || { say "no base image to build on"; exit 1; }
say "building $IMAGE with $TOOL on $BASE"
export DOCKER_BUILDKIT=1
# shellcheck disable=SC2046 # the argument lists are words on purpose
"$TOOL" build $EXTRA $(ca_args) --build-arg "NODE_IMAGE=$BASE" --label "$BASE_LABEL=$BASE" \
  --tag "$IMAGE" --file Dockerfile .

size=$("$TOOL" image inspect --format '{{.Size}}' "$IMAGE")
base_size=$("$TOOL" image inspect --format '{{.Size}}' "$BASE")
echo "image: $IMAGE built with $TOOL in $(( $(date +%s) - started ))s"
echo "image: size $(megabytes "$size"), of which $(megabytes $((size - base_size))) on top of $BASE (budget 60 MB)"
