// Typed shapes of the manifests and status records the controller tests read or edit, so a test
// names the fields it touches instead of casting to `any`.
import type { JobSpec } from 'kubernetes-types/batch/v1.js'
import type { KubeObject } from '../../src/k8s/types.js'
import { specOf } from './objects.js'

/** A spec built on a JobSpec (a DaemonJob's) plus the kind's own fields, any of them wrong on purpose. */
export type JobLikeSpec = JobSpec & Record<string, unknown>

/** The spec of `object` as a JobSpec plus other fields, to read or to edit in place. */
export function jobLikeSpecOf (object: KubeObject | undefined): JobLikeSpec {
  return specOf<JobLikeSpec>(object)
}

/** The list `status[field]` of `object` (or of a status), as records of shape T; empty when absent. */
export function listOf<T extends object = Record<string, unknown>> (status: unknown, field: string): T[] {
  const list = typeof status === 'object' && status !== null ? (status as Record<string, unknown>)[field] : undefined
  if (!Array.isArray(list)) throw new Error(`expected a list at ${field}, found ${JSON.stringify(list)}`)
  return list as T[]
}
