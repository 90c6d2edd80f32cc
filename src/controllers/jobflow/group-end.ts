// How a template group (template-ref.ts) ends, as Argo's DAG node for a nested DAG: once every
// step inside it has ended, Failed when one of its own leaves is on a failed branch (a failure
// inside that a later step inside handles does not fail it), else Succeeded. Its dependants read
// that outcome as any step's.
import type { FlowSpec } from './spec.js'
import type { JobRecord } from './records.js'
import { failedLeaves, type ItemGroups, type StepView } from './branches.js'
import { localName, templateNamed } from './template-ref.js'

/** How a group that runs stands once its steps have all ended; undefined while one has not. */
export function groupEnd (
  group: FlowSpec,
  members: readonly FlowSpec[],
  records: ReadonlyMap<string, JobRecord>,
  view: { groups: ItemGroups, steps: StepView }
): { phase: 'Succeeded' | 'Failed', message: string } | undefined {
  const ends = members.map(m => view.steps.settled(m.name)?.end)
  if (ends.some(end => end === undefined)) return undefined
  const template = templateNamed(group.group)
  if (failedLeaves(members, records, view.groups).length > 0) {
    // The steps that failed, not the leaves their failure skipped: those are what to look at.
    const failed = members.filter((m, i) => ends[i] === 'Failed').map(m => localName(m.name, group.name))
    return { phase: 'Failed', message: `${template}: failed: ${failed.join(', ')}` }
  }
  const succeeded = ends.filter(end => end === 'Succeeded').length
  return { phase: 'Succeeded', message: `${template}: ${succeeded} of ${members.length} steps succeeded` }
}

/** The steps of each group, by group name, in the order of `steps` (dependency order). */
export function membersByGroup (steps: readonly FlowSpec[]): Map<string, FlowSpec[]> {
  const members = new Map<string, FlowSpec[]>()
  for (const step of steps) {
    if (step.scope === undefined) continue
    const list = members.get(step.scope)
    if (list === undefined) members.set(step.scope, [step])
    else list.push(step)
  }
  return members
}

/** How a group that runs says so. */
export function groupRunningMessage (group: FlowSpec): string {
  return `running the steps of ${templateNamed(group.group)}`
}

/** Why a group's step does not start: its group has not started, or ended without it. */
export function heldByGroup (
  scope: string,
  group: JobRecord | undefined
): { phase: 'Pending' | 'Skipped', message: string } | undefined {
  if (group?.phase === 'Running') return undefined
  if (group === undefined || group.phase === 'Pending') {
    return { phase: 'Pending', message: `waiting for ${scope}: its steps start once it does` }
  }
  const ended = group.phase === 'Skipped' ? 'was skipped' : group.phase === 'Failed' ? 'failed' : 'ended'
  return { phase: 'Skipped', message: `not started: its group ${scope} ${ended}` }
}
