# syntax=docker/dockerfile:1
# The jobhooks image: the compiled service, its production dependencies and the shipped scripts
# (not the CLI or the simulator: they run from a clone).
#   npm run image   (scripts/image.sh: docker or podman, prints the image and its size)
#   docker build -t <registry>/jobhooks:0.3.0 .   (then set it in manifests/kustomization.yaml)
#
# The base, pinned: node:22-bookworm-slim@sha256:43ac6c60b8f89723f746e8a92ce91abd5017e627ce1ddfe4238355d3a30b772c
# is the multi-arch index digest public projects pin as node:22.23.3-bookworm-slim (the Node
# version CI runs). Build with --build-arg NODE_IMAGE=<that reference> for a reproducible base;
# the tag alone follows Node 22's patch releases.
ARG NODE_IMAGE=node:22-bookworm-slim

# Behind a TLS-inspecting proxy, npm needs the proxy's CA: pass it as the build secret
# `extra-ca` (--secret id=extra-ca,src=<file>, docker and podman alike), and the steps that run
# npm point NODE_EXTRA_CA_CERTS at it. A secret is mounted for one RUN only and never lands in a
# layer; no CA is ever copied into the image.

# 1. Compile TypeScript with every dependency installed.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=secret,id=extra-ca,required=false \
    if [ -f /run/secrets/extra-ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/extra-ca; fi && \
    npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/wasm.mjs ./scripts/
COPY src ./src
# npm run build: tsc, then the accelerated skip compiled from src/protocol/skip.wat by wabt (a
# devDependency, installed in this stage only) into dist/src/protocol/skip.wasm, beside the
# JavaScript that loads it. The server only: the CLI and the simulator (npm run simulate, from a
# clone) stay out, and `yaml`, which only they import, is removed in stage 2.
RUN npm run build && rm -rf dist/src/cli dist/src/simulator dist/bench

# 2. Production dependencies only, without what Node never loads: `yaml` (a dependency of the CLI
# and the simulator, which stage 1 left out), type declarations and source maps (about half of
# @kubernetes/client-node), and the packages' own tests, fixtures and benchmarks (the image holds
# no test files, ours or theirs).
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=secret,id=extra-ca,required=false \
    if [ -f /run/secrets/extra-ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/extra-ca; fi && \
    npm ci --omit=dev --no-audit --no-fund && npm cache clean --force && rm -rf node_modules/yaml && \
    find node_modules -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' \
      -o -name '*.test.*' -o -name '*.spec.*' -o -name '*.bench.*' \) -delete && \
    find node_modules -depth -type d \( -name test -o -name tests -o -name __tests__ -o -name spec -o -name specs \
      -o -name fixtures -o -name bench -o -name benchmark -o -name benchmarks \) -exec rm -rf {} +

# 3. Runtime. Files stay owned by root and read-only for the `node` user (uid 1000) that runs
# the server, which also suits readOnlyRootFilesystem in the Deployment.
FROM ${NODE_IMAGE} AS runtime
# An image runs where the service must be reached from outside its own network namespace (the
# Service, the probes): every interface, whatever the default outside a cluster.
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080
WORKDIR /app
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The server finds hooks/ next to package.json, by walking up from its own module.
COPY package.json ./
COPY hooks ./hooks
USER node
EXPOSE 8080
# A larger young generation: a hook request of several MB then dies young instead of being
# copied into the old generation on every minor GC (npm run bench measures the difference).
CMD ["node", "--max-semi-space-size=64", "dist/src/server.js"]
