// Suspend: `spec.suspend: true` starts no Job and suspends the running ones through their own
// `spec.suspend`; `false` resumes them and the flow goes on where it was.
//
// How one field of a Job that exists gets changed: the JobFlow's CompositeController updates Jobs
// InPlace, and Metacontroller v4.17.2 then merges our answer into the Job three ways, against the
// Job's last-applied annotation (what it created the Job from). So a kept Job is answered as it was
// last applied (keepAsApplied, src/k8s/objects.ts) — which changes nothing — and to suspend or
// resume it, as last applied with `spec.suspend` and our annotation changed: the merge changes
// those two and nothing else. A Job that finished is never touched, nor is `spec.suspend` of a Job
// someone else decides: Kueue's for a queued Job, every field for one `spec.managedBy` another
// controller (src/k8s/kueue.ts). Such a Job is answered with its observed `spec.suspend`, since the
// merge takes the answer's scalars over the observed ones whatever the last-applied copy says.
import type { Condition, KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { keepAsObserved, lastApplied } from '../../k8s/objects.js'
import { setCondition } from '../../k8s/conditions.js'
import { jobOutcome } from '../../k8s/jobs.js'
import { suspendOwnerOf } from '../../k8s/kueue.js'

/**
 * On a Job the JobFlow suspended: resuming sets its `spec.suspend` back to false. A Job whose own
 * template said `suspend: true` has no such mark and stays as its template says.
 */
export const SUSPENDED_BY_JOBFLOW = 'jobhooks.io/suspended-by-jobflow'

/** A kept Job as the answer gives it back. */
export interface KeptJob {
  job: KubeObject
  /** Suspended by the JobFlow now. */
  suspended: boolean
  /** Who decides the running Job's `spec.suspend` instead of the JobFlow, e.g. `Kueue (queue q)`. */
  leftTo?: string
}

/** A kept Job as the answer gives it back, and whether it is suspended by the JobFlow now. */
export function keptJob (observed: KubeObject, suspend: boolean): KeptJob {
  const applied = lastApplied(observed)
  // Without the annotation there is nothing to merge against: the identity changes nothing.
  if (applied === undefined) return { job: keepAsObserved(observed), suspended: false }
  const owner = suspendOwnerOf(observed)
  const finished = jobOutcome(observed) !== undefined
  if (owner !== undefined) {
    const job = withObservedSuspend(applied, observed)
    return finished ? { job, suspended: false } : { job, suspended: false, leftTo: owner }
  }
  if (finished) return { job: applied, suspended: false }
  const spec = isRecord(applied.spec) ? applied.spec : {}
  const annotations = applied.metadata.annotations ?? {}
  const ours = annotations[SUSPENDED_BY_JOBFLOW] === 'true'
  if (suspend && spec.suspend !== true) {
    return {
      job: {
        ...applied,
        metadata: { ...applied.metadata, annotations: { ...annotations, [SUSPENDED_BY_JOBFLOW]: 'true' } },
        spec: { ...spec, suspend: true }
      },
      suspended: true
    }
  }
  if (!suspend && ours) {
    const { [SUSPENDED_BY_JOBFLOW]: _, ...rest } = annotations
    const metadata = { ...applied.metadata }
    if (Object.keys(rest).length > 0) metadata.annotations = rest
    else delete metadata.annotations
    return { job: { ...applied, metadata, spec: { ...spec, suspend: false } }, suspended: false }
  }
  return { job: applied, suspended: suspend && ours }
}

/**
 * The Job as last applied, with `spec.suspend` as observed: Metacontroller's merge takes every
 * scalar the answer gives, so answering the last-applied `suspend: true` would undo Kueue's admission.
 */
/**
 * A Job answered as it stands, for an invalid spec: as last applied, but with the `spec.suspend`
 * Kueue (or the Job's manager) left it with, which the last applied copy would undo.
 */
export function jobAsItStands (observed: KubeObject): KubeObject {
  const applied = lastApplied(observed)
  if (applied === undefined) return keepAsObserved(observed)
  return suspendOwnerOf(observed) !== undefined ? withObservedSuspend(applied, observed) : applied
}

function withObservedSuspend (applied: KubeObject, observed: KubeObject): KubeObject {
  const { suspend: _, ...spec } = isRecord(applied.spec) ? applied.spec : {}
  const suspend = isRecord(observed.spec) ? observed.spec.suspend : undefined
  return { ...applied, spec: suspend === undefined ? spec : { ...spec, suspend } }
}

/** What suspending did to the Jobs that run: how many it suspended, which it left to whom. */
export interface SuspendedJobs {
  suspended: number
  /** `<job> (<who decides>)` for each unfinished Job whose suspend is not the JobFlow's to write. */
  leftTo: string[]
}

/**
 * Condition `Suspended`, as a Job has it: True while `spec.suspend` holds (with how many running
 * Jobs it suspended, and which it left to Kueue or their own controller), False once resumed;
 * absent on a JobFlow never suspended.
 */
export function suspendedCondition (
  conditions: Condition[],
  suspend: boolean,
  jobs: SuspendedJobs,
  now: Date
): Condition[] {
  if (suspend) {
    const suspended = jobs.suspended === 0
      ? ''
      : `; ${jobs.suspended} running Job${jobs.suspended === 1 ? '' : 's'} suspended`
    const left = jobs.leftTo.length === 0 ? '' : `; left as they are: ${jobs.leftTo.join(', ')}`
    return setCondition(
      conditions,
      {
        type: 'Suspended',
        status: 'True',
        reason: 'JobFlowSuspended',
        message: `spec.suspend is true: no new Job starts${suspended}${left}`
      },
      now
    )
  }
  if (!conditions.some(c => c.type === 'Suspended' && c.status === 'True')) return conditions
  return setCondition(
    conditions,
    {
      type: 'Suspended',
      status: 'False',
      reason: 'JobFlowResumed',
      message: 'spec.suspend is false: the flow goes on where it was'
    },
    now
  )
}
