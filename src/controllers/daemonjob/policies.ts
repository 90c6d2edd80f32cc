// OpenKruise BroadcastJob's policies as DaemonJob fields: how many nodes' Jobs run at once
// (`nodeParallelism`), what a failed node's Job does to the others (`failurePolicy`), holding new
// Jobs back (`paused`), and a DaemonJob that never finishes (`completionPolicy: Never`). Reading
// them; hold.ts decides with them which nodes start now.
import { isRecord } from '../../k8s/types.js'

export type FailurePolicy = 'FailFast' | 'Continue' | 'Pause'
export type CompletionPolicy = 'Always' | 'Never'

export interface Policies {
  /** `spec.nodeParallelism` as written: a count, or a percentage of the eligible nodes. */
  nodeParallelism?: number | string
  /** `spec.failurePolicy` as written; unset, the status's default applies (defaultFailurePolicy). */
  failurePolicy?: FailurePolicy
  paused: boolean
  completionPolicy: CompletionPolicy
}

const FAILURE_POLICIES: readonly string[] = ['FailFast', 'Continue', 'Pause']
const COMPLETION_POLICIES: readonly string[] = ['Always', 'Never']
const PERCENT = /^(100|[1-9][0-9]?)%$/

/** The policies under `spec`, problems pushed for what cannot be read. */
export function parsePolicies (spec: Record<string, unknown>, problems: string[]): Policies {
  const policies: Policies = { paused: false, completionPolicy: 'Always' }
  const { nodeParallelism, failurePolicy, paused, completionPolicy } = spec
  if (nodeParallelism !== undefined && nodeParallelism !== null) {
    if ((typeof nodeParallelism === 'number' && Number.isInteger(nodeParallelism) && nodeParallelism >= 1) ||
      (typeof nodeParallelism === 'string' && PERCENT.test(nodeParallelism))) {
      policies.nodeParallelism = nodeParallelism
    } else {
      problems.push('spec.nodeParallelism must be a whole number of at least 1 or a percentage from 1% to 100% ' +
        `("25%"), not ${JSON.stringify(nodeParallelism)}`)
    }
  }
  const failure = enumValue(failurePolicy, 'spec.failurePolicy', FAILURE_POLICIES, problems)
  if (failure !== undefined) policies.failurePolicy = failure as FailurePolicy
  if (paused !== undefined && paused !== null) {
    if (typeof paused === 'boolean') policies.paused = paused
    else problems.push(`spec.paused must be true or false, not ${JSON.stringify(paused)}`)
  }
  const completion = enumValue(completionPolicy, 'spec.completionPolicy', COMPLETION_POLICIES, problems)
  if (completion !== undefined) policies.completionPolicy = completion as CompletionPolicy
  return policies
}

/** One of `allowed`; BroadcastJob's `{type: X}` gets a word of its own. */
function enumValue (value: unknown, where: string, allowed: readonly string[], problems: string[]): string | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value === 'string' && allowed.includes(value)) return value
  const choices = `${allowed.slice(0, -1).join(', ')} or ${allowed[allowed.length - 1] as string}`
  const ported = isRecord(value) && typeof value.type === 'string'
    ? ` (BroadcastJob's {type: ${value.type}} is written ${where}: ${value.type} here; docs/daemonjob.md)`
    : ''
  problems.push(`${where} must be ${choices}, not ${JSON.stringify(value)}${ported}`)
  return undefined
}

/**
 * The failurePolicy that applies while the spec sets none: the one the status recorded at the
 * first sync, else FailFast for a DaemonJob no version has synced yet (no phase in its status)
 * and Continue for one an earlier version synced, which ran with Continue.
 */
export function defaultFailurePolicy (previous: Record<string, unknown>): 'FailFast' | 'Continue' {
  const recorded = previous.defaultFailurePolicy
  if (recorded === 'FailFast' || recorded === 'Continue') return recorded
  return typeof previous.phase === 'string' ? 'Continue' : 'FailFast'
}
