// OpenKruise BroadcastJob's policies on DaemonJob, hook by hook and from the fixtures a person can
// curl: nodeParallelism, failurePolicy (and the default a DaemonJob keeps from its first sync),
// paused, completionPolicy; and a BroadcastJob spec ported as it is, which is refused, not guessed.
import t from 'tap'
import { syncDaemonJob } from '../../../src/controllers/daemonjob/sync.js'
import { parsePolicies, defaultFailurePolicy } from '../../../src/controllers/daemonjob/policies.js'
import { parallelismLimit, startNow } from '../../../src/controllers/daemonjob/hold.js'
import type { NodeRecord } from '../../../src/controllers/daemonjob/records.js'
import { responseOf } from '../../helpers/hooks.js'
import { context, fixture } from '../../helpers/fixtures.js'
import { specOf } from '../../helpers/objects.js'

const respond = responseOf(syncDaemonJob)
const jobs = (response: { children: any[] }): string[] =>
  response.children.filter(c => c.kind === 'Job').map(c => c.metadata.name as string)

t.test('sync-node-parallelism.v2.json: nodeParallelism 1 over three eligible nodes starts node-1 only', async t => {
  const response = respond(fixture('daemonjob/sync-node-parallelism.v2.json'), context())
  t.same(jobs(response), ['daemonjob-example-node-1'])
  t.match(response.status, {
    phase: 'Pending',
    desired: 1,
    active: 1,
    waiting: 2,
    message: 'nodeParallelism 1: 2 nodes waiting for their Job',
    defaultFailurePolicy: 'FailFast'
  })
})

t.test('nodeParallelism counts the Jobs running, not those finished', async t => {
  const request = fixture('daemonjob/sync-finished.v2.json')
  // node-3 succeeded, node-6 failed; node-1 and node-2 are now eligible too.
  delete specOf(request.parent).excludeNodeList
  Object.assign(specOf(request.parent), { nodeParallelism: 1, failurePolicy: 'Continue' })
  const response = respond(request, context())
  t.same(jobs(response), ['daemonjob-example-node-1', 'daemonjob-example-node-3', 'daemonjob-example-node-6'])
  t.match(response.status, { phase: 'Running', waiting: 1, message: 'nodeParallelism 1: 1 node waiting for their Job' })
})

t.test('sync-failfast.v2.json: FailFast fails at once, stops the running Job and says why', async t => {
  const response = respond(fixture('daemonjob/sync-failfast.v2.json'), context())
  t.same(jobs(response), ['daemonjob-example-node-6'], "node-3's unfinished Job is left out: Metacontroller deletes it")
  t.match(response.status, {
    phase: 'Failed',
    active: 0,
    failed: 2,
    completionTime: /./,
    failedNodes: [
      { name: 'node-3', message: 'Stopped: failurePolicy FailFast, the Job of node-6 failed' },
      { name: 'node-6', message: /BackoffLimitExceeded/ }
    ]
  })
  t.notOk('message' in response.status)
  const again = fixture('daemonjob/sync-failfast.v2.json')
  again.parent.status = response.status
  t.same(jobs(respond(again, context())), ['daemonjob-example-node-6'], 'the next sync keeps it out, from the status')
})

t.test('the default failurePolicy: FailFast for a new DaemonJob, Continue for one synced before', async t => {
  t.equal(defaultFailurePolicy({}), 'FailFast', 'no status: new')
  t.equal(defaultFailurePolicy({ phase: 'Running' }), 'Continue', 'a phase without the record: an earlier version')
  t.equal(defaultFailurePolicy({ phase: 'Running', defaultFailurePolicy: 'FailFast' }), 'FailFast', 'recorded')
  t.equal(defaultFailurePolicy({ defaultFailurePolicy: 'Continue' }), 'Continue', 'recorded')

  const older = fixture('daemonjob/sync-failfast.v2.json')
  delete (older.parent.status as Record<string, unknown>).defaultFailurePolicy
  const kept = respond(older, context())
  t.same(jobs(kept), ['daemonjob-example-node-3', 'daemonjob-example-node-6'], 'an older DaemonJob goes on')
  t.match(kept.status, { phase: 'Running' })
  t.notOk('defaultFailurePolicy' in (kept.status as Record<string, unknown>),
    'Continue is not written: a version that drops the field has nothing to fight over')

  const explicit = fixture('daemonjob/sync-failfast.v2.json')
  specOf(explicit.parent).failurePolicy = 'Continue'
  t.match(respond(explicit, context()).status, { phase: 'Running', defaultFailurePolicy: 'FailFast' }, 'the spec wins')

  const invalid = fixture('daemonjob/sync-new.v2.json')
  specOf(invalid.parent).excludeNodeList = 3
  const first = respond(invalid, context())
  t.match(first.status, { phase: 'Invalid', defaultFailurePolicy: 'FailFast' }, 'an Invalid first sync records it too')
})

