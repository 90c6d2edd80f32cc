// `kubectl jobhooks get jf` of a JobFlow that runs JobFlowTemplates: the templates come from the
// ConfigMap the JobFlow pinned them in, read with its two labels, and each group's steps show
// under it (the tree, indented; the page, in a frame). Without that ConfigMap, or without leave to
// read ConfigMaps, a group shows as one step. manifests/examples/jobflow-template.yaml, played to
// its end by the simulator, is the JobFlow.
import t, { type Test } from 'tap'
import type { KubeObject } from '../../../src/k8s/types.js'
import { Simulator } from '../../../src/simulator/simulator.js'
import { jobflowController, JOBHOOKS_API_VERSION } from '../../../src/simulator/controllers.js'
import { exampleObjects } from '../../helpers/example-promises.js'
import { plugin } from '../../helpers/plugin.js'
import { chosenRecord } from '../../../src/cli/kubectl/logs.js'

/** The table's rows from its header, cut to STEP, AFTER, PHASE, ATTEMPT and JOB, indentation kept. */
function treeRows (out: string): string[][] {
  const lines = out.trimEnd().split('\n')
  const table = lines.slice(lines.findIndex(l => l.startsWith('STEP ')))
  return table.map(l => l.trimEnd().split(/(?<=\S) {2,}/).slice(0, 5))
}

/** The example played to its end in team-a: its JobFlow and the ConfigMap pinning build-test. */
async function finished (t: Test): Promise<{ flow: KubeObject, pins: KubeObject[] }> {
  const sim = new Simulator({ controllers: [jobflowController('v2')], jobs: { durationSeconds: 10 } })
  t.teardown(async () => await sim.close())
  for (const object of exampleObjects('jobflow-template.yaml') as KubeObject[]) {
    sim.apply({ ...object, metadata: { ...object.metadata, namespace: 'team-a' } })
  }
  await sim.runUntilQuiet()
  const [flow] = sim.list({ apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow' }, 'team-a')
  return { flow: flow as KubeObject, pins: sim.list({ apiVersion: 'v1', kind: 'ConfigMap' }, 'team-a') }
}

const PINS_QUERY = '/api/v1/namespaces/team-a/configmaps?labelSelector=' +
  encodeURIComponent('jobhooks.io/jobflow=jobflow-template,jobhooks.io/pinned=jobflowtemplates')

t.test('get jf <name>: a template group\'s steps indented under it, in their own dependency order', async t => {
  const { flow, pins } = await finished(t)
  t.equal(pins.length, 1, 'the simulated hook pinned the template')
  const { run, fake } = await plugin(t, [flow, ...pins])
  const { code, out, err } = await run(['get', 'jf', 'jobflow-template'])
  t.equal(code, 0)
  t.equal(err, '')
  const job = (step: string): string => `jobflow-template-${step}`
  t.same(treeRows(out), [
    ['STEP', 'AFTER', 'PHASE', 'ATTEMPT', 'JOB'],
    ['linux', '-', 'Succeeded', '1', '(group)'],
    ['  linux.compile', '-', 'Succeeded', '1', job('linux.compile')],
    ['    linux.unit', 'compile', 'Succeeded', '1', job('linux.unit')],
    ['    linux.lint', 'compile', 'Succeeded', '1', job('linux.lint')],
    ['      linux.package', 'unit, lint', 'Succeeded', '1', job('linux.package')],
    ['  mac', 'linux', 'Succeeded', '1', '(group)'],
    ['    mac.compile', '-', 'Succeeded', '1', job('mac.compile')],
    ['      mac.unit', 'compile', 'Succeeded', '1', job('mac.unit')],
    ['      mac.lint', 'compile', 'Succeeded', '1', job('mac.lint')],
    ['        mac.package', 'unit, lint', 'Skipped', '1', job('mac.package')],
    ['    release', 'mac', 'Succeeded', '1', job('release')]
  ], 'a group\'s steps a level under it, after what their template names; the group runs no Job of its own')
  t.same(fake.requests.map(r => r.url), [
    '/apis/jobhooks.io/v1alpha1/namespaces/team-a/jobflows/jobflow-template', PINS_QUERY
  ], 'the JobFlow, then its pinned templates by the ConfigMap\'s two labels')
})

t.test('get jf <name>: without the pinned templates, or leave to read them, a group is one step', async t => {
  const { flow, pins } = await finished(t)
  const plain = [
    ['STEP', 'AFTER', 'PHASE', 'ATTEMPT', 'JOB'],
    ['linux', '-', 'Succeeded', '1', '(group)'],
    ['  mac', 'linux', 'Succeeded', '1', '(group)'],
    ['    release', 'mac', 'Succeeded', '1', 'jobflow-template-release']
  ]
  const bare = await plugin(t, [flow])
  t.same(treeRows((await bare.run(['get', 'jf', 'jobflow-template'])).out), plain, 'no ConfigMap')
  const denied = await plugin(t, [flow, ...pins])
  denied.fake.deny = (_method, url) => url.includes('/configmaps')
  const { code, out, err } = await denied.run(['get', 'jf', 'jobflow-template'])
  t.equal(code, 0)
  t.equal(err, '')
  t.same(treeRows(out), plain, 'ConfigMaps forbidden')
})

t.test('get jf -o html: a template group framed round its steps, for one JobFlow and for the list', async t => {
  const { flow, pins } = await finished(t)
  const { status: _, ...spec } = flow
  const other = { ...spec, metadata: { ...flow.metadata, name: 'other', uid: 'other' } }
  const { run, fake } = await plugin(t, [flow, other, ...pins])
  let list = ''
  for (const argv of [['get', 'jf', 'jobflow-template', '-o', 'html'], ['get', 'jf', '-o', 'html']]) {
    const { code, out } = await run(argv)
    t.equal(code, 0)
    t.match(out, /<g class="group" data-group="linux" data-template="build-test"/, argv.join(' '))
    t.match(out, /<g class="step" data-step="mac\.package" data-phase="Skipped">/)
    list = out
  }
  const drawn = /<section class="jobflow" data-jobflow="other">.*?<\/section>/s.exec(list)?.[0] ?? ''
  t.match(drawn, /<g class="step" data-step="linux" data-phase="Pending">/, 'a JobFlow that pinned nothing yet…')
  t.notMatch(drawn, /data-group=/, '…draws its groups as steps, not with another JobFlow\'s templates')
  t.same(fake.requests.map(r => r.url).filter(url => url.includes('/configmaps')), [
    PINS_QUERY,
    `/api/v1/namespaces/team-a/configmaps?labelSelector=${encodeURIComponent('jobhooks.io/pinned=jobflowtemplates')}`
  ], 'the list reads the pins of every JobFlow at once, each JobFlow\'s its own')
})

t.test('logs takes a group\'s step by its full name, which only the records hold', async t => {
  const { flow } = await finished(t)
  t.match(chosenRecord(flow, 'linux.unit'), { name: 'linux.unit', jobName: 'jobflow-template-linux.unit' })
  t.throws(() => chosenRecord(flow, 'linux.nope'), /has no step "linux.nope" \(steps: .*linux\.unit/)
})
