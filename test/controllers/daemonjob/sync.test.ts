// The DaemonJob sync hook on requests as Metacontroller sends them: one Job per eligible node,
// named and pinned, globals merged, outcomes counted and remembered, a deterministic answer.
import t from 'tap'
import { syncDaemonJob } from '../../../src/controllers/daemonjob/sync.js'
import { responseOf } from '../../helpers/hooks.js'
import { customizeDaemonJob } from '../../../src/controllers/daemonjob/customize.js'
import { nodeOfJob } from '../../../src/controllers/daemonjob/job.js'
import type { SyncRequest, SyncResponse } from '../../../src/protocol/hooks.js'
import type { KubeObject } from '../../../src/k8s/types.js'
import { at, childrenOf, context, fixture, SHIPPED_SCRIPTS } from '../../helpers/fixtures.js'
import { FIXED_NOW } from '../../helpers/app.js'
import { timestamp } from '../../../src/k8s/time.js'
import { condition } from '../../helpers/conditions.js'
import { objectAs, specOf } from '../../helpers/objects.js'
import { jobLikeSpecOf, jobOf, podSpecOf } from '../../helpers/records.js'

/** The fields of a Node and a ConfigMap these tests edit or read. */
type NodeObject = KubeObject & { metadata: { labels: Record<string, string> } }
type ConfigMapObject = KubeObject & { data: Record<string, string> }

const respond = responseOf(syncDaemonJob)

const NOW = timestamp(FIXED_NOW)
const JOBS = 'Job.batch/v1'

function jobsOf (response: SyncResponse): Map<string, KubeObject> {
  return childrenOf(response.children, 'Job')
}
function sync (request: SyncRequest, now = FIXED_NOW): SyncResponse {
  return respond(request, context(now))
}
/** A Node like the fixture's node-3 under another name (and uid), optionally changed. */
function extraNode (request: SyncRequest, name: string, mutate: (node: NodeObject) => void = () => {}): void {
  const node = objectAs<NodeObject>(structuredClone(request.related['Node.v1']?.['node-3']))
  node.metadata.name = name
  node.metadata.uid = `uid-${name}`
  node.metadata.labels['kubernetes.io/hostname'] = name
  mutate(node)
  request.related['Node.v1']![name] = node
}

t.test('five nodes, two excluded, one cordoned, one tainted: exactly one Job', async t => {
  const response = sync(fixture('daemonjob/sync-new.v2.json'))
  t.same([...jobsOf(response).keys()], ['daemonjob-example-node-3'])
  t.same(response.children.filter(c => c.kind !== 'Job'), [], 'no ConfigMap without a script')
  t.same(response.status, {
    phase: 'Pending',
    desired: 1,
    active: 1,
    succeeded: 0,
    failed: 0,
    startTime: NOW,
    succeededNodes: [],
    failedNodes: [],
    defaultFailurePolicy: 'FailFast',
    conditions: [
      { type: 'Valid', status: 'True', reason: 'SpecValid', message: 'the spec is valid', lastTransitionTime: NOW }
    ]
  })
  t.notOk('resyncAfterSeconds' in response, 'nothing here depends on time')
})

