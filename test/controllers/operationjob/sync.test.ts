// The OperationJob kind's hooks: registered with sync, finalize and customize; customize asks for
// the target Pods; a new Exec job starts its partition; v1 and v2 keying agree; exit codes and a
// missing Pod decide each target.
import t from 'tap'
import type { CustomizeRequest, SyncRequest } from '../../../src/protocol/hooks.js'
import type { InjectEphemeralContainers } from '../../../src/effects/types.js'
import { customizeOperationJob } from '../../../src/controllers/operationjob/customize.js'
import { operationjobHooks } from '../../../src/controllers/operationjob/index.js'
import { ALL_KINDS } from '../../../src/controllers/kinds.js'
import { timestamp } from '../../../src/k8s/time.js'
import { context, fixture } from '../../helpers/fixtures.js'
import { defaultActions } from '../../../src/actions/index.js'
import { FIXED_NOW } from '../../helpers/app.js'
import { REGISTRY, TEST_HOOKS, T0, at, detailOf, job, next, pod, progresses, sync } from '../../helpers/operationjob.js'
import { condition } from '../../helpers/conditions.js'

const NOW = timestamp(FIXED_NOW)
const injections = (effects: unknown[]): InjectEphemeralContainers[] => effects.filter(
  (e: any) => e.type === 'InjectEphemeralContainers'
) as InjectEphemeralContainers[]

t.test('the kind is registered with sync, finalize and customize hooks', async t => {
  t.ok(ALL_KINDS.includes(operationjobHooks))
  t.equal(operationjobHooks.kind, 'operationjob')
  t.type(operationjobHooks.finalize, 'function')
  t.type(operationjobHooks.customize, 'function')
})

t.test('customize asks for the target Pods by name in the job\'s namespace, plus what the action declares', async t => {
  const request = fixture<CustomizeRequest>('operationjob/customize.json')
  t.same(
    customizeOperationJob(request, REGISTRY),
    {
      relatedResources: [
        { apiVersion: 'v1', resource: 'pods', namespace: 'default', names: ['web-0', 'web-1', 'web-2'] }
      ]
    }
  )
  const probe = job({ targets: [{ name: 'a' }] })
  t.same(customizeOperationJob({ parent: probe }, REGISTRY).relatedResources, [
    { apiVersion: 'v1', resource: 'pods', namespace: 'default', names: ['a'] },
    { apiVersion: 'v1', resource: 'configmaps', namespace: 'default', names: ['ops-probe'] }
  ])
  t.same(
    customizeOperationJob({ parent: job({ action: 'Exec', targets: 'nope' }) }, REGISTRY),
    { relatedResources: [] },
    'unreadable targets ask for no Pods'
  )
  t.same(customizeOperationJob(
    { parent: job({ action: 'Reboot', targets: [{ name: 'a' }] }) },
    REGISTRY
  ).relatedResources,
  [
    { apiVersion: 'v1', resource: 'pods', namespace: 'default', names: ['a'] }
  ], 'an unknown action still gets its Pods (the sync hook reports it)')
  // Recreate asks for the workload's Pods by label: kept to the job's namespace, since under v2
  // Metacontroller would list a label rule without one in every namespace.
  t.same(customizeOperationJob(
    { parent: job({ action: 'Recreate', targets: [{ name: 'a' }] }) },
    defaultActions
  ).relatedResources, [
    { apiVersion: 'v1', resource: 'pods', namespace: 'default', names: ['a'] },
    { apiVersion: 'v1', resource: 'pods', namespace: 'default', labelSelector: {} }
  ], 'an action\'s label rule gets the job\'s namespace')
})

t.test('a new Exec job starts partition targets in spec order, injects one container each, and waits for the ' +
  'earliest deadline', async t => {
  const answer = TEST_HOOKS.sync(fixture('operationjob/sync-new.v2.json'), context())
  const { status } = answer.response
  t.same(answer.response.children, [])
  t.match(
    status,
    {
      progress: 'Processing',
      startTime: NOW,
      totalPodCount: 3,
      succeededPodCount: 0,
      failedPodCount: 0,
      observedGeneration: 1
    }
  )
  t.notOk('endTime' in status)
  t.same(status.targetDetails, [
    {
      name: 'web-0',
      progress: 'Processing',
      startTime: NOW,
      extraInfo: { ContainerName: 'opj-check', PodUID: 'pod-uid-0' }
    },
    {
      name: 'web-1',
      progress: 'Processing',
      startTime: NOW,
      extraInfo: { ContainerName: 'opj-check', PodUID: 'pod-uid-1' }
    },
    { name: 'web-2', progress: 'Pending' }
  ])
  t.equal(condition(status, 'Valid')?.status, 'True')
  t.same(answer.effects, ['web-0', 'web-1'].map((name, i) => ({
    type: 'InjectEphemeralContainers',
    target: { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name, uid: `pod-uid-${i}` },
    containers: [{
      name: 'opj-check',
      image: 'busybox:1.36',
      command: ['sh', '-c', 'pidof app'],
      env: [{ name: 'OPERATIONJOB', value: 'check' }, { name: 'OPERATIONJOB_UID', value: 'opj-uid-1' }],
      targetContainerName: 'app',
      terminationMessagePolicy: 'FallbackToLogsOnError'
    }]
  })))
  t.equal(answer.response.resyncAfterSeconds, 600, 'the deadline of the started targets')
})

