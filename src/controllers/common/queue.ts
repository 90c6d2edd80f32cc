// `spec.queueName` and `spec.priorityClassName` of a kind that creates Jobs (JobFlow, DaemonJob):
// each Job it creates becomes its own Kueue workload, so a Job that has not been created holds no
// quota. Kueue owns such a Job's `spec.suspend` from then on (docs/kueue.md).
import type { JobSpec } from 'kubernetes-types/batch/v1.js'
import { isLabelValue } from '../../k8s/names.js'
import { PRIORITY_CLASS_LABEL, QUEUE_NAME_LABEL } from '../../k8s/kueue.js'

export interface QueueSpec {
  /** The Kueue LocalQueue the Jobs wait in. */
  queueName?: string
  /** Kueue's WorkloadPriorityClass of their workloads. */
  priorityClassName?: string
}

/** A label value naming a queue or a priority class: undefined when absent, a problem when invalid. */
export function optionalLabelValue (value: unknown, where: string, problems: string[]): string | undefined {
  if (value === undefined || value === null || value === '') return undefined
  if (typeof value !== 'string' || !isLabelValue(value)) {
    problems.push(`${where} must be a label value (at most 63 characters: letters, digits, '-', '_', '.'), ` +
      `not ${JSON.stringify(value)}`)
    return undefined
  }
  return value
}

/** `queueName` and `priorityClassName` of a spec (or of a flow: `queueName` only). */
export function parseQueue (raw: Record<string, unknown>, at: string, problems: string[]): QueueSpec {
  const queueName = optionalLabelValue(raw.queueName, `${at}.queueName`, problems)
  const priorityClassName = optionalLabelValue(raw.priorityClassName, `${at}.priorityClassName`, problems)
  return {
    ...(queueName !== undefined ? { queueName } : {}),
    ...(priorityClassName !== undefined ? { priorityClassName } : {})
  }
}

/**
 * Puts a Job in its queue: Kueue's labels, and `spec.suspend: true` so that no pod starts before
 * Kueue admits it, whether or not Kueue's webhook is installed. Kueue unsuspends it; we never
 * write the field again (src/k8s/kueue.ts). Without a queue name nothing changes.
 */
export function enqueueJob (labels: Record<string, string>, jobSpec: JobSpec, queue: QueueSpec): void {
  if (queue.queueName === undefined) return
  labels[QUEUE_NAME_LABEL] = queue.queueName
  if (queue.priorityClassName !== undefined) labels[PRIORITY_CLASS_LABEL] = queue.priorityClassName
  jobSpec.suspend = true
}
