// CronJobFlow on the in-process Metacontroller, its clock fast-forwarded: runs start at their
// schedule times (each a JobFlow the JobFlow controller then runs), Forbid never lets two run at
// once, Replace stops the one running, suspend holds, history is trimmed, and a time zone's
// daylight-saving changes skip or repeat a time as Kubernetes' CronJob does.
import t from 'tap'
import type { KubeObject } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'
import { Simulator } from '../../src/simulator/simulator.js'
import type { SimulatorOptions } from '../../src/simulator/types.js'
import { controllerFromManifest, jobflowController, JOBHOOKS_API_VERSION } from '../../src/simulator/controllers.js'
import type { ObjectRef } from '../../src/simulator/objects.js'

const cronRef: ObjectRef = {
  apiVersion: JOBHOOKS_API_VERSION, kind: 'CronJobFlow', namespace: 'default', name: 'nightly'
}

function cronJobFlow (spec: Record<string, unknown>): KubeObject {
  const containers = [{ name: 'main', image: 'busybox:1.36', command: ['sh', '-c', 'work'] }]
  return {
    apiVersion: JOBHOOKS_API_VERSION,
    kind: 'CronJobFlow',
    metadata: { name: 'nightly', namespace: 'default' },
    spec: {
      jobFlowTemplate: { spec: { flows: [{ name: 'work', jobTemplate: { template: { spec: { containers } } } }] } },
      ...spec
    }
  }
}

function simulator (
  t: { teardown: (fn: () => unknown) => void }, start: string, options: Partial<SimulatorOptions> = {}
): Simulator {
  const sim = new Simulator({
    controllers: [controllerFromManifest('cronjobflows', 'v2'), jobflowController('v2')],
    start,
    transport: 'direct',
    ...options
  })
  t.teardown(async () => await sim.close())
  return sim
}

/** The runs' JobFlows created and deleted over the timeline, in order, by name. */
function runEvents (sim: Simulator, type: 'created' | 'deleted'): string[] {
  return sim.timeline.filter(e => e.type === type && e.object.kind === 'JobFlow').map(e => e.object.name)
}

/** A run's name for a schedule time. */
const runAt = (iso: string): string => `nightly-${Date.parse(iso) / 60_000}`

