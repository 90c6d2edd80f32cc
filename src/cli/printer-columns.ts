// `kubectl get` as our CRDs make it print: the printer columns of manifests/crds/, evaluated on an
// object. The simulator's reports end with the table a user will see on a cluster, and the tests
// hold each example's header to it.
import { crdDocuments } from './validate/crds.js'

export interface PrinterColumn {
  name: string
  jsonPath: string
  priority?: number
  /** The column's type: `date` prints as an age (`kubectl get` shows LAST SCHEDULE as 5m, as AGE). */
  type?: string
}

export interface CrdNames {
  group: string
  /** The storage version, which the API serves. */
  version: string
  kind: string
  plural: string
  singular: string
  shortNames: string[]
  columns: PrinterColumn[]
}

/** Read on each call, not cached: a report asks once, and no module keeps state (docs/architecture.md). */
export function loadCrds (): CrdNames[] {
  return crdDocuments().map(doc => {
    const version = doc.spec.versions.find((v: { storage?: boolean }) => v.storage === true) ?? doc.spec.versions[0]
    const names = doc.spec.names
    return {
      group: doc.spec.group,
      version: version.name,
      kind: names.kind,
      plural: names.plural,
      singular: names.singular,
      shortNames: names.shortNames ?? [],
      // Columns of priority above 0 show only with -o wide; `kubectl get` leaves them out.
      columns: (version.additionalPrinterColumns ?? [])
        .filter((c: PrinterColumn) => (c.priority ?? 0) === 0)
        .map((c: PrinterColumn) => ({
          name: c.name,
          jsonPath: c.jsonPath,
          ...(c.type !== undefined ? { type: c.type } : {})
        }))
    }
  })
}

/** The columns `kubectl get` prints of a CRD named as kubectl accepts it (kind, plural, singular, short name). */
export function printerColumns (resource: string): PrinterColumn[] {
  const lower = resource.toLowerCase()
  const crd = loadCrds().find(c => [c.kind.toLowerCase(), c.plural, c.singular, ...c.shortNames].includes(lower))
  if (crd === undefined) throw new Error(`no CRD in manifests/crds/ answers to ${resource}`)
  return crd.columns
}

/**
 * A `.a.b.c` jsonPath of an object as kubectl prints the cell: empty when absent, as the API server's
 * table leaves it (a status field written only when it says something, such as `jobsQueued`).
 */
export function cell (object: unknown, jsonPath: string): string {
  let value: unknown = object
  for (const key of jsonPath.replace(/^\./, '').split('.')) {
    value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined
  }
  return value === undefined || value === null ? '' : String(value)
}

/** An age as kubectl prints it: 42s, 3m20s, 25m, 5h. */
export function humanAge (seconds: number): string {
  const s = Math.max(0, Math.floor(seconds))
  if (s < 120) return `${s}s`
  const m = Math.floor(s / 60)
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`
  if (m < 180) return `${m}m`
  return `${Math.floor(m / 60)}h`
}

/** Rows padded into columns, as kubectl aligns them (three spaces between). */
export function alignRows (rows: string[][], gap = '   '): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map(r => (r[i] ?? '').length))) ?? []
  return rows.map(row => row.map((c, i) => c.padEnd(widths[i] ?? 0)).join(gap).trimEnd())
}

/**
 * What `kubectl get <kind> <name>` prints for one object, its age given, and at `nowMs` every
 * other date column as an age too (a CronJobFlow's LAST SCHEDULE), as kubectl prints them.
 */
export function kubectlGet (
  object: { kind: string, metadata: { name: string, creationTimestamp?: string } }, ageSeconds: number, nowMs?: number
): string[] {
  const columns = printerColumns(object.kind)
  const shown = (c: PrinterColumn): string => {
    if (c.jsonPath === '.metadata.creationTimestamp') return humanAge(ageSeconds)
    const value = cell(object, c.jsonPath)
    const at = Date.parse(value)
    return c.type === 'date' && nowMs !== undefined && Number.isFinite(at) ? humanAge((nowMs - at) / 1000) : value
  }
  return alignRows([['NAME', ...columns.map(c => c.name)], [object.metadata.name, ...columns.map(shown)]])
}