t.test('v1 and v2 keying give byte-identical answers, and so does a repeated call', async t => {
  for (const name of ['sync-new', 'sync-exited']) {
    const v1 = JSON.stringify(TEST_HOOKS.sync(fixture(`operationjob/${name}.v1.json`), context()))
    const v2 = JSON.stringify(TEST_HOOKS.sync(fixture(`operationjob/${name}.v2.json`), context()))
    t.equal(v1, v2, `${name}: v1 = v2`)
    t.equal(
      JSON.stringify(TEST_HOOKS.sync(fixture(`operationjob/${name}.v2.json`), context())),
      v2,
      `${name}: deterministic`
    )
  }
})

t.test('Exec with mixed exit codes: 0 succeeds, 1 fails with the code in error.message and is released; partition ' +
  'holds the third', async t => {
  const request = fixture<SyncRequest>('operationjob/sync-exited.v2.json')
  const answer = TEST_HOOKS.sync(request, context())
  const { status } = answer.response
  t.match(
    status,
    {
      progress: 'Processing',
      succeededPodCount: 1,
      failedPodCount: 1,
      totalPodCount: 3,
      startTime: '2026-01-02T03:00:30Z'
    }
  )
  t.same(status.targetDetails, [
    {
      name: 'web-0',
      progress: 'Succeeded',
      startTime: '2026-01-02T03:00:30Z',
      endTime: NOW,
      extraInfo: { ContainerName: 'opj-check', PodUID: 'pod-uid-0' }
    },
    {
      name: 'web-1',
      progress: 'Failed',
      startTime: '2026-01-02T03:00:30Z',
      endTime: NOW,
      extraInfo: { ContainerName: 'opj-check', PodUID: 'pod-uid-1', Released: 'true' },
      error: { reason: 'ExitCode', message: 'opj-check exited with code 1 (Error)' }
    },
    { name: 'web-2', progress: 'Pending' }
  ])
  t.same(answer.effects, [], 'nothing to inject, nothing to undo')
  t.notOk(
    'resyncAfterSeconds' in answer.response,
    'no started target is unfinished, the job is not finished: nothing happens by the clock'
  )

  // Partition 3: the third starts; the job then ends Failed once it exits 0.
  const raised = next(request.parent, answer, { partition: 3 })
  const third = TEST_HOOKS.sync({ ...request, parent: raised }, context())
  t.same(injections(third.effects).map(e => e.target.name), ['web-2'])
  t.equal(third.response.status.progress, 'Processing')
  const pods = request.related['Pod.v1'] as Record<string, any>
  const done = structuredClone(pods['default/web-0'])
  done.metadata = { ...done.metadata, name: 'web-2', uid: 'pod-uid-2' }
  const later = new Date(FIXED_NOW.getTime() + 30_000)
  const end = TEST_HOOKS.sync(
    { ...request, parent: next(raised, third), related: { 'Pod.v1': { ...pods, 'default/web-2': done } } },
    context(later)
  )
  t.match(
    end.response.status,
    { progress: 'Failed', succeededPodCount: 2, failedPodCount: 1, endTime: timestamp(later) }
  )
  t.equal(end.response.resyncAfterSeconds, 300, 'TTLSecondsAfterFinished from endTime')
})

t.test('a missing target Pod fails that target with PodNotFound; the others start', async t => {
  const answer = TEST_HOOKS.sync(fixture('operationjob/sync-missing-pod.v2.json'), context())
  t.same(progresses(answer), ['web-0=Processing', 'web-1=Failed', 'web-2=Processing'])
  const detail = detailOf(answer, 1)
  t.same(
    detail,
    {
      name: 'web-1',
      progress: 'Failed',
      startTime: NOW,
      endTime: NOW,
      extraInfo: { Released: 'true' },
      error: { reason: 'PodNotFound', message: 'Pod web-1 does not exist' }
    }
  )
  t.same(injections(answer.effects).map(e => e.target.name), ['web-0', 'web-2'])
  t.equal(answer.response.status.failedPodCount, 1)

  // A Pod that disappears while its target is processing fails it too.
  const parent = job({ targets: [{ name: 'a' }] })
  const first = sync(parent, [pod('a')], T0)
  const gone = sync(next(parent, first), [], at(10))
  t.match(detailOf(gone, 0), { progress: 'Failed', error: { reason: 'PodNotFound' } })
  t.equal(gone.response.status.progress, 'Failed')
})
