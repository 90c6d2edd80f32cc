// The service's own ttlSecondsAfterFinished: taken out of the JobSpec, carried as a label, and a
// finished Job deleted only once the observed status holds its outcome and the TTL has passed.
import t from 'tap'
import type { JobSpec } from 'kubernetes-types/batch/v1.js'
import type { KubeObject } from '../../../src/k8s/types.js'
import {
  earliestWake, JOB_TTL_LABEL, jobTtlDecision, takeJobTtl, type JobTtlDecision, type RecordedJob
} from '../../../src/controllers/common/job-ttl.js'

const now = new Date('2026-01-02T03:00:30Z')
const AGO_20 = '2026-01-02T03:00:10Z'
const AGO_30 = '2026-01-02T03:00:00Z'
const LONG_AGO = '2026-01-01T00:00:00Z'

/** A Job that succeeded, at `completionTime` when given (else its status says no time). */
function finished (labels: Record<string, string>, completionTime?: string): KubeObject {
  const conditions = [{ type: 'Complete', status: 'True' }]
  const status = completionTime === undefined ? { conditions } : { conditions, completionTime }
  return { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j', labels }, status }
}

t.test('takeJobTtl moves the TTL from the spec to a label; none without one', async t => {
  const spec = { ttlSecondsAfterFinished: 0, backoffLimit: 1, template: {} } as JobSpec
  t.same(takeJobTtl(spec), { [JOB_TTL_LABEL]: '0' })
  t.same(spec, { backoffLimit: 1, template: {} })
  t.same(takeJobTtl({ template: {} } as JobSpec), {})
})

t.test('jobTtlDecision: kept until recorded, then until the TTL has passed since the finish', async t => {
  const ttl30 = finished({ [JOB_TTL_LABEL]: '30' })
  const recorded = (completionTime: string): RecordedJob => ({ jobName: 'j', phase: 'Succeeded', completionTime })
  t.same(
    jobTtlDecision(ttl30, undefined, now),
    { drop: false },
    'no outcome in the observed status: kept, whatever the time'
  )
  t.same(
    jobTtlDecision(ttl30, { jobName: 'j', phase: 'Running' }, now),
    { drop: false },
    'a record of it running: kept'
  )
  t.same(jobTtlDecision(ttl30, { ...recorded(AGO_30), jobName: 'other' }, now), { drop: false }, 'another Job recorded')
  t.same(jobTtlDecision(ttl30, recorded(AGO_20), now), { drop: false, inSeconds: 10 }, 'finished 20 s ago: 10 s to go')
  t.same(jobTtlDecision(ttl30, recorded(AGO_30), now), { drop: true }, 'finished 30 s ago: deleted')
  t.same(jobTtlDecision(finished({}), recorded(LONG_AGO), now), { drop: false }, 'no TTL: kept forever')
  t.same(jobTtlDecision(finished({ [JOB_TTL_LABEL]: 'soon' }), recorded(LONG_AGO), now), { drop: false },
    'a label that is not a number: kept')
})

t.test('jobTtlDecision counts from the Job\'s own finish time, the recorded one only when the Job has ' +
  'none', async t => {
  const stamped = finished({ [JOB_TTL_LABEL]: '30' }, AGO_20)
  const record: RecordedJob = { jobName: 'j', phase: 'Succeeded', completionTime: AGO_30 }
  t.same(jobTtlDecision(stamped, record, now), { drop: false, inSeconds: 10 }, 'the Job finished 20 s ago')
  t.same(jobTtlDecision(stamped, { jobName: 'j', phase: 'Succeeded' }, now), { drop: false, inSeconds: 10 },
    'a record without a time (a DaemonJob\'s success)')
})

t.test('earliestWake: the soonest TTL still to pass', async t => {
  const decisions: JobTtlDecision[] = [
    { drop: true },
    { drop: false },
    { drop: false, inSeconds: 40 },
    { drop: false, inSeconds: 7 }
  ]
  t.equal(earliestWake(decisions), 7)
  t.equal(earliestWake([{ drop: true }, { drop: false }]), undefined)
})

t.test('jobTtlDecision: a verdict alone (SuccessCriteriaMet, FailureTarget) starts no TTL; Complete or Failed ' +
  'does', async t => {
  const job = (type: string, extra: Array<Record<string, string>> = []): KubeObject => ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'j', labels: { [JOB_TTL_LABEL]: '0' } },
    status: { conditions: [{ type, status: 'True', lastTransitionTime: LONG_AGO }, ...extra] }
  })
  const succeeded: RecordedJob = { jobName: 'j', phase: 'Succeeded', completionTime: LONG_AGO }
  const failed: RecordedJob = { jobName: 'j', phase: 'Failed', completionTime: LONG_AGO }
  t.same(jobTtlDecision(job('SuccessCriteriaMet'), succeeded, now), { drop: false },
    'recorded, TTL 0, long ago: kept until Complete, which an older version reads too')
  t.same(jobTtlDecision(job('FailureTarget'), failed, now), { drop: false }, 'the same for FailureTarget')
  const complete = job('SuccessCriteriaMet', [{ type: 'Complete', status: 'True', lastTransitionTime: AGO_20 }])
  t.same(jobTtlDecision(complete, succeeded, now), { drop: true }, 'Complete: the TTL counts, and has passed')
})
