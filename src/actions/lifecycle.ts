// PodOpsLifecycle (docs/operationjob.md, "PodOpsLifecycle"): for actions registered with it, every target is operated
// inside a lifecycle that takes the Pod out of traffic first and puts it back after:
//
//   Preparing   lock the Pod (label jobhooks.io/ops-lifecycle=<job>; one lifecycle per Pod, a
//               Pod another job holds waits), then set its readiness-gate condition
//               jobhooks.io/service-ready False and wait until the Pod is not Ready;
//   Delaying    wait spec.operationDelaySeconds from the moment the Pod was out of traffic;
//   Operating   the action's own operate/progress;
//   Completing  set the condition True and drop the lock; the target succeeds once the Pod is
//               Ready again (or was replaced by its workload, which the action already judged).
//
// Failure, deadline and deletion of the job release the Pod: the condition goes back to True and
// the lock is dropped, before the action's own release. A Pod without the readiness gate gets the
// lock and the delay only. Everything is recomputed from the observed Pod and the target's
// extraInfo, where the stage and the out-of-traffic time are remembered (law 3): a lost effect is
// owed again on the next sync.
import type { KubeObject } from '../k8s/types.js'
import { fitName } from '../k8s/names.js'
import { timestamp } from '../k8s/time.js'
import { refTo, type Effect, type ObjectRef } from '../effects/types.js'
import { OPS_LIFECYCLE_LABEL, SERVICE_READY } from '../k8s/labels.js'
import { hasServiceGate, isReady, serviceReadyStatus } from '../k8s/pods.js'
import { POD_UID, sameTargetPod } from './pods.js'
import type {
  ActionContext, ActionHandler, ActionJob, ActionTarget, OperateResult, ProgressResult, ReleaseResult
} from './types.js'

/** extraInfo key holding the lifecycle stage of a target. */
export const LIFECYCLE_STAGE = 'Lifecycle'
/** extraInfo key: when the Pod was seen out of traffic (the operation delay counts from there). */
export const TRAFFIC_OFF_TIME = 'TrafficOffTime'
/** extraInfo key: which job holds the Pod while this target waits for it. */
export const LIFECYCLE_HOLDER = 'LifecycleHolder'
/** How soon to look again while the Pod has not caught up with what the lifecycle asked of it. */
export const LIFECYCLE_POLL_SECONDS = 2

export type LifecycleStage = 'Preparing' | 'Operating' | 'Completing'

/** The lock label's value for a job: its name, fitted to a label value. */
export function lifecycleHolder (job: ActionJob): string {
  return fitName(job.name)
}

function stageOf (target: ActionTarget): LifecycleStage {
  const stage = target.detail.extraInfo?.[LIFECYCLE_STAGE]
  return stage === 'Operating' || stage === 'Completing' ? stage : 'Preparing'
}

const holderOf = (pod: KubeObject): string | undefined => pod.metadata.labels?.[OPS_LIFECYCLE_LABEL]

/** The target as it would stand with `extraInfo` merged into its entry. */
function withInfo (target: ActionTarget, extraInfo: Record<string, string>): ActionTarget {
  return { ...target, detail: { ...target.detail, extraInfo: { ...target.detail.extraInfo, ...extraInfo } } }
}

/** The effects that give the Pod back: its condition True again, then no lock. None once it is given back. */
function restore (pod: KubeObject | undefined, job: ActionJob, now: Date): Effect[] {
  if (pod === undefined || holderOf(pod) !== lifecycleHolder(job)) return []
  const ref = refTo(pod)
  if (ref === undefined) return []
  const effects: Effect[] = []
  if (hasServiceGate(pod) && serviceReadyStatus(pod) !== 'True') {
    effects.push(serviceReady(ref, 'True', 'OperationFinished', `OperationJob ${job.name} gave the Pod back`, now))
  }
  effects.push({ type: 'SetPodLabels', target: ref, labels: { [OPS_LIFECYCLE_LABEL]: null } })
  return effects
}

/** The effect that sets the Pod's service-ready condition. */
function serviceReady (ref: ObjectRef, status: 'True' | 'False', reason: string, message: string, now: Date): Effect {
  return {
    type: 'SetPodCondition',
    target: ref,
    condition: { type: SERVICE_READY, status, reason, message, lastTransitionTime: timestamp(now) }
  }
}

function delaySeconds (job: ActionJob): number {
  const value = job.spec.operationDelaySeconds
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : 0
}

/**
 * Preparing and Delaying: what is owed before the action may operate the Pod, or, once it may,
 * when the Pod went out of traffic.
 */