t.test('the Job: named <daemonjob>-<node>, labelled, pinned by required affinity, globals merged', async t => {
  const request = fixture('daemonjob/sync-new.v2.json')
  const job = jobOf(jobsOf(sync(request)).get('daemonjob-example-node-3'))
  t.same(job.metadata, {
    name: 'daemonjob-example-node-3',
    namespace: 'default',
    labels: {
      key1: 'value1',
      key2: 'value2',
      'jobhooks.io/daemonjob': 'daemonjob-example',
      'jobhooks.io/node': 'node-3'
    },
    annotations: { key1: 'value1', key2: 'value2' }
  })
  const pod = job.spec.template
  t.same(
    pod.metadata.labels,
    { key1: 'value1', key2: 'value2', 'jobhooks.io/daemonjob': 'daemonjob-example', 'jobhooks.io/node': 'node-3' }
  )
  t.same(pod.metadata.annotations, { key1: 'value1', key2: 'value2' })
  t.equal(pod.spec.nodeName, undefined, 'not nodeName: the scheduler still checks fit')
  t.same(
    pod.spec.affinity,
    {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-3'] }] }]
        }
      }
    }
  )
  t.equal(pod.spec.restartPolicy, 'OnFailure', 'the user\'s OnFailure is kept')
  t.same(pod.spec.containers[0]?.env, [{ name: 'FOO', value: 'bar' }, { name: 'QUE', value: 'pasa' }])
  t.same(pod.spec.containers[0]?.command, ['sh', '-c', 'sleep 100s'])
  t.equal(job.spec.backoffLimit, undefined, 'no backoffLimit is invented')
  t.equal(nodeOfJob(job), 'node-3')
  t.equal(jobLikeSpecOf(request.parent).template.metadata, undefined, 'the spec itself is not changed')
})

t.test('the JobSpec fields inline under spec reach every Job, the TTL as a label (the service applies it); Never is ' +
  'the default', async t => {
  const request = fixture('daemonjob/sync-new.v2.json')
  const spec = jobLikeSpecOf(request.parent)
  Object.assign(
    spec,
    { backoffLimit: 2, activeDeadlineSeconds: 600, ttlSecondsAfterFinished: 3600, parallelism: 2, completions: 4 }
  )
  delete podSpecOf(request.parent).restartPolicy
  const job = jobOf(jobsOf(sync(request)).get('daemonjob-example-node-3'))
  t.same(
    { ...job.spec, template: undefined },
    { backoffLimit: 2, activeDeadlineSeconds: 600, parallelism: 2, completions: 4, template: undefined }
  )
  t.equal(
    job.metadata.labels['jobhooks.io/ttl-seconds-after-finished'],
    '3600',
    'the TTL is on the Job as a label, so the Job controller never deletes it'
  )
  t.notOk(
    'globalParams' in job.spec || 'excludeNodeList' in job.spec || 'script' in job.spec || 'scripts' in job.spec,
    'our own fields stay out of the JobSpec'
  )
  t.equal(job.spec.template.spec.restartPolicy, 'Never')
})

t.test('pinning joins every term of the template\'s own required affinity', async t => {
  const request = fixture('daemonjob/sync-new.v2.json')
  const pod = podSpecOf(request.parent)
  pod.affinity = {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [
          { matchExpressions: [{ key: 'kubernetes.io/os', operator: 'In', values: ['linux'] }] },
          {
            matchExpressions: [{ key: 'accelerator', operator: 'Exists' }],
            matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['node-9'] }]
          }
        ]
      },
      preferredDuringSchedulingIgnoredDuringExecution: [
        { weight: 1, preference: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] } }
      ]
    },
    podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [] }
  }
  const job = jobOf(jobsOf(sync(request)).get('daemonjob-example-node-3'))
  const pin = { key: 'metadata.name', operator: 'In', values: ['node-3'] }
  t.same(job.spec.template.spec.affinity, {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [
          { matchExpressions: [{ key: 'kubernetes.io/os', operator: 'In', values: ['linux'] }], matchFields: [pin] },
          {
            matchExpressions: [{ key: 'accelerator', operator: 'Exists' }],
            matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['node-9'] }, pin]
          }
        ]
      },
      preferredDuringSchedulingIgnoredDuringExecution: [
        { weight: 1, preference: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] } }
      ]
    },
    podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [] }
  })
  t.equal(nodeOfJob(job), 'node-3')
})

