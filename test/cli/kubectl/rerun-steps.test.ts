// `kubectl jobhooks rerun jf <name> --step S`: one merge patch with the rerun value and the steps
// it starts from, steps the flow does not have refused before anything is sent, and a plain rerun
// that removes the steps an earlier one left.
import t from 'tap'
import type { KubeObject } from '../../../src/k8s/types.js'
import { NOW, plugin, runningFlow } from '../../helpers/plugin.js'

const FLOW_PATH = '/apis/jobhooks.io/v1alpha1/namespaces/team-a/jobflows/jobflow-example'
const VALUE = String(NOW.getTime() / 1000)

function finishedFlow (annotations: Record<string, string> = {}): KubeObject {
  const flow = runningFlow()
  flow.metadata.annotations = annotations
  ;(flow.status as Record<string, unknown>).phase = 'Succeeded'
  return flow
}

const bodies = (requests: Array<{ method: string, body?: unknown }>): unknown[] =>
  requests.filter(r => r.method === 'PATCH').map(r => r.body)

t.test('rerun jf --step: the value and the steps in one merge patch', async t => {
  const { run, fake } = await plugin(t, [finishedFlow()])
  t.same(await run(['rerun', 'jf', 'jobflow-example', '--step', 'job2', '--step', 'shard']), {
    code: 0,
    out: `jobflow.jobhooks.io/jobflow-example rerun requested (jobhooks.io/rerun=${VALUE}, ` +
      'jobhooks.io/rerun-steps=job2,shard)\n',
    err: ''
  })
  const patches = fake.requests.filter(r => r.method === 'PATCH')
  t.same(patches.map(r => ({ url: r.url, body: r.body, contentType: r.contentType })), [{
    url: FLOW_PATH,
    body: { metadata: { annotations: { 'jobhooks.io/rerun': VALUE, 'jobhooks.io/rerun-steps': 'job2,shard' } } },
    contentType: 'application/merge-patch+json'
  }])
  t.same(fake.objects.find(o => o.kind === 'JobFlow')?.metadata.annotations,
    { 'jobhooks.io/rerun': VALUE, 'jobhooks.io/rerun-steps': 'job2,shard' }, 'applied')
  const commas = await plugin(t, [finishedFlow()])
  await commas.run(['rerun', 'jf', 'jobflow-example', '--step', 'job2,job5'])
  t.same(bodies(commas.fake.requests),
    [{ metadata: { annotations: { 'jobhooks.io/rerun': VALUE, 'jobhooks.io/rerun-steps': 'job2,job5' } } }],
    'comma separated, as the annotation')
})

t.test('rerun jf without --step removes the steps an earlier rerun --step left', async t => {
  const { run, fake } = await plugin(t, [finishedFlow({ 'jobhooks.io/rerun': '1', 'jobhooks.io/rerun-steps': 'job2' })])
  t.equal((await run(['rerun', 'jf', 'jobflow-example'])).code, 0)
  t.same(bodies(fake.requests),
    [{ metadata: { annotations: { 'jobhooks.io/rerun': VALUE, 'jobhooks.io/rerun-steps': null } } }])
  t.same(fake.objects.find(o => o.kind === 'JobFlow')?.metadata.annotations, { 'jobhooks.io/rerun': VALUE })
})

t.test('rerun jf --step with a step the flow does not have, or --step on another command: refused', async t => {
  const { run, fake } = await plugin(t, [finishedFlow()])
  t.same(await run(['rerun', 'jf', 'jobflow-example', '--step', 'job2', '--step', 'nope']), {
    code: 1,
    out: '',
    err: 'error: jobflow jobflow-example has no step "nope" (steps: job1, job2, job3, job4, job5, shard)\n'
  })
  t.same((await run(['suspend', 'jf', 'jobflow-example', '--step', 'job2'])).err,
    "error: --step is a flag of rerun\nSee 'kubectl jobhooks --help' for usage.\n")
  t.same(bodies(fake.requests), [], 'nothing sent')
  t.match((await run(['--help'])).out, 'kubectl jobhooks rerun jf <name> [--step S …]')
})
