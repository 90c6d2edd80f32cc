// What every view of `kubectl jobhooks get` shares: times as kubectl prints ages, the object's
// header (name, namespace, phase, start, end) and the conditions a user should read.
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { humanAge } from '../printer-columns.js'

export function statusOf (object: KubeObject): Record<string, unknown> {
  return isRecord(object.status) ? object.status : {}
}

/** A status field as text (numbers too), undefined when absent. */
export function field (object: KubeObject, key: string): string | undefined {
  const value = statusOf(object)[key]
  return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined
}

/** How long ago `time` was, as kubectl's AGE column says it. */
export function age (time: string, now: Date): string {
  const at = Date.parse(time)
  return Number.isNaN(at) ? time : humanAge((now.getTime() - at) / 1000)
}

/** From `start` to `end` (or to `running`, the present, for what still runs); '-' without a start. */
export function span (start: string | undefined, end: string | undefined, running?: Date): string {
  if (start === undefined) return '-'
  const to = end !== undefined ? Date.parse(end) : running?.getTime()
  if (to === undefined || Number.isNaN(to)) return '-'
  return humanAge((to - Date.parse(start)) / 1000)
}

/** Name, namespace, phase and times of an object; `phaseField` names its phase (OperationJob: progress). */
export function header (object: KubeObject, phaseField: string | undefined, now: Date): string[] {
  const lines = [`Name:       ${object.metadata.name}`, `Namespace:  ${object.metadata.namespace ?? '-'}`]
  if (phaseField !== undefined) lines.push(`Status:     ${field(object, phaseField) ?? 'Pending'}`)
  const start = field(object, 'startTime')
  const end = field(object, 'completionTime') ?? field(object, 'endTime')
  if (start !== undefined) lines.push(`Started:    ${start} (${age(start, now)} ago)`)
  if (end !== undefined) lines.push(`Finished:   ${end} (${age(end, now)} ago)`)
  if (start !== undefined) lines.push(`Duration:   ${span(start, end, now)}`)
  return lines
}

/** Conditions a view says in its own words: CollaSet's Scale and Update make its `Rollout:` line. */
const OWN_LINES = new Set(['EffectsApplied', 'Scale', 'Update'])

/**
 * The conditions worth a line: an invalid spec, suspension, and how the object finished
 * (`Valid` True says nothing a user needs).
 */
export function conditionLines (object: KubeObject): string[] {
  const conditions = Array.isArray(statusOf(object).conditions) ? statusOf(object).conditions as unknown[] : []
  return conditions.filter(isRecord).filter(c => {
    if (c.type === 'Valid') return c.status === 'False'
    return c.status === 'True' && typeof c.type === 'string' && !OWN_LINES.has(c.type)
  }).map(c => `${String(c.type)}:${' '.repeat(Math.max(1, 11 - String(c.type).length))}` +
    `${typeof c.message === 'string' ? c.message : String(c.reason ?? '')}`)
}
