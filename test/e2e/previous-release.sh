#!/usr/bin/env bash
# Builds the previous release of jobhooks from git history, for the end-to-end tier's upgrade,
# version-skew and rollback scenarios (test/e2e/upgrade.e2e.ts), into the tier's cache, and
# reuses it on later runs: the commit's tree (git archive), its own npm ci and its own build,
# never the checkout's, so what answers is what users of that release run.
#
#   test/e2e/previous-release.sh   prints KEY=VALUE lines: RELEASE_DIR (the folder: package.json,
#                                  node_modules, dist/src/server.js), RELEASE_VERSION, RELEASE_COMMIT;
#                                  or SKIP=<why> when the commit is not in this clone (a shallow
#                                  one), and exits 0: the scenarios say they skipped and why.
#
# Settings: JOBHOOKS_E2E_CACHE (default $HOME/.cache/jobhooks-e2e), PREVIOUS_RELEASE_COMMIT.
set -euo pipefail

# 0.3.0 (no tag was made for it; 0.2.0 is commit a2d7027, 0.1.0 commit 236f866).
COMMIT=${PREVIOUS_RELEASE_COMMIT:-a84cf19}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${JOBHOOKS_E2E_CACHE:-$HOME/.cache/jobhooks-e2e}

log() { echo "previous-release: $*" >&2; }

if ! full=$(git -C "$REPO" rev-parse --verify --quiet "$COMMIT^{commit}"); then
  if [ "$(git -C "$REPO" rev-parse --is-shallow-repository 2>/dev/null)" = true ]; then
    echo "SKIP=commit $COMMIT (the previous release) is not in this shallow clone: git fetch --unshallow to run the upgrade scenarios"
  else
    echo "SKIP=commit $COMMIT (the previous release) is not in this clone's history"
  fi
  exit 0
fi
version=$(git -C "$REPO" show "$full:package.json" | node -e 'let s = ""; process.stdin.on("data", d => { s += d }).on("end", () => console.log(JSON.parse(s).version))')
DIR="$CACHE/releases/$version-${full:0:7}"

# The marker is written last: a build cut short is built again from scratch.
if [ ! -f "$DIR/.built" ]; then
  log "building jobhooks $version ($full) in $DIR"
  rm -rf "$DIR"
  mkdir -p "$DIR"
  git -C "$REPO" archive "$full" | tar -x -C "$DIR"
  (cd "$DIR" && npm ci --no-audit --no-fund --loglevel=error >&2 && npx tsc -p tsconfig.build.json >&2)
  [ -f "$DIR/dist/src/server.js" ] || { log "the build of $version made no dist/src/server.js"; exit 1; }
  echo "$full" >"$DIR/.built"
fi

echo "RELEASE_DIR=$DIR"
echo "RELEASE_VERSION=$version"
echo "RELEASE_COMMIT=$full"
