// The service's own ttlSecondsAfterFinished: taken out of the JobSpec, carried as a label, and a
// finished Job deleted only once the observed status holds its outcome and the TTL has passed.
import t from 'tap'
import type { JobSpec } from 'kubernetes-types/batch/v1.js'
import type { KubeObject } from '../../../src/k8s/types.js'
import { earliestWake, JOB_TTL_LABEL, jobTtlDecision, takeJobTtl } from '../../../src/controllers/common/job-ttl.js'

const job = (labels: Record<string, string>): KubeObject => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j', labels } })
const now = new Date('2026-01-02T03:00:30Z')

t.test('takeJobTtl moves the TTL from the spec to a label; none without one', async t => {
  const spec = { ttlSecondsAfterFinished: 0, backoffLimit: 1, template: {} } as JobSpec
  t.same(takeJobTtl(spec), { [JOB_TTL_LABEL]: '0' })
  t.same(spec, { backoffLimit: 1, template: {} })
  t.same(takeJobTtl({ template: {} } as JobSpec), {})
})

t.test('jobTtlDecision: kept until recorded, then until the TTL has passed since the recorded finish', async t => {
  const ttl30 = job({ [JOB_TTL_LABEL]: '30' })
  t.same(jobTtlDecision(ttl30, undefined, now), { drop: false }, 'no outcome in the observed status: kept, whatever the time')
  t.same(jobTtlDecision(ttl30, '2026-01-02T03:00:10Z', now), { drop: false, inSeconds: 10 }, 'recorded 20 s ago: 10 s to go')
  t.same(jobTtlDecision(ttl30, '2026-01-02T03:00:00Z', now), { drop: true }, 'recorded 30 s ago: deleted')
  t.same(jobTtlDecision(job({}), '2026-01-01T00:00:00Z', now), { drop: false }, 'no TTL: kept forever')
  t.same(jobTtlDecision(job({ [JOB_TTL_LABEL]: 'soon' }), '2026-01-01T00:00:00Z', now), { drop: false }, 'a label that is not a number: kept')
})

t.test('earliestWake: the soonest TTL still to pass', async t => {
  t.equal(earliestWake([{ drop: true }, { drop: false }, { drop: false, inSeconds: 40 }, { drop: false, inSeconds: 7 }]), 7)
  t.equal(earliestWake([{ drop: true }, { drop: false }]), undefined)
})
