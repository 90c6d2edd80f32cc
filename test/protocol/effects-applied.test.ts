import t from 'tap'
import { testApp } from '../helpers/app.js'
import { fixture } from '../helpers/fixtures.js'
import { valueAt } from '../helpers/objects.js'
import type { KindHooks } from '../../src/protocol/hooks.js'
import type { Effect, EffectExecutor, EffectOutcome, ObjectRef } from '../../src/effects/types.js'
import { RecordingExecutor } from '../../src/effects/dry-run.js'

const podRef = (name: string, uid: string): ObjectRef => ({
  apiVersion: 'v1',
  kind: 'Pod',
  namespace: 'default',
  name,
  uid,
})
const pod = (name: string, uid: string): Effect => ({
  type: 'InjectEphemeralContainers',
  target: podRef(name, uid),
  containers: [{ name: 'debug', image: 'busybox' }],
})

/** A kind whose sync asks for two injections and otherwise echoes the previous status. */
const injecting: KindHooks = {
  kind: 'jobflow',
  phaseField: 'phase',
  statusFields: ['phase', 'conditions'],
  sync: (request) => ({
    response: {
      status: { phase: 'Running', conditions: valueAt(request.parent.status, 'conditions') ?? [] },
      children: [],
    },
    effects: [pod('a', 'u1'), pod('b', 'u2')],
  }),
}

class FailingFor implements EffectExecutor {
  readonly mode = 'cluster' as const
  constructor (private readonly name: string) {}
  async apply (_parent: ObjectRef | undefined, effects: Effect[]): Promise<EffectOutcome[]> {
    return effects.map((effect) =>
      effect.target.name === this.name
        ? { effect, result: 'failed', message: 'HTTP 422: ephemeral containers are disabled' }
        : { effect, result: 'applied' }
    )
  }
}

t.test('all applied gives EffectsApplied True and no resync', async (t) => {
  const app = await testApp(t, { kinds: [injecting], effects: new FailingFor('none') })
  const body = (
    await app.inject({ method: 'POST', url: '/hooks/jobflow/sync', payload: fixture('jobflow/sync-new.v2.json') })
  ).json()
  t.match(body.status.conditions, [
    { type: 'EffectsApplied', status: 'True', reason: 'Applied', message: 'every effect was applied' },
  ])
  t.notOk('resyncAfterSeconds' in body)
})

t.test('dry-run: effects are recorded, and the status never says they were applied', async (t) => {
  const executor = new RecordingExecutor()
  const app = await testApp(t, { kinds: [injecting], effects: executor })
  const body = (
    await app.inject({ method: 'POST', url: '/hooks/jobflow/sync', payload: fixture('jobflow/sync-new.v2.json') })
  ).json()
  t.same(
    executor.recorded.map((e) => e.target.name),
    ['a', 'b']
  )
  t.same(
    body.status.conditions.filter((c: any) => c.type === 'EffectsApplied'),
    [
      {
        type: 'EffectsApplied',
        status: 'False',
        reason: 'DryRun',
        message: '2 effects were recorded and not applied: the service has no cluster credentials (dry-run)',
        lastTransitionTime: '2026-01-02T03:04:05Z',
      },
    ]
  )
  t.notOk('resyncAfterSeconds' in body, 'nothing to retry')
  const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
  t.match(metrics, /jobhooks_effects_total\{type="InjectEphemeralContainers",result="dry_run"\} 2/)
  const one = new RecordingExecutor()
  t.same(
    (
      await one.apply({ ...podRef('p', 'u'), kind: 'JobFlow', apiVersion: 'jobhooks.io/v1alpha1' }, [pod('a', 'u1')])
    ).map((o) => o.result),
    ['dry_run']
  )
})

t.test("dry-run keeps effects within the parent's reach too", async (t) => {
  const executor = new RecordingExecutor()
  const parent: ObjectRef = {
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'EphemeralJob',
    namespace: 'team-a',
    name: 'ej',
    uid: 'uid-ej',
  }
  const outcomes = await executor.apply(parent, [
    pod('a', 'u1'),
    { ...pod('b', 'u2'), target: { ...podRef('b', 'u2'), namespace: 'team-a' } },
  ])
  t.same(
    outcomes.map((o) => [o.effect.target.name, o.result, o.message]),
    [
      ['a', 'refused', "outside the parent's namespace team-a"],
      ['b', 'dry_run', undefined],
    ]
  )
  t.same(
    executor.recorded.map((e) => e.target.name),
    ['b']
  )

  t.same(
    // eslint-disable-next-line no-useless-call -- the executor's own apply, not Function.prototype.apply
    (await executor.apply(undefined, [pod('c', 'u3')])).map((o) => o.result),
    ['refused'],
    'no parent UID, nothing in reach'
  )
})

t.test('a failed effect is named in the status and asks for a short resync', async (t) => {
  const app = await testApp(t, { kinds: [injecting], effects: new FailingFor('b') })
  const body = (
    await app.inject({ method: 'POST', url: '/hooks/jobflow/sync', payload: fixture('jobflow/sync-new.v2.json') })
  ).json()
  t.match(body.status.conditions, [
    {
      type: 'EffectsApplied',
      status: 'False',
      reason: 'EffectFailed',
      message: 'inject debug into Pod default/b: HTTP 422: ephemeral containers are disabled',
    },
  ])
  t.equal(body.resyncAfterSeconds, 5)
  t.same(Object.keys(body).sort(), ['children', 'resyncAfterSeconds', 'status'])
})

t.test('a hook without effects leaves the condition alone; a failing hook asks for none', async (t) => {
  const executor = new RecordingExecutor()
  const app = await testApp(t, { effects: executor })
  const body = (
    await app.inject({ method: 'POST', url: '/hooks/jobflow/sync', payload: fixture('jobflow/sync-new.v2.json') })
  ).json()
  t.notOk(body.status.conditions.some((c: any) => c.type === 'EffectsApplied'))
  const broken: KindHooks = {
    kind: 'jobflow',
    phaseField: 'phase',
    statusFields: [],
    sync: () => {
      throw new Error('boom')
    },
  }
  const brokenApp = await testApp(t, { kinds: [broken], effects: executor })
  await brokenApp.inject({ method: 'POST', url: '/hooks/jobflow/sync', payload: fixture('jobflow/sync-new.v2.json') })
  t.equal(executor.recorded.length, 0, 'doubt never acts')
})