t.test('a toleration or a selector changes which nodes are eligible', async t => {
  const request = fixture('daemonjob/sync-new.v2.json')
  const pod = podSpecOf(request.parent)
  pod.tolerations = [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }]
  t.same([...jobsOf(sync(request)).keys()], ['daemonjob-example-node-3', 'daemonjob-example-node-5'])
  pod.nodeSelector = { accelerator: 'gpu' }
  t.same([...jobsOf(sync(request)).keys()], ['daemonjob-example-node-5'])
  pod.tolerations.push({ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' })
  delete pod.nodeSelector
  specOf(request.parent).excludeNodeList = ''
  t.same(
    [...jobsOf(sync(request)).keys()],
    [
      'daemonjob-example-node-1',
      'daemonjob-example-node-2',
      'daemonjob-example-node-3',
      'daemonjob-example-node-4',
      'daemonjob-example-node-5'
    ]
  )
})

t.test('v1 and v2 keying give byte-identical answers, and so does a repeated call', async t => {
  for (const name of ['sync-new', 'sync-running']) {
    const v1 = JSON.stringify(sync(fixture(`daemonjob/${name}.v1.json`)))
    const v2 = JSON.stringify(sync(fixture(`daemonjob/${name}.v2.json`)))
    t.equal(v1, v2, name)
    t.equal(JSON.stringify(sync(fixture(`daemonjob/${name}.v2.json`))), v2, `${name} again`)
  }
})

t.test('the order of Nodes and Jobs in the request does not matter', async t => {
  const request = fixture('daemonjob/sync-running.v2.json')
  const expected = JSON.stringify(sync(request))
  const reversed = fixture('daemonjob/sync-running.v2.json')
  reversed.related['Node.v1'] = Object.fromEntries(Object.entries(reversed.related['Node.v1'] ?? {}).reverse())
  reversed.children[JOBS] = Object.fromEntries(Object.entries(reversed.children[JOBS] ?? {}).reverse())
  t.equal(JSON.stringify(sync(reversed)), expected)
})

t.test('a node that joins while the DaemonJob runs gets its Job; existing Jobs are kept as observed', async t => {
  const request = fixture('daemonjob/sync-running.v2.json')
  const response = sync(request)
  const jobs = jobsOf(response)
  t.same([...jobs.keys()], ['daemonjob-example-node-3', 'daemonjob-example-node-6'])
  const kept = jobs.get('daemonjob-example-node-3') as KubeObject
  const observed = request.children[JOBS]?.['default/daemonjob-example-node-3'] as KubeObject
  t.same(
    kept,
    { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: observed.metadata.name, namespace: 'default' } },
    'its identity: under OnDelete Metacontroller leaves it as it is'
  )
  t.match(
    response.status,
    { phase: 'Running', desired: 2, active: 2, succeeded: 0, failed: 0, startTime: '2026-01-02T03:00:01Z' }
  )
  t.notOk('queued' in response.status, 'no queued count while no Job waits (the QUEUED column is empty)')
  t.notOk('completionTime' in response.status)

  // An edit of the spec does not rebuild the Job that exists.
  podSpecOf(request.parent).containers[0]!.image = 'busybox:1.36'
  const edited = jobsOf(sync(request))
  t.same(edited.get('daemonjob-example-node-3'), kept)
  t.equal(
    at(edited.get('daemonjob-example-node-6'), 'spec.template.spec.containers.0.image'),
    'busybox:1.36',
    'new Jobs use the edited spec'
  )
})