function prepare (target: ActionTarget, context: ActionContext): OperateResult | { trafficOffTime: string } {
  // Only the Pod first seen: another of the same name (its workload made it anew) is not ours to lock.
  const pod = sameTargetPod(target)
  if (pod === undefined) return { effects: [] } // progress decides: the Pod is gone.
  const ref = refTo(pod)
  if (ref === undefined) {
    return { effects: [], error: { reason: 'PodNotFound', message: `Pod ${pod.metadata.name} has no uid` } }
  }
  const { job } = context
  const holder = holderOf(pod)
  const ours = lifecycleHolder(job)
  if (holder !== undefined && holder !== ours) {
    // One lifecycle per Pod: wait for the other job to give it back (the deadline still runs).
    const extraInfo = { [LIFECYCLE_STAGE]: 'Preparing', [LIFECYCLE_HOLDER]: holder }
    return { effects: [], extraInfo, resyncAfterSeconds: LIFECYCLE_POLL_SECONDS }
  }
  const waiting = { [LIFECYCLE_STAGE]: 'Preparing', [LIFECYCLE_HOLDER]: '', [POD_UID]: ref.uid }
  if (holder === undefined) {
    // Lock first; traffic goes off once the lock is seen, so two jobs never both flip the gate.
    const lock: Effect = { type: 'SetPodLabels', target: ref, labels: { [OPS_LIFECYCLE_LABEL]: ours } }
    return { effects: [lock], extraInfo: waiting, resyncAfterSeconds: LIFECYCLE_POLL_SECONDS }
  }
  if (hasServiceGate(pod)) {
    if (serviceReadyStatus(pod) !== 'False') {
      return {
        effects: [serviceReady(ref, 'False', 'OperationPreparing',
          `OperationJob ${job.name} takes the Pod out of traffic`, context.now)],
        extraInfo: waiting,
        resyncAfterSeconds: LIFECYCLE_POLL_SECONDS
      }
    }
    if (isReady(pod)) return { effects: [], extraInfo: waiting, resyncAfterSeconds: LIFECYCLE_POLL_SECONDS }
  }
  const offAt = target.detail.extraInfo?.[TRAFFIC_OFF_TIME] ?? timestamp(context.now)
  const delayEndsMs = Date.parse(offAt) + delaySeconds(job) * 1000
  const nowMs = context.now.getTime()
  if (nowMs < delayEndsMs) {
    const resyncAfterSeconds = Math.max(1, Math.ceil((delayEndsMs - nowMs) / 1000))
    return { effects: [], extraInfo: { ...waiting, [TRAFFIC_OFF_TIME]: offAt }, resyncAfterSeconds }
  }
  return { trafficOffTime: offAt }
}

function podNeverSeen (target: ActionTarget): ProgressResult {
  return { progress: 'Failed', error: { reason: 'PodNotFound', message: `Pod ${target.name} does not exist` } }
}

/** Wraps an action so that it runs inside a PodOpsLifecycle. */
export function withPodOpsLifecycle (action: ActionHandler): ActionHandler {
  return {
    ...(action.relatedResources !== undefined ? { relatedResources: action.relatedResources } : {}),
    ...(action.validate !== undefined ? { validate: action.validate } : {}),
    ...(action.observe !== undefined ? { observe: action.observe } : {}),

    operate (target, context): OperateResult {
      const stage = stageOf(target)
      if (stage === 'Completing') {
        const effects = restore(target.pod, context.job, context.now)
        return { effects, ...(effects.length > 0 ? { resyncAfterSeconds: LIFECYCLE_POLL_SECONDS } : {}) }
      }
      if (stage === 'Preparing') {
        const prepared = prepare(target, context)
        if (!('trafficOffTime' in prepared)) return prepared
        const operating = {
          [LIFECYCLE_STAGE]: 'Operating', [LIFECYCLE_HOLDER]: '', [TRAFFIC_OFF_TIME]: prepared.trafficOffTime
        }
        const result = action.operate(withInfo(target, operating), context)
        return { ...result, extraInfo: { ...operating, ...result.extraInfo } }
      }
      return action.operate(target, context)
    },

    progress (target, context): ProgressResult {
      const stage = stageOf(target)
      if (stage === 'Preparing') {
        if (sameTargetPod(target) !== undefined) return { progress: 'Processing' }
        if (target.detail.extraInfo?.[POD_UID] === undefined) return podNeverSeen(target)
        // The Pod this lifecycle locked is gone. Either it was operated and this status is an older
        // copy (Metacontroller may hand a hook a stale parent), or it went by other hands: either
        // way it is the action's to judge now, and the lifecycle never locks its successor.
        return operating(withInfo(target, { [LIFECYCLE_STAGE]: 'Operating' }), context)
      }
      if (stage === 'Operating') return operating(target, context)
      return completed(target, context)
    },

    release (target, context): ReleaseResult {
      const effects = restore(target.pod, context.job, context.now)
      const inner = action.release(target, context)
      const extraInfo = inner.extraInfo !== undefined ? { extraInfo: inner.extraInfo } : {}
      return { effects: [...effects, ...inner.effects], ...extraInfo }
    }
  }

  /** Operating: the action's progress; its success moves the target on to Completing. */
  function operating (target: ActionTarget, context: ActionContext): ProgressResult {
    const result = action.progress(target, context)
    if (result.progress !== 'Succeeded') {
      return { ...result, extraInfo: { [LIFECYCLE_STAGE]: 'Operating', ...result.extraInfo } }
    }
    // Done operating: give the Pod back (operate returns the effects) before succeeding.
    const extraInfo = { ...result.extraInfo, [LIFECYCLE_STAGE]: 'Completing' }
    return { ...completed(withInfo(target, extraInfo), context), extraInfo }
  }
}

/**
 * Completing: succeeded once the Pod is given back and Ready again. A Pod that is no longer there,
 * or is another Pod now (its workload made a new one), holds no lock of ours: the action already
 * judged that the workload has it back.
 */
function completed (target: ActionTarget, context: ActionContext): ProgressResult {
  const pod = target.pod
  if (pod === undefined) return { progress: 'Succeeded' }
  if (holderOf(pod) === lifecycleHolder(context.job)) return { progress: 'Processing' }
  const same = sameTargetPod(target)
  return { progress: same !== undefined && !isReady(same) ? 'Processing' : 'Succeeded' }
}
