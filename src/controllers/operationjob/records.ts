// The OperationJob's memory (law 6): `status.targetDetails`, one detail per target, carried from
// sync to sync. A finished target stays finished; what an action remembers of a target lives in
// its extraInfo.
import { isRecord } from '../../k8s/types.js'
import type { TargetDetail, TargetProgress } from '../../actions/types.js'

export const PROGRESS = new Set<string>(['Pending', 'Processing', 'Failed', 'Succeeded'])
export const isFinished = (p: string | undefined): boolean => p === 'Succeeded' || p === 'Failed'

/** The previous `status.targetDetails` by target name; malformed entries are ignored. */
export function readRecords (status: Record<string, unknown>): Map<string, TargetDetail> {
  const value = status.targetDetails
  const details = new Map<string, TargetDetail>()
  if (!Array.isArray(value)) return details
  for (const entry of value) {
    if (!isRecord(entry) || typeof entry.name !== 'string' || typeof entry.progress !== 'string' || !PROGRESS.has(
      entry.progress
    ) || details.has(entry.name)) continue
    // Member by member rather than by spreads: there is a detail for each of thousands of targets.
    const read: TargetDetail = { name: entry.name, progress: entry.progress as TargetProgress }
    if (typeof entry.startTime === 'string') read.startTime = entry.startTime
    if (typeof entry.endTime === 'string') read.endTime = entry.endTime
    // detail() keeps only the string members of extraInfo.
    if (isRecord(entry.extraInfo)) read.extraInfo = entry.extraInfo as Record<string, string>
    if (isRecord(entry.error) && typeof entry.error.reason === 'string') {
      read.error = {
        reason: entry.error.reason,
        message: typeof entry.error.message === 'string' ? entry.error.message : ''
      }
    }
    details.set(entry.name, detail(read))
  }
  return details
}

/** The string members of `extraInfo` but empty ones, in the order of their keys; undefined when none is left. */
function canonicalExtraInfo (extraInfo: Readonly<Record<string, unknown>>): Record<string, string> | undefined {
  const keys = Object.keys(extraInfo)
  // Kept sorted by detail(), so usually sorted already: checked before a sort is paid for.
  for (let i = 1; i < keys.length; i++) {
    if ((keys[i - 1] as string) > (keys[i] as string)) {
      keys.sort()
      break
    }
  }
  let out: Record<string, string> | undefined
  for (const key of keys) {
    const value = extraInfo[key]
    if (typeof value === 'string' && value !== '') (out ??= {})[key] = value
  }
  return out
}

/**
 * A detail with its fields in one order, extraInfo keys sorted, nothing empty (an empty value removes its key):
 * identical input, identical bytes.
 */
export function detail (d: TargetDetail): TargetDetail {
  const out: TargetDetail = { name: d.name, progress: d.progress }
  if (d.startTime !== undefined) out.startTime = d.startTime
  if (d.endTime !== undefined) out.endTime = d.endTime
  const extraInfo = d.extraInfo !== undefined ? canonicalExtraInfo(d.extraInfo) : undefined
  if (extraInfo !== undefined) out.extraInfo = extraInfo
  if (d.error !== undefined && d.progress !== 'Succeeded') {
    out.error = {
      reason: d.error.reason,
      message: d.error.message
    }
  }
  return out
}
