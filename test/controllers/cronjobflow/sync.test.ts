// The CronJobFlow sync on its fixtures (curlable at their clock, test/fixtures/clocks.json): each of
// Kubernetes' CronJob rules — a due time starts one run, Forbid skips, Replace stops, history trims,
// a missed starting window and too many missed times say so — and an invalid spec keeps every run.
import t from 'tap'
import type { KubeObject } from '../../../src/k8s/types.js'
import { syncCronJobFlow } from '../../../src/controllers/cronjobflow/sync.js'
import { customizeCronJobFlow } from '../../../src/controllers/cronjobflow/customize.js'
import type { CustomizeRequest, SyncRequest } from '../../../src/protocol/hooks.js'
import { at, context, fixture } from '../../helpers/fixtures.js'

const sync = (name: string): ReturnType<typeof syncCronJobFlow> =>
  syncCronJobFlow(fixture<SyncRequest>(`cronjobflow/${name}`), context())
const names = (children: KubeObject[]): string[] => children.map(c => c.metadata.name)
const minutes = (iso: string): number => Date.parse(iso) / 60_000
const condition = (status: Record<string, unknown>, type: string): any =>
  (status.conditions as Array<{ type: string }>).find(c => c.type === type)

t.test('a due time starts one run named by its minute, marked and labelled, and asks back at the next', async t => {
  const { response, effects } = sync('sync-due.v2.json')
  const run = `nightly-${minutes('2026-01-02T03:00:00Z')}`
  t.same(names(response.children), [`nightly-${minutes('2026-01-02T02:55:00Z')}`, run])
  const started = response.children[1] as KubeObject
  t.same(started.metadata.labels, { team: 'data', 'jobhooks.io/cronjobflow': 'nightly' })
  t.same(started.metadata.annotations, { 'jobhooks.io/scheduled-time': '2026-01-02T03:00:00Z' })
  t.same(at(started, 'spec.flows').map((f: { name: string }) => f.name), ['extract', 'load'])
  t.equal(response.resyncAfterSeconds, 55, 'the next time is 03:05:00, 54.9 s away')
  t.match(response.status, {
    phase: 'Active',
    lastScheduleTime: '2026-01-02T03:00:00Z',
    lastSuccessfulTime: '2026-01-02T02:56:10Z',
    nextScheduleTime: '2026-01-02T03:05:00Z',
    activeCount: 1,
    active: [{ apiVersion: 'jobhooks.io/v1alpha1', kind: 'JobFlow', name: run, namespace: 'default' }]
  })
  t.match(condition(response.status, 'Scheduled'), {
    status: 'True', reason: 'Started', message: `started ${run} for 2026-01-02T03:00:00Z`
  })
  t.same(effects, [])
})

t.test('a kept run is answered by its identity alone: under OnDelete it is never updated', async t => {
  const request = fixture<SyncRequest>('cronjobflow/sync-due.v2.json')
  const observed = Object.values(request.children['JobFlow.jobhooks.io/v1alpha1'] ?? {})[0] as KubeObject
  const { apiVersion, kind, metadata: { name, namespace } } = observed
  t.same(syncCronJobFlow(request, context()).response.children[0], { apiVersion, kind, metadata: { name, namespace } })
})

t.test('Forbid skips a due time while a run goes, saying so, and starts nothing', async t => {
  const { response } = sync('sync-forbid-active.v2.json')
  t.same(names(response.children), [`nightly-${minutes('2026-01-02T02:55:00Z')}`])
  t.equal(response.status.lastScheduleTime, '2026-01-02T02:55:00Z', 'the skipped time is not recorded as scheduled')
  t.match(condition(response.status, 'Scheduled'), {
    status: 'False',
    reason: 'AlreadyActive',
    message: `skipped the run due at 2026-01-02T03:00:00Z: nightly-${minutes('2026-01-02T02:55:00Z')} still running ` +
      '(concurrencyPolicy Forbid)'
  })
  t.equal(response.resyncAfterSeconds, 55)
})

