import t from 'tap'
import { testApp } from '../helpers/app.js'
import { fixture } from '../helpers/fixtures.js'
import type { KindHooks } from '../../src/protocol/hooks.js'
import type { Effect, EffectExecutor, EffectOutcome } from '../../src/effects/types.js'
import { RecordingExecutor } from '../../src/effects/dry-run.js'

const pod = (name: string, uid: string): Effect => ({
  type: 'InjectEphemeralContainers',
  target: { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name, uid },
  containers: [{ name: 'debug', image: 'busybox' }]
})

/** A kind whose sync asks for two injections and otherwise echoes the previous status. */
const injecting: KindHooks = {
  kind: 'jobflow',
  phaseField: 'phase',
  sync: request => ({ response: { status: { phase: 'Running', conditions: (request.parent.status as any)?.conditions ?? [] }, children: [] }, effects: [pod('a', 'u1'), pod('b', 'u2')] })
}

class FailingFor implements EffectExecutor {
  readonly mode = 'cluster' as const
  constructor (private readonly name: string) {}
  async apply (effects: Effect[]): Promise<EffectOutcome[]> {
    return effects.map(effect => effect.target.name === this.name
      ? { effect, result: 'failed', message: 'HTTP 422: ephemeral containers are disabled' }
      : { effect, result: 'applied' })
  }
}

t.test('effects go to the executor; all applied gives EffectsApplied True and no resync', async t => {
  const executor = new RecordingExecutor()
  const app = await testApp(t, { kinds: [injecting], effects: executor })
  const response = await app.inject({ method: 'POST', url: '/hooks/jobflow/sync', payload: fixture('jobflow/sync-new.v2.json') })
  const body = response.json()
  t.same(executor.recorded.map(e => e.target.name), ['a', 'b'])
  t.match(body.status.conditions, [{ type: 'EffectsApplied', status: 'True', message: 'every effect was applied' }])
  t.notOk('resyncAfterSeconds' in body)
})

t.test('a failed effect is named in the status and asks for a short resync', async t => {
  const app = await testApp(t, { kinds: [injecting], effects: new FailingFor('b') })
  const body = (await app.inject({ method: 'POST', url: '/hooks/jobflow/sync', payload: fixture('jobflow/sync-new.v2.json') })).json()
  t.match(body.status.conditions, [{ type: 'EffectsApplied', status: 'False', reason: 'EffectFailed', message: 'inject debug into Pod default/b: HTTP 422: ephemeral containers are disabled' }])
  t.equal(body.resyncAfterSeconds, 5)
  t.same(Object.keys(body).sort(), ['children', 'resyncAfterSeconds', 'status'])
})

t.test('a hook without effects leaves the condition alone; a failing hook asks for none', async t => {
  const executor = new RecordingExecutor()
  const app = await testApp(t, { effects: executor })
  const body = (await app.inject({ method: 'POST', url: '/hooks/jobflow/sync', payload: fixture('jobflow/sync-new.v2.json') })).json()
  t.notOk(body.status.conditions.some((c: any) => c.type === 'EffectsApplied'))
  const broken: KindHooks = { kind: 'jobflow', phaseField: 'phase', sync: () => { throw new Error('boom') } }
  const brokenApp = await testApp(t, { kinds: [broken], effects: executor })
  await brokenApp.inject({ method: 'POST', url: '/hooks/jobflow/sync', payload: fixture('jobflow/sync-new.v2.json') })
  t.equal(executor.recorded.length, 0, 'doubt never acts')
})
