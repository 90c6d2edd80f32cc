// The benchmark's CronJobFlow request is one the hook answers correctly — every run kept by its
// identity, the due one started — and `verify` notices a wrong answer. Its speed is measured by
// `npm run bench`, never asserted here.
import t from 'tap'
import { cronJobFlowFixture } from '../../../bench/cronjobflow.js'
import { syncCronJobFlow } from '../../../src/controllers/cronjobflow/sync.js'
import type { KubeObject } from '../../../src/k8s/types.js'
import { context } from '../../helpers/fixtures.js'

const wire = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T

for (const size of [1, 10, 100]) {
  t.test(`${size} runs`, async t => {
    const fixture = cronJobFlowFixture(size)
    const { response, effects } = syncCronJobFlow(structuredClone(fixture.request), context(fixture.now))
    const answer = wire(response)
    t.doesNotThrow(() => fixture.verify(answer), 'the hook answers as expected')
    t.same(effects, [])
    t.equal(answer.children.length, size + 1)
    t.equal(answer.children.at(-1)?.metadata.name, `etl-5m-${Date.parse('2026-03-10T09:35:00Z') / 60_000}`)
    t.equal(JSON.stringify(cronJobFlowFixture(size).request), JSON.stringify(fixture.request), 'deterministic')
    const runs = Object.values(fixture.request.children['JobFlow.jobhooks.io/v1alpha1'] ?? {})
    const phases = runs.map(r => (r.status as { phase: string }).phase)
    t.equal(phases.at(-1), 'Running', 'the newest run runs')
    t.equal(phases.filter(p => p === 'Failed').length, Math.floor((size + 5) / 10), 'one in ten failed')
    for (const r of runs) {
      const status = r.status as { jobs: unknown[] }
      t.equal(status.jobs.length, 50, `${r.metadata.name}: a record per step`)
    }

    t.throws(() => fixture.verify({ ...answer, children: answer.children.slice(1) }), /children, expected/)
    const changed = structuredClone(answer.children) as KubeObject[]
    ;(changed[0] as KubeObject).spec = { flows: [] }
    t.throws(() => fixture.verify({ ...answer, children: changed }), /not answered by its identity/)
    t.throws(() => fixture.verify({ ...answer, resyncAfterSeconds: 300 }), /resyncAfterSeconds/)
    t.throws(() => fixture.verify({ ...answer, status: { ...answer.status, activeCount: 1 } }), /activeCount/)
  })
}
t.throws(() => cronJobFlowFixture(0), /at least 1 run/)

t.test('npm run bench times a CronJobFlow of 10 and of 100 runs', async t => {
  const { CASES } = await import('../../../bench/kinds.js')
  const c = CASES.find(c => c.kind === 'CronJobFlow')
  t.match(c, { path: '/hooks/cronjobflow/sync', unit: 'runs' })
  t.same(c?.sizes, [10, 100])
})