t.test('Allow starts a due run beside a running one, up to 100 running at once', async t => {
  const request = fixture<SyncRequest>('cronjobflow/sync-forbid-active.v2.json')
  at(request.parent, 'spec').concurrencyPolicy = 'Allow'
  t.equal(syncCronJobFlow(request, context()).response.children.length, 2, 'the running one and the new one')
  const group = request.children['JobFlow.jobhooks.io/v1alpha1'] as Record<string, KubeObject>
  const running = Object.values(group)[0] as KubeObject
  for (let i = 1; i < 100; i++) {
    const copy = structuredClone(running)
    copy.metadata.name = `nightly-manual-${i}`
    copy.metadata.annotations = { 'jobhooks.io/instantiate': 'manual' }
    group[`default/${copy.metadata.name}`] = copy
  }
  const { response } = syncCronJobFlow(request, context())
  t.equal(response.children.length, 100, 'no 101st')
  t.match(condition(response.status, 'Scheduled'), {
    status: 'False', reason: 'TooManyActive', message: /100 runs are still running, 100 at most/
  })
})

t.test('Replace stops the running run by its own deadline, marks it, and starts the due one', async t => {
  const { response, effects } = sync('sync-replace.v2.json')
  const old = `nightly-${minutes('2026-01-02T02:55:00Z')}`
  const run = `nightly-${minutes('2026-01-02T03:00:00Z')}`
  t.same(names(response.children), [old, run])
  t.same(Object.keys(response.children[0] as KubeObject), ['apiVersion', 'kind', 'metadata'], 'kept by identity')
  t.match(effects, [{
    type: 'StopJobFlow',
    target: { apiVersion: 'jobhooks.io/v1alpha1', kind: 'JobFlow', namespace: 'default', name: old },
    activeDeadlineSeconds: 544,
    annotations: { 'jobhooks.io/replaced-by': run }
  }], 'the 544 s it ran since 02:55:01: its deadline has passed')
  t.equal(effects.length, 1)
  t.equal(response.status.activeCount, 2, 'the stopped run counts until it has stopped')
  t.match(condition(response.status, 'Scheduled').message, `stopping ${old}`)
})

t.test('Replace stops a run left running beside a newer one, whichever sync sees it', async t => {
  const request = fixture<SyncRequest>('cronjobflow/sync-replace.v2.json')
  const group = request.children['JobFlow.jobhooks.io/v1alpha1'] as Record<string, KubeObject>
  const old = Object.values(group)[0] as KubeObject
  const newer = structuredClone(old)
  const name = `nightly-${minutes('2026-01-02T03:00:00Z')}`
  newer.metadata.name = name
  newer.metadata.annotations = { 'jobhooks.io/scheduled-time': '2026-01-02T03:00:00Z' }
  group[`default/${name}`] = newer
  request.parent.status = { lastScheduleTime: '2026-01-02T03:00:00Z' }
  const { response, effects } = syncCronJobFlow(request, context())
  t.same(names(response.children), [old.metadata.name, name], 'nothing new to start')
  t.match(effects, [{
    type: 'StopJobFlow',
    target: { name: old.metadata.name },
    activeDeadlineSeconds: 544,
    annotations: { 'jobhooks.io/replaced-by': name }
  }], 'the older one stops; the newest goes on')
  t.equal(effects.length, 1)

  // Once the older one shows the mark, it is not asked again.
  old.metadata.annotations = { ...old.metadata.annotations, 'jobhooks.io/replaced-by': name }
  t.same(syncCronJobFlow(request, context()).effects, [], 'stopped once')
})

t.test('history: the oldest finished runs past each limit go; running and manual runs are counted as any', async t => {
  const { response } = sync('sync-history.v2.json')
  const m = (iso: string): string => `nightly-${minutes(iso)}`
  t.same(names(response.children).sort(), [
    m('2026-01-02T02:50:00Z'),
    m('2026-01-02T02:55:00Z'),
    m('2026-01-02T03:00:00Z'),
    `nightly-manual-${Date.parse('2026-01-02T02:52:30Z') / 1000}`,
    m('2026-01-02T02:45:00Z')
  ].sort(), 'three succeeded (02:45, 02:50, the manual one), the newest failed (02:55), the running one')
  t.equal(response.status.lastSuccessfulTime, '2026-01-02T02:53:00Z', 'the manual run is the last to succeed')
  t.equal(response.status.lastScheduleTime, '2026-01-02T03:00:00Z')
  t.equal(response.resyncAfterSeconds, 55)
})

