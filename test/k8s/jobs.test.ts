import t from 'tap'
import type { KubeObject } from '../../src/k8s/types.js'
import { isFinalFailure, jobFailureMessage, jobFinishTime, jobOutcome } from '../../src/k8s/jobs.js'

/** A fresh Job (jobOutcome remembers per object) with these conditions, all True unless said. */
function job (conditions: Array<Record<string, string>>, status: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'j', creationTimestamp: '2026-01-01T00:00:00Z' },
    status: { ...status, conditions: conditions.map(c => ({ status: 'True', ...c })) }
  }
}

t.test('the outcome is the verdict or the terminal condition, whichever the cluster wrote', async t => {
  t.equal(jobOutcome(job([])), undefined)
  t.equal(jobOutcome(job([{ type: 'SuccessCriteriaMet' }])), 'Succeeded', 'Kubernetes ≥ 1.31, pods still going')
  t.equal(jobOutcome(job([{ type: 'SuccessCriteriaMet' }, { type: 'Complete' }])), 'Succeeded')
  t.equal(jobOutcome(job([{ type: 'Complete' }])), 'Succeeded', 'an older cluster')
  t.equal(jobOutcome(job([{ type: 'FailureTarget' }])), 'Failed')
  t.equal(jobOutcome(job([{ type: 'FailureTarget' }, { type: 'Failed' }])), 'Failed')
  t.equal(jobOutcome(job([{ type: 'Failed' }])), 'Failed')
  t.equal(jobOutcome(job([{ type: 'SuccessCriteriaMet', status: 'False' }])), undefined)
  t.equal(jobOutcome(job([{ type: 'FailureTarget', status: 'False' }, { type: 'Suspended' }])), undefined)
})

t.test('the finish time: completionTime, else the terminal condition\'s, else the verdict\'s', async t => {
  const at = (time: string): Record<string, string> => ({ lastTransitionTime: time })
  t.equal(jobFinishTime(job([{ type: 'Complete', ...at('T2') }], { completionTime: 'T3' })), 'T3')
  t.equal(jobFinishTime(job([{ type: 'SuccessCriteriaMet', ...at('T1') }, { type: 'Complete', ...at('T2') }])), 'T2')
  t.equal(jobFinishTime(job([{ type: 'SuccessCriteriaMet', ...at('T1') }])), 'T1')
  t.equal(jobFinishTime(job([{ type: 'FailureTarget', ...at('T1') }, { type: 'Failed', ...at('T2') }])), 'T2')
  t.equal(jobFinishTime(job([{ type: 'FailureTarget', ...at('T1') }])), 'T1')
  t.equal(jobFinishTime(job([])), undefined)
})

t.test('the failure message: from Failed, else from FailureTarget', async t => {
  t.equal(
    jobFailureMessage(job([{ type: 'FailureTarget', reason: 'DeadlineExceeded', message: 'too slow' }])),
    'DeadlineExceeded: too slow'
  )
  t.equal(
    jobFailureMessage(job([{ type: 'FailureTarget', reason: 'A', message: 'a' }, { type: 'Failed', reason: 'B' }])),
    'B'
  )
  t.equal(jobFailureMessage(job([{ type: 'FailureTarget', reason: 'A', status: 'False' }])), 'the Job failed')
})

t.test('a failure is final when the Job\'s podFailurePolicy decided it (a FailJob rule)', async t => {
  const rule = { reason: 'PodFailurePolicy', message: 'Container main ... matching FailJob rule at index 0' }
  t.ok(isFinalFailure(job([{ type: 'FailureTarget', ...rule }])))
  t.ok(isFinalFailure(job([{ type: 'FailureTarget', ...rule }, { type: 'Failed', ...rule }])))
  t.ok(isFinalFailure(job([{ type: 'Failed', ...rule }])))
  t.notOk(isFinalFailure(job([{ type: 'Failed', reason: 'BackoffLimitExceeded' }])))
  t.notOk(isFinalFailure(job([{ type: 'FailureTarget', reason: 'FailedIndexes' }])))
  t.notOk(isFinalFailure(job([{ type: 'SuccessCriteriaMet', reason: 'PodFailurePolicy' }])), 'only a failure')
})
