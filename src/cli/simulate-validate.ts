// The simulator's checks around a run: before it, every object of our kinds is checked against
// the CRDs as the API server would check its create (validate/check.ts), and a manifest the API
// server would refuse is not played; after it, which parents ended Invalid (their spec could not
// be acted on), for the exit code.
import type { KubeObject } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'
import { checkObjects, isRefused, refusal } from './validate/check.js'

/** Exit codes of `simulate`: 1 input it cannot play (a file, a refused object), 2 usage, 3 an object ended Invalid. */
export const EXIT_CANNOT_RUN = 1
export const EXIT_USAGE = 2
export const EXIT_ENDED_INVALID = 3

/** The refusals (kubectl's words) and warnings of the manifests' objects; no refusal when all are valid. */
export function manifestRefusals (sources: Array<{ file: string, objects: KubeObject[] }>): {
  refusals: string[]
  warnings: string[]
} {
  const checks = checkObjects(sources.flatMap(({ file, objects }) => objects.map(object => ({ object, source: file }))))
  return {
    refusals: checks.filter(isRefused).flatMap(refusal),
    warnings: [...new Set(checks.flatMap(check => check.warnings))]
  }
}

/** The parents that ended with phase Invalid, and why (their Valid condition's message). */
export function endedInvalid (parents: KubeObject[]): string[] {
  return parents.flatMap(parent => {
    const status = isRecord(parent.status) ? parent.status : {}
    if (status.phase !== 'Invalid') return []
    const conditions: unknown[] = Array.isArray(status.conditions) ? status.conditions : []
    const valid = conditions.find(c => isRecord(c) && c.type === 'Valid')
    const why = isRecord(valid) && typeof valid.message === 'string' ? `: ${valid.message}` : ''
    return [`${parent.kind} ${parent.metadata.name} ended Invalid${why}`]
  })
}
