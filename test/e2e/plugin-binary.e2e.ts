// The single-file plugin as a user gets it (npm run plugin:build; docs/cli.md, "Install"): built
// for every platform, its krew manifest holding each archive's sha256, and the linux-x64 archive
// unpacked into an empty folder and run there with no node_modules and no Node on the PATH:
// version, simulate, validate, and get and ui against the real tier.
import t from 'tap'
import { createHash } from 'node:crypto'
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse } from 'yaml'
import { apply, ROOT } from './cluster.js'
import { run } from './processes.js'
import { jobFlowExample, startScenarios, waitForStatusOf } from './scenario.js'
import { startUiProcess } from './ui-process.js'

const built = await run(process.execPath, [join(ROOT, 'scripts', 'plugin-build.mjs')])
if (built.code !== 0) throw new Error(`npm run plugin:build: exit ${built.code}\n${built.stderr}`)

const { cluster, namespace, getJson } = await startScenarios(t)
const folder = mkdtempSync(join(tmpdir(), 'jobhooks-plugin-'))
t.teardown(() => rmSync(folder, { recursive: true, force: true }))
const archive = join(ROOT, 'dist', 'plugin', 'kubectl-jobhooks-linux-amd64.tar.gz')
const unpacked = await run('tar', ['-xzf', archive, '-C', folder])
if (unpacked.code !== 0) throw new Error(`tar: ${unpacked.stderr}`)

/** Only the folder on the PATH: no node, no npm, nothing of the clone. */
const env = { PATH: folder, HOME: folder }
const plugin = async (...args: string[]): Promise<Awaited<ReturnType<typeof run>>> =>
  await run(join(folder, 'kubectl-jobhooks'), args, { env })

t.test('the krew manifest names every archive by its sha256', async t => {
  const manifest = parse(readFileSync(join(ROOT, 'plugins', 'jobhooks.yaml'), 'utf8'))
  t.equal(manifest.kind, 'Plugin')
  const arches = manifest.spec.platforms.map((p: any) => p.selector.matchLabels.arch)
  t.same(arches, ['amd64', 'arm64'])
  for (const platform of manifest.spec.platforms) {
    const file = join(ROOT, 'dist', 'plugin', platform.uri.split('/').at(-1))
    const sha256 = createHash('sha256').update(readFileSync(file)).digest('hex')
    t.equal(platform.sha256, sha256, `${platform.selector.matchLabels.arch}: the archive's sha256`)
    t.equal(platform.bin, 'kubectl-jobhooks')
  }
  const listed = await run('tar', ['-tzf', archive])
  t.same(listed.stdout.trim().split('\n').sort(), ['LICENSE', 'kubectl-jobhooks'], 'the executable and its license')
})

t.test('from an empty folder with no Node: version, simulate and validate', async t => {
  t.notOk(existsSync(join(folder, 'node')) || existsSync(join(folder, 'node_modules')), 'nothing but the archive')
  const version = await plugin('version')
  t.equal(version.code, 0, version.stderr)
  t.match(version.stdout, /^kubectl-jobhooks \d+\.\d+\.\d+ \(single executable, Node v22\.\d+\.\d+, linux\/x64\)\n$/)

  copyFileSync(join(ROOT, 'manifests', 'examples', 'jobflow.yaml'), join(folder, 'flow.yaml'))
  const simulated = await plugin('simulate', '-f', join(folder, 'flow.yaml'), '-o', 'json')
  t.equal(simulated.code, 0, simulated.stderr)
  const played = JSON.parse(simulated.stdout)
  t.match(played.objects, [{ kind: 'JobFlow', status: { phase: 'Succeeded' } }],
    'played to the end, a JSON document alone')

  const valid = await plugin('validate', '-f', join(folder, 'flow.yaml'))
  t.same(valid, { code: 0, stdout: 'jobflow.jobhooks.io/jobflow-example valid\n', stderr: '' })
  const misspelled = readFileSync(join(folder, 'flow.yaml'), 'utf8').replace(/\bdependencies:/, 'dependecies:')
  const broken = join(folder, 'broken.yaml')
  writeFileSync(broken, misspelled)
  const refused = await plugin('validate', '-f', broken)
  t.equal(refused.code, 1)
  t.match(refused.stderr, 'unknown field "spec.flows[0].dependecies"')
})

t.test('get against the real tier', async t => {
  const ns = await namespace('plugin-binary')
  await apply(cluster.kubectl, JSON.stringify(jobFlowExample(cluster)), ns)
  await waitForStatusOf(getJson, 'jobflow', ns, 'jobflow-example', 'Succeeded', s => s.phase === 'Succeeded', 180_000)
  const listed = await plugin('get', 'jf', '-n', ns, '--kubeconfig', cluster.kubeconfig)
  t.equal(listed.code, 0, listed.stderr)
  t.match(listed.stdout, /^NAME +STATUS +JOBS .*\njobflow-example +Succeeded +5\/5 /)
  const tree = await plugin('get', 'jf', 'jobflow-example', '-n', ns, '--kubeconfig', cluster.kubeconfig)
  t.equal(tree.code, 0, tree.stderr)
  t.match(tree.stdout, /^Name: +jobflow-example\n/)
  t.match(tree.stdout, /\njob1 +- +Succeeded +1 +jobflow-example-job1 /)
})

t.test('ui against the real tier: the page\'s files from the executable, a JobFlow listed', async t => {
  const ns = await namespace('plugin-binary-ui')
  await apply(cluster.kubectl, JSON.stringify(jobFlowExample(cluster)), ns)
  const { origin, token, interrupt } = await startUiProcess(t, join(folder, 'kubectl-jobhooks'),
    ['ui', '-n', ns, '--kubeconfig', cluster.kubeconfig], env)
  for (const path of ['/', '/ui.js', '/ui.css']) t.equal((await fetch(`${origin}${path}`)).status, 200, path)
  const stream = await fetch(`${origin}/api/stream/list?token=${token}`)
  const reader = stream.body?.getReader()
  let text = ''
  while (!text.includes('"name":"jobflow-example"')) {
    const { value, done } = await reader?.read() ?? { done: true }
    if (done === true) break
    text += Buffer.from(value as Uint8Array).toString('utf8')
  }
  await reader?.cancel()
  t.match(text, /event: list\ndata: \{"kind":"JobFlow"[^\n]*"name":"jobflow-example"/, 'the list streamed')
  t.equal(await interrupt(), 0, 'Ctrl-C ends it quietly')
})
