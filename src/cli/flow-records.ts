// The one place that reads a JobFlow's records of its steps' attempts. Today they are the
// entries of status.jobs; a compact form of finished records would be read here too, so that
// every reader (the simulator's pictures, the kubectl plugin) sees the same list.
import type { KubeObject } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'

/** One attempt of a step (or of a fan-out item, named `step[i]`), as status records it. */
export interface FlowRecord {
  name: string
  phase: string
  /** 1 for a first attempt (status leaves it out). */
  attempt: number
  jobName?: string
  startTime?: string
  completionTime?: string
  output?: string
  message?: string
}

const text = (value: unknown): string | undefined => typeof value === 'string' ? value : undefined

/** The records of a JobFlow, oldest attempt first; malformed entries are left out. */
export function flowRecords (jobflow: KubeObject): FlowRecord[] {
  const status = isRecord(jobflow.status) ? jobflow.status : {}
  const jobs = Array.isArray(status.jobs) ? status.jobs.filter(isRecord) : []
  return jobs.filter(r => typeof r.name === 'string').map(r => {
    const record: FlowRecord = {
      name: r.name as string,
      phase: text(r.phase) ?? 'Pending',
      attempt: typeof r.attempt === 'number' ? r.attempt : 1
    }
    for (const key of ['jobName', 'startTime', 'completionTime', 'output', 'message'] as const) {
      const value = text(r[key])
      if (value !== undefined) record[key] = value
    }
    return record
  })
}