t.test('a failure does not stop the others; Failed once every node finished', async t => {
  const request = fixture('daemonjob/sync-finished.v2.json')
  const response = sync(request)
  t.same(
    [...jobsOf(response).keys()],
    ['daemonjob-example-node-3', 'daemonjob-example-node-6'],
    'failed Jobs stay for their logs'
  )
  t.same(response.status, {
    phase: 'Failed',
    desired: 2,
    active: 0,
    succeeded: 1,
    failed: 1,
    startTime: '2026-01-02T03:00:01Z',
    completionTime: NOW,
    succeededNodes: ['node-3'],
    failedNodes: [{
      name: 'node-6',
      jobName: 'daemonjob-example-node-6',
      message: 'BackoffLimitExceeded: Job has reached the specified backoff limit',
      completionTime: '2026-01-02T03:02:10Z'
    }],
    conditions: [
      condition(request.parent.status, 'Valid'),
      {
        type: 'Failed',
        status: 'True',
        reason: 'NodeJobFailed',
        message: 'the Jobs of 1 of 2 nodes failed: node-6: BackoffLimitExceeded: Job has reached the specified ' +
          'backoff limit',
        lastTransitionTime: NOW
      }
    ]
  })

  // While node-6's Job ran, node-3's success alone did not finish anything; a new node still
  // got its Job after node-6 failed.
  const midway = fixture('daemonjob/sync-finished.v2.json')
  extraNode(midway, 'node-7')
  const more = sync(midway)
  t.ok(jobsOf(more).has('daemonjob-example-node-7'), 'a node that comes after a failure still gets its Job')
  t.match(more.status, { phase: 'Running', desired: 3, active: 1, succeeded: 1, failed: 1 })
})

t.test('Succeeded when every node succeeded, with Complete', async t => {
  const request = fixture('daemonjob/sync-finished.v2.json')
  const job6 = jobOf(request.children[JOBS]?.['default/daemonjob-example-node-6'])
  job6.status.conditions = [{ type: 'Complete', status: 'True', lastTransitionTime: '2026-01-02T03:02:10Z' }]
  const response = sync(request)
  t.match(
    response.status,
    {
      phase: 'Succeeded',
      desired: 2,
      active: 0,
      succeeded: 2,
      failed: 0,
      completionTime: NOW,
      succeededNodes: ['node-3', 'node-6'],
      failedNodes: []
    }
  )
  t.match(
    condition(response.status, 'Complete'),
    { status: 'True', reason: 'AllNodesSucceeded', message: 'the Jobs of 2 of 2 nodes succeeded' }
  )
})

t.test('finished is final: later nodes get no Job, deleted Jobs are not re-run, the status stays', async t => {
  const request = fixture('daemonjob/sync-finished.v2.json')
  const done = sync(request)
  request.parent.status = done.status
  extraNode(request, 'node-7')
  delete request.children[JOBS]?.['default/daemonjob-example-node-3']
  const later = sync(request, new Date('2026-01-03T00:00:00Z'))
  t.same([...jobsOf(later).keys()], ['daemonjob-example-node-6'], 'no Job for node-7, none again for node-3')
  t.same(later.status, done.status, 'the same status, times carried forward')
  delete request.children[JOBS]?.['default/daemonjob-example-node-6']
  t.same(sync(request, new Date('2026-01-04T00:00:00Z')).status, done.status, 'the failed node is remembered too')
})

t.test('a finished Job that disappears while others run is remembered, not re-run', async t => {
  const request = fixture('daemonjob/sync-finished.v2.json')
  const job6 = jobOf(request.children[JOBS]?.['default/daemonjob-example-node-6'])
  job6.status = { startTime: '2026-01-02T03:00:42Z', active: 1 }
  const first = sync(request)
  t.match(first.status, { phase: 'Running', succeededNodes: ['node-3'] })
  request.parent.status = first.status
  delete request.children[JOBS]?.['default/daemonjob-example-node-3']
  const second = sync(request)
  t.same(
    [...jobsOf(second).keys()],
    ['daemonjob-example-node-6'],
    'node-3 (TTL, or deleted by hand) is not created again'
  )
  t.match(second.status, { desired: 2, active: 1, succeeded: 1 })
})

t.test('a running Job deleted by hand is created again; a Job asked for and not seen yet is asked for ' +
  'again', async t => {
  const request = fixture('daemonjob/sync-running.v2.json')
  delete request.children[JOBS]?.['default/daemonjob-example-node-3']
  const response = sync(request)
  t.same([...jobsOf(response).keys()], ['daemonjob-example-node-3', 'daemonjob-example-node-6'])
  t.notOk(jobsOf(response).get('daemonjob-example-node-3')?.status)
  t.equal(response.status.startTime, '2026-01-02T03:00:01Z')
  request.parent.status = response.status
  const again = sync(request, new Date('2026-01-02T03:05:00Z'))
  t.same(again.children, response.children)
  t.same(again.status, response.status, 'the status converges')
})

