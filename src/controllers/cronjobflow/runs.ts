// A CronJobFlow's runs: the JobFlows it owns, each read from what was observed — its schedule
// time (an annotation, else the name), whether it runs or how it ended — and the names and marks
// a new run gets. A run is named by its schedule time in unix minutes, so one time never makes
// two JobFlows, whatever the status said when the sync was called.
import type { KubeObject, ObjectMap } from '../../k8s/types.js'
import { isRecord, stringOrUndefined } from '../../k8s/types.js'
import { objectsOf } from '../../k8s/objects.js'
import { timestamp } from '../../k8s/time.js'
import type { RunTemplate } from './spec.js'

export const JOBFLOW_API = 'jobhooks.io/v1alpha1'
/** The children's group, as `reads` and `childUpdates` name it. */
export const JOBFLOW_GROUP = `JobFlow.${JOBFLOW_API}`
/** Every run's label: the CronJobFlow it belongs to (for `kubectl get jf -l`). */
export const CRONJOBFLOW_LABEL = 'jobhooks.io/cronjobflow'
/** A scheduled run's annotation: its schedule time (RFC 3339), as Kubernetes marks a CronJob's Job. */
export const SCHEDULED_TIME_ANNOTATION = 'jobhooks.io/scheduled-time'
/** A run started by hand (`kubectl jobhooks trigger cjf`): `manual`, as kubectl marks `create job --from`. */
export const INSTANTIATE_ANNOTATION = 'jobhooks.io/instantiate'
/** On a run concurrencyPolicy Replace stopped: the run that replaced it. */
export const REPLACED_BY_ANNOTATION = 'jobhooks.io/replaced-by'

export type RunState = 'Active' | 'Succeeded' | 'Failed'

/** One observed run. */
export interface Run {
  object: KubeObject
  name: string
  /** The schedule time it was started for; undefined for a run started by hand. */
  scheduledMs?: number
  state: RunState
  /** When it finished (its status.completionTime), once it has. */
  completionTime?: string
  /** Orders runs oldest first: the schedule time, else the creation. */
  sinceMs: number
  /** Stopped by concurrencyPolicy Replace (it may still be finishing). */
  replaced: boolean
}

/** The run of `cronJobFlow` for a schedule time: `<name>-<unix minutes>`. */
export function runName (cronJobFlow: string, scheduledMs: number): string {
  return `${cronJobFlow}-${Math.floor(scheduledMs / 60_000)}`
}

/** Every JobFlow child, oldest first. */
export function observedRuns (children: ObjectMap | undefined, cronJobFlow: string): Run[] {
  return objectsOf(children, 'JobFlow', JOBFLOW_API)
    .map(object => readRun(object, cronJobFlow))
    .sort((a, b) => a.sinceMs - b.sinceMs || (a.name < b.name ? -1 : 1))
}

function readRun (object: KubeObject, cronJobFlow: string): Run {
  const status = isRecord(object.status) ? object.status : {}
  const phase = status.phase
  // An Invalid JobFlow will not run by itself: it counts as failed, so Forbid is not held by it forever.
  const state: RunState = phase === 'Succeeded'
    ? 'Succeeded'
    : phase === 'Failed' || phase === 'Invalid' ? 'Failed' : 'Active'
  const scheduledMs = scheduledTimeOf(object, cronJobFlow)
  const created = Date.parse(object.metadata.creationTimestamp ?? '')
  const completionTime = stringOrUndefined(status.completionTime)
  const annotations = isRecord(object.metadata.annotations) ? object.metadata.annotations : {}
  return {
    object,
    name: object.metadata.name,
    ...(scheduledMs !== undefined ? { scheduledMs } : {}),
    state,
    ...(state !== 'Active' && completionTime !== undefined ? { completionTime } : {}),
    sinceMs: scheduledMs ?? (Number.isFinite(created) ? created : 0),
    replaced: typeof annotations[REPLACED_BY_ANNOTATION] === 'string'
  }
}

/** The schedule time of a scheduled run: its annotation, else the minutes its name ends with. */
function scheduledTimeOf (object: KubeObject, cronJobFlow: string): number | undefined {
  const annotations = isRecord(object.metadata.annotations) ? object.metadata.annotations : {}
  if (annotations[INSTANTIATE_ANNOTATION] === 'manual') return undefined
  const marked = Date.parse(String(annotations[SCHEDULED_TIME_ANNOTATION] ?? ''))
  if (Number.isFinite(marked)) return marked
  const prefix = `${cronJobFlow}-`
  const name = object.metadata.name
  const minutes = name.startsWith(prefix) ? name.slice(prefix.length) : ''
  return /^[0-9]{1,12}$/.test(minutes) ? Number(minutes) * 60_000 : undefined
}

/** A new run's JobFlow: the template's, named and marked for its schedule time. */
export function newRun (
  parent: KubeObject,
  template: RunTemplate,
  scheduledMs: number
): KubeObject {
  const metadata: KubeObject['metadata'] = {
    name: runName(parent.metadata.name, scheduledMs),
    labels: { ...template.labels, [CRONJOBFLOW_LABEL]: parent.metadata.name },
    annotations: { ...template.annotations, [SCHEDULED_TIME_ANNOTATION]: timestamp(new Date(scheduledMs)) }
  }
  if (parent.metadata.namespace !== undefined) metadata.namespace = parent.metadata.namespace
  return { apiVersion: JOBFLOW_API, kind: 'JobFlow', metadata, spec: structuredClone(template.spec) }
}

/** A reference to a run, as a CronJob's status.active lists its Jobs. */
export function runReference (run: Pick<Run, 'object'>): Record<string, string> {
  const { name, namespace, uid } = run.object.metadata
  return {
    apiVersion: JOBFLOW_API,
    kind: 'JobFlow',
    name,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(typeof uid === 'string' ? { uid } : {})
  }
}
