// `spec.targets[]`: part of the DAG, as Argo's DAG `target` (and `argo submit --entrypoint`'s
// partial runs). Only the steps named and, transitively, the steps they need (their
// `dependencies`, the steps their `depends` names, a `forEachFrom` source) run; every other step of
// `spec.flows` is Skipped, saying so, before anything else is decided for it, and the flow's
// outcome is its targets' (Argo's assessDAGPhase over its targetTasks, branches.ts). Exit steps
// are no part of it: they run after whatever part of the DAG ran.
import type { JobRecord } from './records.js'
import { reachable } from './dag.js'

/** A step as targets read it (spec.ts FlowSpec): spec.ts reads the targets, so it is not imported. */
interface Step { name: string, dependencies: string[] }
/** A flow of the run plan as targets read it (fanout.ts PlannedFlow). */
interface Flow { name: string, item?: { step: string, index?: number, value?: unknown }, exit?: true }

/** `spec.targets` once read: the names as written (each once), and every step that runs for them. */
export interface Targets {
  names: readonly string[]
  /** The targets and, transitively, every step of `spec.flows` they depend on. */
  needed: ReadonlySet<string>
}

/** How the record of a step no target needs begins: it never runs, and fails nothing. */
export const NOT_A_TARGET = 'not started: not a target and no target needs it'

/** The most targets such a record names: with 2,000 targets, each of 2,000 records would carry them all. */
const NAMED_IN_MESSAGE = 5

/**
 * `spec.targets` of a spec's steps, or undefined when unset or empty (every step runs). A name
 * that is no step of `spec.flows`, or that is an exit step, is a problem of the spec.
 */
export function parseTargets (
  raw: unknown,
  flows: readonly Step[],
  onExit: readonly Step[],
  problems: string[]
): Targets | undefined {
  if (raw === undefined || raw === null) return undefined
  if (!Array.isArray(raw) || !raw.every(name => typeof name === 'string')) {
    problems.push('spec.targets must be a list of step names of spec.flows')
    return undefined
  }
  if (raw.length === 0) return undefined
  const names = [...new Set(raw)]
  const dag = new Map(flows.map(flow => [flow.name, flow]))
  const exits = new Set(onExit.map(step => step.name))
  const quoted = (list: string[]): string => list.map(name => JSON.stringify(name)).join(', ')
  const exitNames = names.filter(name => exits.has(name))
  if (exitNames.length > 0) {
    problems.push(`spec.targets names exit steps (${quoted(exitNames)}): exit steps are no target, they run ` +
      'after whatever part of spec.flows ran')
  }
  const unknown = names.filter(name => !dag.has(name) && !exits.has(name))
  if (unknown.length > 0) problems.push(`spec.targets names no step of spec.flows: ${quoted(unknown)}`)
  const needed = reachable(names.filter(name => dag.has(name)), name => dag.get(name)?.dependencies ?? [])
  return { names, needed }
}

/** Whether a flow may run under the targets: any without targets, an exit step, a step the targets need. */
export function isNeeded (targets: Targets | undefined, flow: Flow): boolean {
  return targets === undefined || flow.exit === true || targets.needed.has(flow.item?.step ?? flow.name)
}

/** Why a flow does not start at all (no target needs it), or undefined when it may. */
export function untargetedMessage (
  targets: Targets | undefined,
  flow: Flow
): string | undefined {
  if (targets === undefined || isNeeded(targets, flow)) return undefined
  const { names } = targets
  const more = names.length - NAMED_IN_MESSAGE
  const shown = names.slice(0, NAMED_IN_MESSAGE).join(', ') + (more > 0 ? ` and ${more} more` : '')
  return `${NOT_A_TARGET} (spec.targets: ${shown})`
}

/** A record of a step skipped because no target needs it: no failure, nor skipped because of one. */
export function isUntargeted (record: Pick<JobRecord, 'phase' | 'message'>): boolean {
  return record.phase === 'Skipped' && record.message?.startsWith(NOT_A_TARGET) === true
}

/**
 * Whether a step's record that skipped it as no target needed it stands no more: the targets,
 * edited while the flow runs, need it now, so it is decided again as a step still to start.
 */
export function retargeted (
  sync: { wasFinished: boolean, spec: { targets?: Targets } },
  flow: Flow,
  record: Pick<JobRecord, 'phase' | 'message'>
): boolean {
  return !sync.wasFinished && isUntargeted(record) && isNeeded(sync.spec.targets, flow)
}