t.test('a node that disappears: its Job is kept and still counts; a message says why the DaemonJob waits', async t => {
  const request = fixture('daemonjob/sync-running.v2.json')
  delete request.related['Node.v1']?.['node-3']
  const response = sync(request)
  t.same([...jobsOf(response).keys()], ['daemonjob-example-node-3', 'daemonjob-example-node-6'])
  t.match(
    response.status,
    {
      phase: 'Running',
      desired: 2,
      active: 2,
      message: 'Jobs wait on nodes that no longer exist: node-3; they end by their activeDeadlineSeconds or when ' +
        'deleted'
    }
  )

  // Its Job finished before the node went: the outcome counts and nothing waits.
  const done = fixture('daemonjob/sync-finished.v2.json')
  delete done.related['Node.v1']?.['node-3']
  t.match(sync(done).status, { phase: 'Failed', succeeded: 1, failed: 1 })

  // Its unfinished Job is deleted by hand: the node is forgotten (there is no outcome to keep).
  delete request.children[JOBS]?.['default/daemonjob-example-node-3']
  const forgotten = sync(request)
  t.same([...jobsOf(forgotten).keys()], ['daemonjob-example-node-6'])
  t.match(forgotten.status, { desired: 1, active: 1 })
  t.notOk('message' in forgotten.status)
})

t.test('no eligible node: Pending with a message that says why, then nodes are picked up', async t => {
  const request = fixture('daemonjob/sync-new.v2.json')
  specOf(request.parent).excludeNodeList = 'node-1, node-2, node-3'
  const response = sync(request)
  t.same(response.children, [])
  t.same(response.status, {
    phase: 'Pending',
    message: 'no eligible node among 5: node-1: excluded by excludeNodeList; node-2: excluded by excludeNodeList; ' +
      'node-3: excluded by excludeNodeList; node-4: cordoned (spec.unschedulable); node-5: taint ' +
        'dedicated=gpu:NoSchedule is not tolerated; waiting for nodes',
    desired: 0,
    active: 0,
    succeeded: 0,
    failed: 0,
    succeededNodes: [],
    failedNodes: [],
    defaultFailurePolicy: 'FailFast',
    conditions: [
      { type: 'Valid', status: 'True', reason: 'SpecValid', message: 'the spec is valid', lastTransitionTime: NOW }
    ]
  })
  request.parent.status = response.status
  t.same(sync(request, new Date('2026-01-02T05:00:00Z')).status, response.status, 'it does not churn while it waits')
  extraNode(request, 'node-7')
  const picked = sync(request, new Date('2026-01-02T05:00:00Z'))
  t.same([...jobsOf(picked).keys()], ['daemonjob-example-node-7'])
  t.match(picked.status, { phase: 'Pending', desired: 1, startTime: '2026-01-02T05:00:00Z' })
  t.notOk('message' in picked.status)

  const many = fixture('daemonjob/sync-new.v2.json')
  for (let i = 10; i < 25; i++) extraNode(many, `node-${i}`)
  podSpecOf(many.parent).nodeSelector = { pool: 'none' }
  t.match(
    sync(many).status.message,
    new RegExp('^no eligible node among 20: node-1: excluded by excludeNodeList; ' +
      'node-10: does not match nodeSelector pool=none; .*; and 10 more; waiting for nodes$')
  )
})