const runs = (sim: Simulator): KubeObject[] =>
  sim.list({ apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow' }, 'default')
const phaseOf = (flow: KubeObject): unknown => (isRecord(flow.status) ? flow.status.phase : undefined)
const running = (sim: Simulator): number =>
  runs(sim).filter(f => phaseOf(f) !== 'Succeeded' && phaseOf(f) !== 'Failed').length

t.test('every 5 minutes for an hour: a run at each time, the 3 newest successes kept', async t => {
  const sim = simulator(t, '2026-01-01T00:00:30Z')
  sim.apply(cronJobFlow({ schedule: '*/5 * * * *' }))
  await sim.advance(3600)
  const expected = Array.from({ length: 12 }, (_, i) => runAt(new Date(Date.parse('2026-01-01T00:05:00Z') + i * 300_000)
    .toISOString()))
  t.same(runEvents(sim, 'created'), expected, '00:05 … 01:00, one each')
  t.same(runs(sim).map(f => f.metadata.name), expected.slice(-3), 'the oldest nine deleted')
  t.same(runEvents(sim, 'deleted'), expected.slice(0, 9), 'deleted oldest first')
  const status = sim.get(cronRef)?.status as Record<string, unknown>
  t.match(status, {
    lastScheduleTime: '2026-01-01T01:00:00Z', nextScheduleTime: '2026-01-01T01:05:00Z', phase: 'Scheduled'
  })
})

t.test('Forbid, every minute, runs of 150 s: never two at once, each named by a minute it started within', async t => {
  const sim = simulator(t, '2026-01-01T00:00:30Z', { jobs: { durationSeconds: 150 } })
  sim.apply(cronJobFlow({ schedule: '* * * * *', concurrencyPolicy: 'Forbid' }))
  let most = 0
  await sim.runUntil(s => {
    most = Math.max(most, running(s))
    return s.seconds() >= 600
  })
  t.equal(most, 1, 'at most one run at a time')
  const created = sim.timeline.filter(e => e.type === 'created' && e.object.kind === 'JobFlow')
  t.ok(created.length >= 3 && created.length <= 5, `${created.length} runs in 10 minutes of 150 s runs`)
  for (const event of created) {
    const minute = Number(event.object.name.replace('nightly-', '')) * 60_000
    const at = sim.now().getTime() - (sim.seconds() - event.seconds) * 1000
    t.ok(at >= minute && at - minute < 60_000, `${event.object.name} started within its minute`)
  }
})

t.test('Replace, every minute, a run of 150 s: each run stops the one before, whose records stay', async t => {
  const sim = simulator(t, '2026-01-01T00:00:30Z', { jobs: { durationSeconds: 150 } })
  sim.apply(cronJobFlow({ schedule: '* * * * *', concurrencyPolicy: 'Replace', failedJobFlowsHistoryLimit: 5 }))
  await sim.advance(200)
  const first = sim.get({ ...cronRef, kind: 'JobFlow', name: runAt('2026-01-01T00:01:00Z') }) as KubeObject
  t.equal(first.metadata.annotations?.['jobhooks.io/replaced-by'], runAt('2026-01-01T00:02:00Z'))
  t.equal(phaseOf(first), 'Failed', 'stopped by its deadline')
  const records = (first.status as { jobs: Array<{ name: string, phase: string }> }).jobs
  t.same(records.map(r => [r.name, r.phase]), [['work', 'Failed']], 'its record kept')
  t.notOk(sim.listJobs().some(j => j.metadata.name === `${runAt('2026-01-01T00:01:00Z')}-work`), 'its Job deleted')
})

t.test('suspend holds every run; resuming starts one catch-up for the most recent missed time', async t => {
  const sim = simulator(t, '2026-01-01T00:00:30Z')
  sim.apply(cronJobFlow({ schedule: '*/5 * * * *' }))
  await sim.advance(400)
  sim.edit(cronRef, o => { (o.spec as Record<string, unknown>).suspend = true })
  await sim.advance(1200)
  t.same(runEvents(sim, 'created'), [runAt('2026-01-01T00:05:00Z')], 'nothing while suspended')
  sim.edit(cronRef, o => { (o.spec as Record<string, unknown>).suspend = false })
  await sim.advance(30)
  t.same(runEvents(sim, 'created').slice(1), [runAt('2026-01-01T00:25:00Z')], 'one catch-up, for 00:25')
})

t.test('America/New_York: no 02:30 on the spring-forward day, 01:30 twice on the fall-back day', async t => {
  const spring = simulator(t, '2026-03-07T00:00:00Z')
  spring.apply(cronJobFlow({ schedule: '30 2 * * *', timeZone: 'America/New_York' }))
  await spring.advance(3 * 86_400)
  t.same(runEvents(spring, 'created'), [
    runAt('2026-03-07T07:30:00Z'), // 02:30 EST
    runAt('2026-03-09T06:30:00Z') // 02:30 EDT; on 03-08 the clock went from 02:00 to 03:00
  ])
  const fall = simulator(t, '2026-10-31T00:00:00Z')
  fall.apply(cronJobFlow({ schedule: '30 1 * * *', timeZone: 'America/New_York' }))
  await fall.advance(3 * 86_400)
  t.same(runEvents(fall, 'created'), [
    runAt('2026-10-31T05:30:00Z'),
    runAt('2026-11-01T05:30:00Z'), // 01:30 EDT
    runAt('2026-11-01T06:30:00Z'), // 01:30 EST, an hour later
    runAt('2026-11-02T06:30:00Z')
  ])
})
