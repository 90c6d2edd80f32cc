// Oracles of the JobFlow DAG property test (test/controllers/jobflow/dag-properties.test.ts),
// written from the rules rather than from the hook's code: the phase Argo's assessDAGPhase gives a
// run from its final records, and the specs that are Invalid when read because a step would wait
// on something that cannot come.
import { parseDepends, type DependsNode } from '../../src/controllers/jobflow/depends.js'

export const SETTLED = new Set(['Succeeded', 'Failed', 'Skipped'])

/** A step as the oracles read it: its name, the steps it depends on, whether it fans out. */
export interface OracleStep {
  name: string
  deps: string[]
  flow: Record<string, unknown>
  fanOut: boolean
}

export interface Rec { name: string, jobName: string, phase: string, message?: string, attempt?: number }

/** Each record name's last attempt. */
export function lastRecords (records: readonly Rec[]): Map<string, Rec> {
  const last = new Map<string, Rec>()
  for (const r of records) {
    const seen = last.get(r.name)
    if (seen === undefined || (r.attempt ?? 1) >= (seen.attempt ?? 1)) last.set(r.name, r)
  }
  return last
}

/**
 * A step as one node: its own record (a plain step, or a fan-out step while its items are not
 * known, or when it has none), else its items': Failed if one failed, Skipped if every one was,
 * else Succeeded (Argo's task group, which starts Succeeded and only a failed child changes).
 * Undefined while nothing of it is recorded.
 */
export function nodePhase (step: OracleStep, last: ReadonlyMap<string, Rec>): string | undefined {
  const own = last.get(step.name)
  if (own !== undefined || !step.fanOut) return own?.phase
  const items = [...last.values()].filter(r => r.name.startsWith(`${step.name}[`)).map(r => r.phase)
  if (items.length === 0) return undefined
  if (items.some(p => !SETTLED.has(p))) return 'Running'
  if (items.includes('Failed')) return 'Failed'
  return items.every(p => p === 'Skipped') ? 'Skipped' : 'Succeeded'
}

/**
 * The phase Argo gives the flow: walking in spec order (dependencies come first), a step that ran
 * gives its branch its phase, a skipped one (its `when`, or omitted) carries on Failed from any
 * step it depends on; the flow fails iff a leaf (no step depends on it) is on a failed branch.
 */
export function oraclePhase (steps: readonly OracleStep[], records: readonly Rec[]): string {
  const last = lastRecords(records)
  const failing = new Set<string>()
  for (const step of steps) {
    const phase = nodePhase(step, last)
    if (phase === 'Failed' || (phase === 'Skipped' && step.deps.some(d => failing.has(d)))) failing.add(step.name)
  }
  const followed = new Set(steps.flatMap(s => s.deps))
  return steps.some(s => !followed.has(s.name) && failing.has(s.name)) ? 'Failed' : 'Succeeded'
}

/**
 * The steps that make the spec Invalid when read: a `forEachFrom` over a plain step whose `depends`
 * is false whatever the other steps do once that step succeeded (the only way it has an output),
 * in three-valued logic: `and` is false if an operand is, `or` if every one is.
 */
export function itemlessReaders (steps: readonly OracleStep[]): string[] {
  const plain = new Set(steps.filter(s => !s.fanOut).map(s => s.name))
  return steps.filter(s => {
    const { forEachFrom: from, depends } = s.flow
    if (typeof from !== 'string' || typeof depends !== 'string' || !plain.has(from)) return false
    const tree = parseDepends(depends)
    return typeof tree === 'object' && withSucceeded(tree.tree, from) === false
  }).map(s => s.name)
}

/** A `depends` tree with `from` succeeded, every other step unknown (undefined). */
function withSucceeded (node: DependsNode, from: string): boolean | undefined {
  if (node.op === 'ref') {
    return node.step === from ? node.result === undefined || node.result === 'Succeeded' : undefined
  }
  if (node.op === 'not') {
    const value = withSucceeded(node.arg, from)
    return value === undefined ? undefined : !value
  }
  const values = node.args.map(arg => withSucceeded(arg, from))
  const decides = node.op === 'or'
  return values.includes(decides) ? decides : values.includes(undefined) ? undefined : !decides
}