t.test('what Metacontroller v1.5.20 sends (an empty Node group) and no Node group at all', async t => {
  const request = fixture('daemonjob/sync-no-nodes.v1.json')
  t.same(request.related, { 'Node.v1': {} }, 'the fixture holds what the e2e tier observed')
  const empty = sync(request)
  t.same(empty.children, [])
  t.match(
    empty.status,
    {
      phase: 'Pending',
      desired: 0,
      message: new RegExp('Metacontroller sent no Nodes \\(related Node.v1 is empty; a namespaced DaemonJob ' +
        'receives Nodes only from hooks registered with version v2\\)')
    }
  )

  const running = fixture('daemonjob/sync-finished.v2.json')
  const job6 = jobOf(running.children[JOBS]?.['default/daemonjob-example-node-6'])
  job6.status.conditions = [{ type: 'Complete', status: 'True', lastTransitionTime: '2026-01-02T03:02:10Z' }]
  running.related = {}
  const unknown = sync(running)
  t.match(
    unknown.status,
    { phase: 'Running', active: 0, succeeded: 2, message: /Metacontroller sent no Nodes \(no related Node.v1 group\)/ },
    'without knowing the Nodes it never declares itself done'
  )
  t.same([...jobsOf(unknown).keys()], ['daemonjob-example-node-3', 'daemonjob-example-node-6'], 'and keeps every Job')
})

t.test('a script runs from a content-hashed ConfigMap; the old one stays while a Job mounts it', async t => {
  const request = fixture('daemonjob/sync-new.v2.json')
  const spec = jobLikeSpecOf(request.parent)
  spec.script = { name: 'wait-for.sh', args: ['-t', '60', 'db:5432'] }
  const first = sync(request)
  const configMaps = [...childrenOf(first.children, 'ConfigMap').values()].map(c => objectAs<ConfigMapObject>(c))
  t.equal(configMaps.length, 1)
  const cm = configMaps[0]!
  t.match(cm.metadata.name, /^daemonjob-example-scripts-[0-9a-f]{10}$/)
  t.same(cm.metadata.labels, { 'jobhooks.io/daemonjob': 'daemonjob-example' })
  t.same(cm.data, { 'wait-for.sh': SHIPPED_SCRIPTS.get('wait-for.sh') })
  const pod = at(jobsOf(first).get('daemonjob-example-node-3'), 'spec.template.spec')
  t.same(pod.volumes, [{ name: 'jobhooks-scripts', configMap: { name: cm.metadata.name, defaultMode: 364 } }])
  t.same(pod.containers[0].command, ['/scripts/wait-for.sh'])
  t.same(pod.containers[0].args, ['-t', '60', 'db:5432'])
  t.same(pod.containers[0].volumeMounts, [{ name: 'jobhooks-scripts', mountPath: '/scripts', readOnly: true }])

  // The Job and the ConfigMap exist; then the script is replaced by an inline one.
  const job3 = jobsOf(first).get('daemonjob-example-node-3') as KubeObject
  request.children[JOBS]!['default/daemonjob-example-node-3'] = {
    ...job3,
    metadata: { ...job3.metadata, uid: 'j3' },
    status: { active: 1 }
  }
  request.children['ConfigMap.v1']![`default/${String(cm.metadata.name)}`] = {
    ...cm,
    metadata: { ...cm.metadata, uid: 'c1' }
  }
  request.parent.status = first.status
  spec.scripts = { 'wait-for.sh': 'echo mine' }
  const second = sync(request)
  const names = [...childrenOf(second.children, 'ConfigMap').keys()]
  t.equal(names.length, 2, 'the new version and the one node-3 runs with')
  t.ok(names.includes(cm.metadata.name))
  t.same(
    objectAs<ConfigMapObject>(
      childrenOf(second.children, 'ConfigMap').get(names.find(n => n !== cm.metadata.name) as string)
    ).data,
    { 'wait-for.sh': 'echo mine' }
  )

  // Once node-3's Job is gone and the DaemonJob finished, no ConfigMap is left.
  delete request.children[JOBS]!['default/daemonjob-example-node-3']
  request.parent.status = { ...second.status, phase: 'Succeeded', completionTime: NOW, succeededNodes: ['node-3'] }
  t.same(sync(request).children, [])
})

