// The live preview in words: per object, what it is now and what its next sync would do.
import { isRecord } from '../k8s/types.js'
import type { ChildName, ObjectPreview, PreviewEffect } from './live-preview.js'

/** Record lines shown per status list (a flow's jobs, an OperationJob's targets); the rest are counted. */
const MAX_RECORDS = 20

export function objectLines (preview: ObjectPreview): string[] {
  const where = preview.namespace === undefined ? preview.name : `${preview.namespace}/${preview.name}`
  const phase = preview.phase !== undefined ? `, ${preview.phaseField} ${preview.phase}` : ''
  const now = preview.exists ? `in the cluster${phase}` : preview.notes[0] ?? 'not in the cluster'
  const lines = [`${preview.kind} ${where}: ${now}`]
  for (const note of preview.exists ? preview.notes : preview.notes.slice(1)) lines.push(`  note: ${note}`)
  if (preview.adopt.length > 0) lines.push(`  Metacontroller would first adopt ${names(preview.adopt)}`)
  if (preview.error !== undefined) {
    lines.push(`  the next sync would fail and change nothing: ${preview.error}`)
    return lines
  }
  lines.push('  the next sync would:')
  const what = [
    ...(preview.create.length > 0 ? [`create ${names(preview.create)}`] : []),
    ...(preview.delete.length > 0 ? [`delete ${names(preview.delete)}`] : []),
    ...(preview.create.length === 0 && preview.delete.length === 0 ? ['create and delete no children'] : []),
    ...(preview.keep.length > 0 ? [`keep ${names(preview.keep)}`] : []),
    ...preview.update.map(child => `update ${child.kind} ${child.name} in place: ${child.fields.join(', ')}`),
    ...(preview.changed.length > 0
      ? [`leave ${names(preview.changed)} as they are, though they differ from what the hook asks for ` +
        '(OnDelete: Metacontroller never updates a child)']
      : []),
    ...preview.effects.map(effectLine)
  ]
  for (const line of what) lines.push(`    ${line}`)
  if (preview.status !== undefined) {
    lines.push(...statusLines(preview.status, preview.phaseField).map(line => `    ${line}`))
  }
  if (preview.resyncAfterSeconds !== undefined) {
    lines.push(`    come back in ${preview.resyncAfterSeconds} s (resyncAfterSeconds)`)
  }
  if (preview.finalized === true) lines.push('    finish finalizing: Metacontroller removes its finalizer')
  return lines
}

/** `Job a, Job b`, or `Jobs a, b` when all are of one kind. */
function names (children: ChildName[]): string {
  const kinds = new Set(children.map(c => c.kind))
  if (kinds.size === 1) {
    return `${children[0]?.kind ?? ''}${children.length > 1 ? 's' : ''} ${children.map(c => c.name).join(', ')}`
  }
  return children.map(c => `${c.kind} ${c.name}`).join(', ')
}

function effectLine (effect: PreviewEffect): string {
  if (effect.result === 'refused') {
    return `not ${effect.description}: refused, never sent (${effect.message ?? 'out of reach'})`
  }
  const why = effect.type === 'Delete' ? ' (its TTL after finishing has run out)' : ''
  return `${effect.description}${why} (an effect the service applies)`
}

/**
 * The status in a few lines: the phase, every counter, and each list of records (a flow's jobs,
 * an OperationJob's targets) counted by phase, then one line a record.
 */
export function statusLines (status: Record<string, unknown>, phaseField: string): string[] {
  const phase = status[phaseField]
  const counters = Object.entries(status)
    .filter(([key, value]) => typeof value === 'number' && key !== 'observedGeneration')
    .map(([key, value]) => `${key} ${String(value)}`)
  const head = [`${phaseField} ${typeof phase === 'string' ? phase : '(none)'}`, ...counters]
  const lines = [`write status: ${head.join(', ')}`]
  for (const [key, value] of Object.entries(status)) {
    if (key === 'conditions' || !Array.isArray(value)) continue
    const records = value.filter(isRecord)
      .filter(r => typeof r.name === 'string' && typeof (r.phase ?? r.progress) === 'string')
    if (records.length === 0) continue
    const counts = new Map<string, number>()
    for (const r of records) {
      const phase = String(r.phase ?? r.progress)
      counts.set(phase, (counts.get(phase) ?? 0) + 1)
    }
    lines.push(`  ${key}: ${[...counts].map(([p, n]) => `${n} ${p}`).join(', ')}`)
    const width = Math.max(...records.map(r => String(r.name).length))
    for (const r of records.slice(0, MAX_RECORDS)) {
      const message = typeof r.message === 'string' && r.message !== '' ? `: ${r.message}` : ''
      lines.push(`    ${String(r.name).padEnd(width)}  ${String(r.phase ?? r.progress)}${message}`)
    }
    if (records.length > MAX_RECORDS) lines.push(`    … and ${records.length - MAX_RECORDS} more`)
  }
  return lines
}
