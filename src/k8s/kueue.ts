// Kueue's vocabulary for a batch/v1 Job, and who owns a Job's fields. A Job labelled with a queue
// name is Kueue's to start and stop: its webhook suspends it at creation, its reconciler
// unsuspends it on admission and suspends it again on preemption. A Job whose `spec.managedBy`
// names another controller (MultiKueue sets it) has its status written by that controller.
import type { KubeObject } from './types.js'
import { isRecord } from './types.js'
import { jobOutcome } from './jobs.js'

export const QUEUE_NAME_LABEL = 'kueue.x-k8s.io/queue-name'
/** Kueue's WorkloadPriorityClass of the Job's workload. */
export const PRIORITY_CLASS_LABEL = 'kueue.x-k8s.io/priority-class'
/** `spec.managedBy` of a Job the built-in Job controller runs (the same as none). */
export const BUILT_IN_JOB_CONTROLLER = 'kubernetes.io/job-controller'

/** The LocalQueue a Job waits in, when Kueue manages it. */
export function queueNameOf (job: KubeObject): string | undefined {
  const name = job.metadata.labels?.[QUEUE_NAME_LABEL]
  return name !== undefined && name !== '' ? name : undefined
}

/** The controller named by a Job's `spec.managedBy`, when it is not the built-in one. */
export function otherManagerOf (job: KubeObject): string | undefined {
  const managedBy = isRecord(job.spec) ? job.spec.managedBy : undefined
  if (typeof managedBy !== 'string' || managedBy === '' || managedBy === BUILT_IN_JOB_CONTROLLER) return undefined
  return managedBy
}

/**
 * Who, other than us, decides a Job's `spec.suspend` (Kueue, for a queued Job) or every field of
 * it (the controller its `spec.managedBy` names); undefined when nobody does.
 */
export function suspendOwnerOf (job: KubeObject): string | undefined {
  const manager = otherManagerOf(job)
  if (manager !== undefined) return manager
  const queue = queueNameOf(job)
  return queue !== undefined ? `Kueue (queue ${queue})` : undefined
}

/**
 * The queue a Job waits in while Kueue holds it: queued, suspended and unfinished. Kueue suspends
 * it at creation and again when it preempts it, and unsuspends it on admission; a suspended Job
 * runs no pod, so such a Job waits for quota rather than running.
 */
export function queueHolding (job: KubeObject): string | undefined {
  const queue = queueNameOf(job)
  if (queue === undefined || otherManagerOf(job) !== undefined) return undefined
  if (!isRecord(job.spec) || job.spec.suspend !== true) return undefined
  return jobOutcome(job) === undefined ? queue : undefined
}