t.test('failurePolicy Pause holds the nodes still to start, with the way out in the message', async t => {
  const request = fixture('daemonjob/sync-finished.v2.json')
  delete specOf(request.parent).excludeNodeList
  specOf(request.parent).failurePolicy = 'Pause'
  const response = respond(request, context())
  t.same(jobs(response), ['daemonjob-example-node-3', 'daemonjob-example-node-6'])
  t.match(response.status, {
    phase: 'Running',
    waiting: 2,
    message: 'failurePolicy Pause: the Job of node-6 failed (set failurePolicy to Continue to go on): 2 nodes ' +
      'waiting for their Job'
  })
})

t.test('paused: nothing new starts, and the message says so', async t => {
  const request = fixture('daemonjob/sync-new.v2.json')
  specOf(request.parent).paused = true
  const response = respond(request, context())
  t.same(jobs(response), [])
  t.match(response.status, { phase: 'Pending', waiting: 1, message: 'paused: 1 node waiting for their Job' })
})

t.test('completionPolicy Never: every node done is not the end', async t => {
  const request = fixture('daemonjob/sync-finished.v2.json')
  Object.assign(specOf(request.parent), { completionPolicy: 'Never', failurePolicy: 'Continue' })
  const response = respond(request, context())
  t.match(response.status, { phase: 'Running', message: 'completionPolicy Never: waiting for nodes that join' })
  t.notOk('completionTime' in response.status)
})

t.test('sync-broadcastjob.v2.json: a BroadcastJob spec ported as it is is Invalid, each problem named', async t => {
  const response = respond(fixture('daemonjob/sync-broadcastjob.v2.json'), context())
  t.same(response.children, [])
  t.equal(response.status.phase, 'Invalid')
  const valid = (response.status.conditions as any[]).find(c => c.type === 'Valid')
  t.match(valid, { status: 'False', reason: 'InvalidSpec' })
  for (const words of [
    'spec.template.spec.containers[0].imagePullPolicyy: unknown field (not a field of Container)',
    'spec.failurePolicy must be FailFast, Continue or Pause, not {"type":"FailFast","restartLimit":3} ' +
      "(BroadcastJob's {type: FailFast} is written spec.failurePolicy: FailFast here",
    'spec.completionPolicy must be Always or Never'
  ]) t.ok(valid.message.includes(words), words)
})

t.test('the policies as read, and what is refused', async t => {
  const read = (spec: Record<string, unknown>): [unknown, string[]] => {
    const problems: string[] = []
    return [parsePolicies(spec, problems), problems]
  }
  t.same(read({}), [{ paused: false, completionPolicy: 'Always' }, []])
  t.same(read({ nodeParallelism: '25%', failurePolicy: 'Pause', paused: true, completionPolicy: 'Never' }), [
    { nodeParallelism: '25%', failurePolicy: 'Pause', paused: true, completionPolicy: 'Never' },
    []
  ])
  for (const bad of [0, -1, 1.5, '0%', '101%', '25', 'all']) {
    t.match(read({ nodeParallelism: bad })[1], [/^spec.nodeParallelism must be a whole number of at least 1 or a /])
  }
  t.match(read({ paused: 'yes' })[1], ['spec.paused must be true or false, not "yes"'])
  t.match(read({ failurePolicy: 'Fail' })[1], ['spec.failurePolicy must be FailFast, Continue or Pause, not "Fail"'])
})

t.test('nodeParallelism as a percentage rounds up, and never below one node', async t => {
  t.equal(parallelismLimit(2, 10), 2)
  t.equal(parallelismLimit('25%', 10), 3)
  t.equal(parallelismLimit('1%', 3), 1)
  t.equal(parallelismLimit('100%', 7), 7)
  const records = new Map<string, NodeRecord>([
    ['b', { name: 'b', jobName: 'x-b', phase: 'Running' }],
    ['a', { name: 'a', jobName: 'x-a', phase: 'Succeeded' }]
  ])
  const policies = { paused: false, completionPolicy: 'Always' as const, nodeParallelism: 2 }
  t.same(startNow(['e', 'c', 'd'], records, policies, 'FailFast'), {
    start: ['c'],
    hold: { waiting: 2, why: 'nodeParallelism 2' }
  }, 'in the order of the node names, one slot left')
})