t.test('a time missed past startingDeadlineSeconds is not started late, and the status says so', async t => {
  const { response } = sync('sync-missed-window.v2.json')
  t.same(names(response.children), [`nightly-${minutes('2026-01-02T02:00:00Z')}`])
  t.match(condition(response.status, 'Scheduled'), { status: 'False', reason: 'MissedStartingWindow' })
  t.match(condition(response.status, 'Scheduled').message, '2026-01-02T03:00:00Z')
  t.equal(response.status.nextScheduleTime, '2026-01-02T04:00:00Z')
  t.equal(response.resyncAfterSeconds, 3355)
})

t.test('more than 100 missed times: the most recent starts, TooManyMissedTimes', async t => {
  const { response } = sync('sync-too-many-missed.v2.json')
  t.same(names(response.children), [`nightly-${minutes('2026-01-02T03:04:00Z')}`], 'one catch-up, not 1,444')
  t.match(condition(response.status, 'Scheduled'), { status: 'True', reason: 'TooManyMissedTimes' })
  t.equal(response.resyncAfterSeconds, 55)
})

t.test('suspended: no run starts, the running one goes on, no resync', async t => {
  const { response } = sync('sync-suspended.v2.json')
  t.same(names(response.children), [`nightly-${minutes('2026-01-02T02:55:00Z')}`])
  t.equal(response.status.phase, 'Suspended')
  t.equal(response.status.nextScheduleTime, undefined)
  t.equal(response.resyncAfterSeconds, undefined)
  t.match(condition(response.status, 'Scheduled'), { status: 'False', reason: 'Suspended' })
})

t.test('an invalid spec starts nothing and deletes nothing, and names every problem', async t => {
  const { response } = sync('sync-invalid.v2.json')
  t.same(names(response.children), [`nightly-${minutes('2026-01-02T02:55:00Z')}`], 'kept past a history limit of 0')
  t.equal(response.status.phase, 'Invalid')
  const message = condition(response.status, 'Valid').message as string
  t.match(message, 'minute 61')
  t.match(message, 'Mars/Olympus_Mons')
  t.equal(response.resyncAfterSeconds, undefined)
})

t.test('a JobFlowTemplate run: its flows and exit steps, each argument given or defaulted, in the zone', async t => {
  const { response } = sync('sync-template-ref.v2.json')
  t.same(names(response.children), [`nightly-${minutes('2026-01-02T03:00:00Z')}`], '04:00 in Berlin is 03:00Z')
  const run = response.children[0] as KubeObject
  t.same(at(run, 'spec.arguments'), [{ name: 'table', value: 'orders' }, { name: 'mode', value: 'full' }])
  t.same(at(run, 'spec.onExit').map((f: { name: string }) => f.name), ['report'])
  t.equal(run.metadata.labels?.['jobhooks.io/jobflow-template'], 'etl')
  t.equal(response.status.nextScheduleTime, '2026-01-03T03:00:00Z')
})

t.test('a missing JobFlowTemplate or argument is Invalid, naming it', async t => {
  const request = fixture<SyncRequest>('cronjobflow/sync-template-ref.v2.json')
  const missingArgument = structuredClone(request)
  at(missingArgument.parent, 'spec.jobFlowTemplateRef').arguments = []
  t.match(condition(syncCronJobFlow(missingArgument, context()).response.status, 'Valid').message,
    'needs argument table: give it in spec.jobFlowTemplateRef.arguments')
  const missingTemplate = { ...request, related: {} }
  const answer = syncCronJobFlow(missingTemplate, context()).response
  t.equal(answer.status.phase, 'Invalid')
  t.match(condition(answer.status, 'Valid').message, 'JobFlowTemplate "etl" not found in namespace default')
})

t.test('a name longer than 52 characters is Invalid: its runs would not fit', async t => {
  const request = fixture<SyncRequest>('cronjobflow/sync-due.v2.json')
  request.parent.metadata.name = 'n'.repeat(53)
  t.match(condition(syncCronJobFlow(request, context()).response.status, 'Valid').message, 'more than 52')
})

t.test('customize asks for the named JobFlowTemplate only, and for nothing with a written-out run', async t => {
  const request = fixture<CustomizeRequest>('cronjobflow/customize.json')
  t.same(customizeCronJobFlow(request).relatedResources, [{
    apiVersion: 'jobhooks.io/v1alpha1', resource: 'jobflowtemplates', namespace: 'default', names: ['etl']
  }])
  const inline = fixture<SyncRequest>('cronjobflow/sync-due.v2.json')
  t.same(customizeCronJobFlow(inline).relatedResources, [])
})
