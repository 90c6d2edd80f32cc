// Typed shapes of the manifests and status records the controller tests read or edit, so a test
// names the fields it touches instead of casting to `any`.
import type { JobSpec, JobStatus } from 'kubernetes-types/batch/v1.js'
import type { PodSpec } from 'kubernetes-types/core/v1.js'
import type { KubeObject } from '../../src/k8s/types.js'
import { objectAs, specOf } from './objects.js'

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

/** A Job as a test reads it: the fields the controllers always write are required. */
export type JobObject = KubeObject & {
  metadata: { labels: Record<string, string> }
  spec: JobSpec & { template: { metadata: { labels: Record<string, string> }, spec: PodSpec } }
  status: JobStatus
}

/** `object` as a JobObject; throws when it is missing. */
export function jobOf (object: KubeObject | undefined): JobObject {
  return objectAs<JobObject>(object)
}

/** The pod spec of the template of `object`'s spec (a DaemonJob's, a Job's), to read or to edit in place. */
export function podSpecOf (object: KubeObject | undefined): PodSpec {
  const pod = jobLikeSpecOf(object).template?.spec
  if (pod === undefined) throw new Error(`${String(object?.metadata.name)} has no spec.template.spec`)
  return pod
}

/** One flow of a JobFlow's spec as written (a Job template, a JobTemplate reference, a script...). */
export type FlowManifest = { name: string, jobTemplate?: JobLikeSpec } & Record<string, unknown>

/** A JobFlow's spec as written, to read or to edit in place. */
export type JobFlowManifestSpec = { flows: FlowManifest[], scripts?: Record<string, string> } & Record<string, unknown>

/** A JobTemplate's spec: a JobSpec under `jobTemplate`. */
export type JobTemplateObject = KubeObject & { spec: { jobTemplate: JobLikeSpec } }
