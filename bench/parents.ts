// How often the memo of built objects hits when a service syncs many parents in turn, as
// Metacontroller does: each parent of a kind once, then each again (a resync). The timed bench
// syncs one parent over and over, which would hit whatever the memo is keyed by; this case is
// the one that shows whether it is keyed by what identifies an object (docs/wire.md): 50
// parents, each in a namespace of its own with its own UID and children, the cluster-scoped
// objects (Nodes) shared. Counts, not timings: what the memo gave, out of what was looked up.
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import { CASES, type KindCase } from './kinds.js'

export const PARENTS = 50

export interface HitRateRow {
  kind: string
  parents: number
  size: number
  unit: string
  /** Lookups and hits of the first round (every parent new to the service) and of the second. */
  first: { lookups: number, hits: number }
  again: { lookups: number, hits: number }
}

interface Request {
  parent: { metadata: { namespace?: string, uid?: string } }
}

/**
 * The bytes of parent `i`: the fixture's request with the parent's UID and namespace its own,
 * and so the namespace (and map key) of every object in it; cluster-scoped objects stay shared.
 */
function parentBody (text: string, request: Request, i: number): string {
  const { namespace, uid } = request.parent.metadata
  if (namespace === undefined || uid === undefined) throw new Error('the fixture\'s parent has no namespace or UID')
  const own = `${namespace}-${i}`
  return text.replaceAll(uid, `${uid.slice(0, -4)}${String(i).padStart(4, '0')}`)
    .replaceAll(`"namespace":"${namespace}"`, `"namespace":"${own}"`)
    // and inside a last-applied copy, a JSON string (a CronJobFlow's runs are answered as that copy,
    // which must name the object it is on)
    .replaceAll(`\\"namespace\\":\\"${namespace}\\"`, `\\"namespace\\":\\"${own}\\"`)
    .replaceAll(`"${namespace}/`, `"${own}/`)
}

async function round (app: FastifyInstance, path: string, bodies: readonly string[]): Promise<HitRateRow['first']> {
  const memo = app.wire.memo
  const [hits, misses] = [memo.hits, memo.misses]
  for (const payload of bodies) {
    const headers = { 'content-type': 'application/json' }
    const answer = await app.inject({ method: 'POST', url: path, payload, headers })
    if (answer.statusCode !== 200) throw new Error(`${path}: ${answer.statusCode} ${answer.body.slice(0, 200)}`)
  }
  return { lookups: memo.hits - hits + memo.misses - misses, hits: memo.hits - hits }
}

/** Syncs `parents` parents of each kind at `size` objects each, twice in turn; the memo's hits of each round. */
export async function memoHitRates (
  size: (c: KindCase) => number, parents = PARENTS, cases: readonly KindCase[] = CASES, memoBytes?: number
): Promise<HitRateRow[]> {
  const rows: HitRateRow[] = []
  for (const c of cases) {
    const fixture = c.build(size(c))
    const text = JSON.stringify(fixture.request)
    const bodies = Array.from({ length: parents }, (_, i) => parentBody(text, fixture.request as Request, i))
    const now = fixture.now
    const app = await buildApp({ clock: () => now, ...(memoBytes !== undefined ? { memoBytes } : {}) })
    try {
      const first = await round(app, c.path, bodies)
      const again = await round(app, c.path, bodies)
      rows.push({ kind: c.kind, parents, size: size(c), unit: c.unit, first, again })
    } finally {
      await app.close()
    }
  }
  return rows
}

const percent = (part: { lookups: number, hits: number }): string =>
  part.lookups === 0 ? '–' : `${(100 * part.hits / part.lookups).toFixed(1)} %`

export function hitRateTable (rows: readonly HitRateRow[]): string {
  const lines = [
    '| kind | parents | objects each | first round: lookups | hit rate | second round: lookups | hit rate |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |'
  ]
  for (const r of rows) {
    const objects = `${r.size.toLocaleString('en')} ${r.unit}`
    const rounds = `${r.first.lookups} | ${percent(r.first)} | ${r.again.lookups} | ${percent(r.again)}`
    lines.push(`| ${r.kind} | ${r.parents} | ${objects} | ${rounds} |`)
  }
  return lines.join('\n')
}

/** The goal: syncing the parents again, the memo hits (keyed by kind, every parent's spec and status missed). */
export function hitRateGoals (rows: readonly HitRateRow[]): string[] {
  return rows.map(r => `- ${r.again.hits > 0 ? 'PASS' : 'FAIL'}: ${r.kind}, ${r.parents} parents synced in turn, ` +
    `then again: the memo hit ${percent(r.again)} of ${r.again.lookups} lookups the second time (goal > 0)`)
}
