// The CollaSet's status: kuperator's counts and revisions (KusionStack kube-api
// apps/v1alpha1/collaset_types.go names them), and its `Scale` and `Update` conditions, all
// computed from the Pods this sync observed and kept. Nothing here moves unless the cluster does
// (law 5): the messages name counts and revisions, never a clock.
import type { Condition, KubeObject } from '../../k8s/types.js'
import { setCondition } from '../../k8s/conditions.js'
import { isScheduled } from '../../k8s/pods.js'
import { OPS_LIFECYCLE_LABEL, wantsReplace } from '../../k8s/labels.js'
import { selectorString } from '../../k8s/selectors.js'
import { timestamp } from '../../k8s/time.js'
import { validityConditions } from '../common/validity.js'
import type { CollaSetSpec } from './spec.js'
import type { Member } from './members.js'
import { revisionOf } from './pods.js'

export const SCALE = 'Scale'
export const UPDATE = 'Update'

/** The counts of the status, in the order the status lists them. */
export interface ReplicaCounts {
  replicas: number
  scheduledReplicas: number
  readyReplicas: number
  availableReplicas: number
  operatingReplicas: number
  updatedReplicas: number
  updatedReadyReplicas: number
  updatedAvailableReplicas: number
}

export interface CollaSetStatus extends ReplicaCounts {
  observedGeneration?: number
  currentRevision?: string
  nextUpdateTime?: string
  updatedRevision?: string
  selector?: string
  conditions: unknown[]
  [key: string]: unknown
}

/** A condition as a step of the sync decides it; its time comes from setCondition. */
export type ConditionState = Pick<Condition, 'status' | 'reason' | 'message'>

/** What the status is made of: the members kept, and what the sync decided about them. */
export interface StatusInput {
  live: readonly Member[]
  /** Pods being replaced (the origin of an open pair): with the ones a lifecycle holds, operating. */
  replacing: ReadonlySet<KubeObject>
  spec: CollaSetSpec
  updated: string
  scale: ConditionState
  update: ConditionState
  /** While operationDelaySeconds holds the rollout: when the next Pod may start (ms). */
  nextUpdateMs?: number
}

/** In an operation: held by a PodOpsLifecycle, asking to be replaced, or being replaced. */
function isOperating (pod: KubeObject, replacing: ReadonlySet<KubeObject>): boolean {
  return replacing.has(pod) || wantsReplace(pod) || pod.metadata.labels?.[OPS_LIFECYCLE_LABEL] !== undefined
}

/** Counts the live members in one pass: they are thousands, and each count would be a pass. */
export function countReplicas (
  live: readonly Member[],
  updated: string,
  replacing: ReadonlySet<KubeObject>
): ReplicaCounts {
  const counts: ReplicaCounts = {
    replicas: 0,
    scheduledReplicas: 0,
    readyReplicas: 0,
    availableReplicas: 0,
    operatingReplicas: 0,
    updatedReplicas: 0,
    updatedReadyReplicas: 0,
    updatedAvailableReplicas: 0
  }
  for (const { pod, ready, serving } of live) {
    const available = ready && serving
    counts.replicas++
    if (isScheduled(pod)) counts.scheduledReplicas++
    if (ready) counts.readyReplicas++
    if (available) counts.availableReplicas++
    if (isOperating(pod, replacing)) counts.operatingReplicas++
    if (revisionOf(pod) !== updated) continue
    counts.updatedReplicas++
    if (ready) counts.updatedReadyReplicas++
    if (available) counts.updatedAvailableReplicas++
  }
  return counts
}

export function renderStatus (
  input: StatusInput,
  parent: KubeObject,
  previous: Record<string, unknown>,
  now: Date
): CollaSetStatus {
  const { live, spec, updated } = input
  let conditions: Condition[] = validityConditions(previous.conditions, [], now)
  conditions = setCondition(conditions, { type: SCALE, ...input.scale }, now)
  conditions = setCondition(conditions, { type: UPDATE, ...input.update }, now)
  const generation = parent.metadata.generation
  return {
    ...(typeof generation === 'number' ? { observedGeneration: generation } : {}),
    ...countReplicas(live, updated, input.replacing),
    currentRevision: currentRevision(live, updated),
    updatedRevision: updated,
    selector: selectorString(spec.selector),
    // Written only while it says something (law 5): an absolute time, so it stays still.
    ...(input.nextUpdateMs !== undefined ? { nextUpdateTime: timestamp(new Date(input.nextUpdateMs)) } : {}),
    conditions
  }
}

/**
 * The revision most members still run while a rollout is under way (ties: the smallest), the
 * updated one once every member runs it.
 */
function currentRevision (live: readonly Member[], updated: string): string {
  const counts = new Map<string, number>()
  for (const { pod } of live) {
    const revision = revisionOf(pod)
    if (revision === undefined || revision === updated) continue
    counts.set(revision, (counts.get(revision) ?? 0) + 1)
  }
  let best: [string, number] | undefined
  for (const entry of [...counts.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (best === undefined || entry[1] > best[1]) best = entry
  }
  return best?.[0] ?? updated
}
