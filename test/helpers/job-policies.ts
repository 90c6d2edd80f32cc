// The Job policies of Kubernetes 1.31–1.34 that decide a Job's outcome, as a user writes them:
// the hooks must pass every one to the Job byte for byte.
import type { KubeObject } from '../../src/k8s/types.js'
import { at } from './fixtures.js'

export const JOB_POLICIES = {
  completionMode: 'Indexed',
  completions: 4,
  parallelism: 2,
  backoffLimitPerIndex: 1,
  maxFailedIndexes: 2,
  podReplacementPolicy: 'Failed',
  podFailurePolicy: {
    rules: [
      { action: 'FailJob', onExitCodes: { containerName: 'nginx', operator: 'In', values: [42] } },
      { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
      { action: 'FailIndex', onExitCodes: { operator: 'In', values: [3] } }
    ]
  },
  successPolicy: { rules: [{ succeededIndexes: '0,2-3', succeededCount: 1 }] }
}

/** Each policy field of a Job's spec as JSON text: equal to `policiesAsWritten` only when byte for byte the same. */
export function policiesOf (job: KubeObject | undefined): Record<string, string> {
  return Object.fromEntries(Object.keys(JOB_POLICIES).map(field => [field, JSON.stringify(at(job, `spec.${field}`))]))
}

export const policiesAsWritten = (): Record<string, string> =>
  Object.fromEntries(Object.entries(JOB_POLICIES).map(([field, value]) => [field, JSON.stringify(value)]))
