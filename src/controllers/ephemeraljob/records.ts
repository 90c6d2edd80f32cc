// The EphemeralJob's memory (law 6): one record per chosen Pod, kept in `status.pods`. A Pod is
// chosen once, when its containers are first injected, and stays chosen; a finished record never
// changes again, even when its Pod is gone. Here: reading the memory, and bringing every chosen
// Pod's record up to date with what its Pod shows now.
import type { EphemeralContainer } from 'kubernetes-types/core/v1.js'
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { timestamp } from '../../k8s/time.js'
import { isTerminating, podPhaseOf } from '../../k8s/pods.js'
import { containerViews, podPhase, type ContainerView, type JobIdentity, type PodPhase } from './pods.js'

export interface PodRecord {
  name: string
  uid: string
  phase: PodPhase
  completionTime?: string
  message?: string
}

/** Containers of a chosen Pod still to inject. */
export interface Owed {
  pod: KubeObject
  missing: string[]
}

/** Every chosen Pod as it is now, with what is still owed to them and how many containers are active. */
export interface Chosen {
  records: PodRecord[]
  /** By Pod UID, in the order of the records. */
  owed: Map<string, Owed>
  /** Containers running, waiting or still to inject: what counts against `parallelism`. */
  active: number
}

/** What reading a Pod needs to know about the job. */
export interface JobView {
  containers: EphemeralContainer[]
  job: JobIdentity
  now: Date
  /** The job injects nothing more, for good (finished, or past its deadline). */
  stoppedInjecting: boolean
}

const PHASES = new Set<string>(['Waiting', 'Running', 'Succeeded', 'Failed'])
const GONE = 'the Pod disappeared, or stopped matching the selector, before its ephemeral containers finished'

export function isSettled (record: PodRecord): boolean {
  return record.phase === 'Succeeded' || record.phase === 'Failed'
}

/**
 * The records of the previous status (`status.pods`), in the order they were chosen; malformed
 * entries are ignored.
 */
export function readRecords (status: Record<string, unknown>): PodRecord[] {
  const value = status.pods
  if (!Array.isArray(value)) return []
  const seen = new Set<string>()
  const records: PodRecord[] = []
  for (const entry of value) {
    if (!isRecord(entry) || typeof entry.name !== 'string' || typeof entry.uid !== 'string' ||
      typeof entry.phase !== 'string' || !PHASES.has(entry.phase) || seen.has(entry.uid)) continue
    seen.add(entry.uid)
    records.push(compact({
      name: entry.name,
      uid: entry.uid,
      phase: entry.phase as PodPhase,
      completionTime: typeof entry.completionTime === 'string' ? entry.completionTime : undefined,
      message: typeof entry.message === 'string' ? entry.message : undefined
    }))
  }
  return records
}

/** The record without its undefined members, the others in their order. */
function compact (record: PodRecord): PodRecord {
  // A loop rather than entries and fromEntries: there is a record for each of thousands of Pods.
  const out: Record<string, unknown> = {}
  for (const key in record) {
    const value = record[key as keyof PodRecord]
    if (value !== undefined) out[key] = value
  }
  return out as unknown as PodRecord
}

/**
 * The chosen Pods as they are now: the remembered ones in their order (settled ones as they were,
 * vanished ones failed), then Pods that carry this job's containers although the status does not
 * remember them (a status lost or wiped: they were chosen, whatever the status says).
 */
export function rememberChosen (memory: PodRecord[], matched: KubeObject[], view: JobView): Chosen {
  const byUid = new Map(matched.map(p => [p.metadata.uid, p]))
  const chosen: Chosen = { records: [], owed: new Map(), active: 0 }
  const add = (pod: KubeObject, memo: PodRecord | undefined): void => {
    const { record, owed, active } = currentRecord(pod, memo, view)
    chosen.records.push(record)
    if (owed !== undefined) chosen.owed.set(record.uid, owed)
    chosen.active += active
  }
  for (const memo of memory) {
    const pod = byUid.get(memo.uid)
    if (isSettled(memo)) chosen.records.push(memo)
    else if (pod === undefined) {
      chosen.records.push(
        { name: memo.name, uid: memo.uid, phase: 'Failed', completionTime: timestamp(view.now), message: GONE }
      )
    } else add(pod, memo)
  }
  const remembered = new Set(chosen.records.map(r => r.uid))
  for (const pod of matched) {
    if (typeof pod.metadata.uid !== 'string' || remembered.has(pod.metadata.uid)) continue
    if (containerViews(pod, view.containers, view.job).some(v => v.state !== 'Absent' && v.state !== 'Foreign')) {
      add(pod, undefined)
      remembered.add(pod.metadata.uid)
    }
  }
  return chosen
}

/** One chosen Pod's record from its containers, what is still owed to it, and its active containers. */
function currentRecord (
  pod: KubeObject,
  memo: PodRecord | undefined,
  view: JobView
): { record: PodRecord, owed?: Owed, active: number } {
  const views = containerViews(pod, view.containers, view.job)
  const missing = views.filter(v => v.state === 'Absent').map(v => v.name)
  const stopped = isTerminating(pod) || podPhaseOf(pod) === 'Succeeded' || podPhaseOf(pod) === 'Failed'
  // Containers not injected yet cannot be once the Pod stops or the job stops injecting for good.
  const neverInjected = missing.length > 0 && (stopped || view.stoppedInjecting)
  const phase = neverInjected ? 'Failed' : podPhase(views)
  const record = compact({
    name: pod.metadata.name,
    uid: pod.metadata.uid as string,
    phase,
    completionTime: phase === 'Succeeded' || phase === 'Failed'
      ? memo?.completionTime ?? latest(views) ?? timestamp(
        view.now
      )
      : undefined,
    message: phase === 'Failed' ? failureMessage(views, neverInjected, stopped) : undefined
  })
  if (isSettled(record)) return { record, active: 0 }
  const active = views.filter(v => v.state === 'Running' || v.state === 'Waiting' || v.state === 'Absent').length
  return { record, active, ...(missing.length > 0 ? { owed: { pod, missing } } : {}) }
}

export interface Counts { succeeded: number, failed: number, running: number, waiting: number }

export function countPhases (records: PodRecord[]): Counts {
  const counts: Counts = { succeeded: 0, failed: 0, running: 0, waiting: 0 }
  for (const { phase } of records) {
    if (phase === 'Succeeded') counts.succeeded++
    else if (phase === 'Failed') counts.failed++
    else if (phase === 'Running') counts.running++
    else counts.waiting++
  }
  return counts
}

function failureMessage (views: ContainerView[], neverInjected: boolean, stopped: boolean): string {
  if (neverInjected) {
    return stopped
      ? 'the Pod stopped before its ephemeral containers were injected'
      : 'never injected: the job stopped injecting'
  }
  return views.filter(v => v.state === 'Failed' || v.state === 'Foreign')
    .map(
      v => v.state === 'Foreign' ? `${v.name} was injected by someone else` : v.message ?? `${v.name} failed`
    ).join('; ')
}

/** The latest finish time among the containers, when they report one. */
function latest (views: ContainerView[]): string | undefined {
  const times = views.map(v => v.finishedAt).filter((t): t is string => t !== undefined).sort()
  return times.at(-1)
}