t.test('long node names give Job names and label values that fit, stably', async t => {
  const request = fixture('daemonjob/sync-new.v2.json')
  const long = `ip-10-0-0-1.${'compute.'.repeat(8)}internal`
  extraNode(request, long)
  const response = sync(request)
  const names = [...jobsOf(response).keys()]
  t.equal(names.length, 2)
  const job = jobOf([...jobsOf(response).values()].find(j => j.metadata.name !== 'daemonjob-example-node-3'))
  t.ok(job.metadata.name.length <= 63, `${String(job.metadata.name)} fits`)
  t.match(job.metadata.name, /^daemonjob-example-ip-10-0-0-1\.compute.*-[0-9a-f]{10}$/)
  t.ok(job.metadata.labels['jobhooks.io/node']!.length <= 63, 'the node label value fits')
  t.same(
    job.spec.template.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution
      ?.nodeSelectorTerms[0]?.matchFields?.[0]?.values,
    [long],
    'pinned to the whole name'
  )
  t.equal(nodeOfJob(job), long, 'the node is read back from the pin, not the shortened label')
  t.same([...jobsOf(sync(request)).keys()], names, 'stable')
})

t.test('customize asks for every Node, or only those with the labels of the pod\'s nodeSelector', async t => {
  const request = fixture('daemonjob/customize.json')
  const nodes = (): unknown => customizeDaemonJob(request).relatedResources?.[0]?.labelSelector
  t.same(
    customizeDaemonJob(request),
    { relatedResources: [{ apiVersion: 'v1', resource: 'nodes', labelSelector: {} }] },
    'no nodeSelector: every Node'
  )
  const pod = podSpecOf(request.parent)
  pod.nodeSelector = { 'node.kubernetes.io/pool': 'batch', disk: 'ssd' }
  t.same(
    nodes(),
    { matchLabels: { disk: 'ssd', 'node.kubernetes.io/pool': 'batch' } },
    'a nodeSelector: only its Nodes'
  )
  for (const bad of [{ 'bad key': 'x' }, { disk: 'not a value' }, { disk: 3 }]) {
    pod.nodeSelector = bad as unknown as Record<string, string>
    t.same(
      nodes(),
      {},
      `${JSON.stringify(bad)}: a selector the API server would refuse is not asked for; every Node, and the sync ` +
        'says what is wrong'
    )
  }
  pod.nodeSelector = {}
  t.same(nodes(), {}, 'an empty nodeSelector: every Node')
  const invalid = fixture('daemonjob/customize.json')
  delete specOf(invalid.parent).template
  t.same(
    customizeDaemonJob(invalid).relatedResources,
    [{ apiVersion: 'v1', resource: 'nodes', labelSelector: {} }],
    'an invalid spec: every Node'
  )
})

t.test('with a nodeSelector, the messages speak of the Nodes that have its labels (the only ones Metacontroller ' +
  'sends)', async t => {
  const none = fixture('daemonjob/sync-new.v2.json')
  podSpecOf(none.parent).nodeSelector = { pool: 'late' }
  none.related['Node.v1'] = {}
  t.match(
    sync(none).status,
    {
      phase: 'Pending',
      message: 'no eligible node: no Node has the labels of the nodeSelector (pool=late); waiting for nodes'
    }
  )

  const running = fixture('daemonjob/sync-running.v2.json')
  podSpecOf(running.parent).nodeSelector = { pool: 'late' }
  for (const node of Object.values(running.related['Node.v1'] ?? {})) {
    objectAs<NodeObject>(node).metadata.labels.pool = 'late'
  }
  delete running.related['Node.v1']?.['node-3']
  t.match(
    sync(running).status,
    {
      phase: 'Running',
      message: 'Jobs wait on nodes that no longer exist or no longer have the labels of the nodeSelector ' +
        '(pool=late): node-3; they end by their activeDeadlineSeconds or when deleted'
    }
  )
})
