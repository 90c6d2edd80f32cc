// The OperationJob's memory (law 6): `status.targetDetails`, one detail per target, carried from
// sync to sync. A finished target stays finished; what an action remembers of a target lives in
// its extraInfo.
import { isRecord } from '../../k8s/types.js'
import type { TargetDetail, TargetProgress } from '../../actions/types.js'

export const PROGRESS = new Set<string>(['Pending', 'Processing', 'Failed', 'Succeeded'])
export const isFinished = (p: string | undefined): boolean => p === 'Succeeded' || p === 'Failed'

/** The previous `status.targetDetails` by target name; malformed entries are ignored. */
export function readDetails (value: unknown): Map<string, TargetDetail> {
  const details = new Map<string, TargetDetail>()
  if (!Array.isArray(value)) return details
  for (const entry of value) {
    if (!isRecord(entry) || typeof entry.name !== 'string' || typeof entry.progress !== 'string' || !PROGRESS.has(entry.progress) || details.has(entry.name)) continue
    const extraInfo = isRecord(entry.extraInfo)
      ? Object.fromEntries(Object.entries(entry.extraInfo).filter((kv): kv is [string, string] => typeof kv[1] === 'string'))
      : undefined
    const error = isRecord(entry.error) && typeof entry.error.reason === 'string'
      ? { reason: entry.error.reason, message: typeof entry.error.message === 'string' ? entry.error.message : '' }
      : undefined
    details.set(entry.name, detail({
      name: entry.name,
      progress: entry.progress as TargetProgress,
      ...(typeof entry.startTime === 'string' ? { startTime: entry.startTime } : {}),
      ...(typeof entry.endTime === 'string' ? { endTime: entry.endTime } : {}),
      ...(extraInfo !== undefined ? { extraInfo } : {}),
      ...(error !== undefined ? { error } : {})
    }))
  }
  return details
}

/** A detail with its fields in one order, extraInfo keys sorted, nothing empty (an empty value removes its key): identical input, identical bytes. */
export function detail (d: TargetDetail): TargetDetail {
  const out: TargetDetail = { name: d.name, progress: d.progress }
  if (d.startTime !== undefined) out.startTime = d.startTime
  if (d.endTime !== undefined) out.endTime = d.endTime
  const keys = Object.keys(d.extraInfo ?? {}).filter(k => d.extraInfo?.[k] !== '').sort()
  if (keys.length > 0) out.extraInfo = Object.fromEntries(keys.map(k => [k, (d.extraInfo as Record<string, string>)[k] as string]))
  if (d.error !== undefined && d.progress !== 'Succeeded') out.error = { reason: d.error.reason, message: d.error.message }
  return out
}
