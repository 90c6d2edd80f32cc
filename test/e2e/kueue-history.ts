// What a watch of Jobs says about Kueue and us (test/e2e/kueue.e2e.ts): how many Jobs Kueue had
// admitted at once, who wrote each Job's spec.suspend (its managedFields, version by version) and
// in which order Jobs appeared and reached their conditions.
import type { WatchEvent } from './scenario.js'

/** The fields watchObjects reads of each version of a Job, in the order analyseJobs takes them. */
export const jobEventFields = [
  '.metadata.name',
  '.spec.suspend',
  '.status.conditions[?(@.type=="Complete")].status',
  '.status.conditions[?(@.type=="Failed")].status',
  '.status.conditions[?(@.type=="SuccessCriteriaMet")].status',
  '.metadata.managedFields',
]

export interface JobHistory {
  /** `<name>×<times ADDED>` per Job. */
  added: string[]
  /** The most Jobs at once that were unsuspended and unfinished: admitted by Kueue and running. */
  maxAdmitted: number
  /** Every version whose spec.suspend had an owner other than its creator before Kueue, or Kueue after. */
  suspendProblems: string[]
  /** Every field manager (and operation) that owned spec.suspend of a Job in some version. */
  suspendManagers: string[]
  /** Per Job, how often Kueue suspended it again after it ran (a preemption). */
  suspendedByKueue: Map<string, number>
  /** `ADDED <name>`, and `<name> <condition>` when a condition first became True, in the API server's order. */
  order: string[]
}

interface Owner {
  manager: string
  operation: string
}

/** The managers whose managedFields entries own `spec.suspend`. */
function suspendOwners (managedFields: string): Owner[] {
  const entries: any[] = managedFields === '' ? [] : JSON.parse(managedFields)
  return entries
    .filter((e) => e.fieldsV1?.['f:spec']?.['f:suspend'] !== undefined)
    .map((e) => ({ manager: String(e.manager), operation: String(e.operation) }))
}

const isKueue = (owner: Owner): boolean => owner.manager.startsWith('kueue')
const named = (owner: Owner): string => `${owner.manager} (${owner.operation})`

interface JobState {
  added: number
  admitted: boolean
  suspend: string
  creators: string[]
  kueueOwned: boolean
  conditions: Set<string>
}

/** Reads the events of a watch with jobEventFields, in order. */
export function analyseJobs (events: WatchEvent[]): JobHistory {
  const jobs = new Map<string, JobState>()
  const problems: string[] = []
  const managers = new Set<string>()
  const preempted = new Map<string, number>()
  const order: string[] = []
  let maxAdmitted = 0
  for (const { type, fields } of events) {
    const [name = '', suspend = '', complete = '', failed = '', met = '', managedFields = ''] = fields
    const owners = suspendOwners(managedFields)
    for (const owner of owners) managers.add(named(owner))
    let job = jobs.get(name)
    if (job === undefined || type === 'ADDED') {
      // The version a Job is created with: its suspend is its creator's (a mutating webhook's change included).
      job = {
        added: (job?.added ?? 0) + 1,
        admitted: false,
        suspend,
        creators: owners.map(named),
        kueueOwned: false,
        conditions: new Set()
      }
      jobs.set(name, job)
      order.push(`ADDED ${name}`)
      if (suspend !== 'true') problems.push(`${name} was created with spec.suspend ${suspend || 'unset'}`)
    }
    for (const owner of owners) {
      if (isKueue(owner)) job.kueueOwned = true
      else if (!job.creators.includes(named(owner)) || job.kueueOwned) {
        problems.push(`${name}: spec.suspend ${suspend} owned by ${named(owner)} (after creation)`)
      }
    }
    if (suspend === 'false' && !owners.some(isKueue)) {
      problems.push(`${name}: unsuspended, spec.suspend owned by ${owners.map(named).join(', ') || 'nobody'}`)
    }
    if (job.suspend === 'false' && suspend === 'true' && owners.some(isKueue)) {
      preempted.set(name, (preempted.get(name) ?? 0) + 1)
    }
    for (const [condition, status] of [['Complete', complete], ['Failed', failed], ['SuccessCriteriaMet', met]]) {
      if (status === 'True' && !job.conditions.has(condition as string)) {
        job.conditions.add(condition as string)
        order.push(`${name} ${String(condition)}`)
      }
    }
    job.suspend = suspend
    job.admitted = type !== 'DELETED' && suspend === 'false' && complete !== 'True' && failed !== 'True'
    maxAdmitted = Math.max(maxAdmitted, [...jobs.values()].filter((j) => j.admitted).length)
  }
  return {
    added: [...jobs].map(([name, job]) => `${name}×${job.added}`),
    maxAdmitted,
    suspendProblems: problems,
    suspendManagers: [...managers],
    suspendedByKueue: preempted,
    order,
  }
}
