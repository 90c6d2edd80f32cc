// A step's output: the termination message of its Job's succeeded pod, which Kubernetes already
// carries out of every container (`/dev/termination-log`, up to 4 KiB, or the log's tail with
// `terminationMessagePolicy: FallbackToLogsOnError`). It is remembered in the step's record
// (law 6: it outlives the Job and its pods), handed to dependants as an environment variable for
// Kubernetes' own `$(NAME)` expansion (escaped, so the container sees the bytes the step wrote),
// and read by `when` expressions.
import type { EnvVar } from 'kubernetes-types/core/v1.js'
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { podPhaseOf } from '../../k8s/pods.js'
import { JOB_NAME_LABEL, LEGACY_JOB_NAME_LABEL } from '../../k8s/jobs.js'
import { literalEnvVar } from '../../k8s/expansion.js'
import type { JobRecord } from './records.js'

/**
 * The most of an output a record keeps while a step may still read it, in bytes of UTF-8: all
 * that Kubernetes keeps of a termination message.
 */
export const OUTPUT_MAX_BYTES = 4096
/** The most of an output status shows once no step will read it any more (law 6 kept, status small). */
export const OUTPUT_SHOWN_BYTES = 1024
/** How long dependants wait for a succeeded Job's pod to be seen before they start without its output. */
export const OUTPUT_WAIT_SECONDS = 30
/** Prefix of the environment variable that carries a dependency's output. */
export const OUTPUT_ENV_PREFIX = 'JOBHOOKS_OUTPUT_'

/** The succeeded pods of each Job, by Job name: the pods Metacontroller sent, by Kubernetes' label. */
export function succeededPodsByJob (pods: readonly KubeObject[]): Map<string, KubeObject[]> {
  const byJob = new Map<string, KubeObject[]>()
  for (const pod of pods) {
    if (podPhaseOf(pod) !== 'Succeeded') continue
    const labels = pod.metadata.labels ?? {}
    const job = labels[JOB_NAME_LABEL] ?? labels[LEGACY_JOB_NAME_LABEL]
    if (job === undefined) continue
    byJob.set(job, [...(byJob.get(job) ?? []), pod])
  }
  return byJob
}

/** The container whose termination message is the output: `outputFrom`, else the pod's first. */
export function outputContainer (job: KubeObject, outputFrom: string | undefined): string | undefined {
  if (outputFrom !== undefined) return outputFrom
  const template = isRecord(job.spec) && isRecord(job.spec.template) ? job.spec.template : undefined
  const containers = isRecord(template?.spec) && Array.isArray(template.spec.containers) ? template.spec.containers : []
  const first: unknown = containers[0]
  return isRecord(first) && typeof first.name === 'string' ? first.name : undefined
}

/**
 * The output of a succeeded Job, from its succeeded pods (the one that finished last, when there
 * are several): the named container's termination message (whole, as Kubernetes keeps at most
 * OUTPUT_MAX_BYTES of it), or '' when
 * it left none. Undefined when no succeeded pod of the Job was seen.
 */
export function observedOutput (
  pods: readonly KubeObject[] | undefined,
  container: string | undefined
): string | undefined {
  if (pods === undefined || pods.length === 0) return undefined
  let best: { finishedAt: string, message: string } | undefined
  for (const pod of pods) {
    const terminated = terminatedState(pod, container)
    const finishedAt = typeof terminated?.finishedAt === 'string' ? terminated.finishedAt : ''
    const message = typeof terminated?.message === 'string' ? terminated.message : ''
    if (best === undefined || finishedAt > best.finishedAt) best = { finishedAt, message }
  }
  return cutOutput(best?.message ?? '')
}

function terminatedState (pod: KubeObject, container: string | undefined): Record<string, unknown> | undefined {
  const status = isRecord(pod.status) ? pod.status : {}
  const statuses = Array.isArray(status.containerStatuses) ? status.containerStatuses : []
  const mine: unknown = statuses.find(s => isRecord(s) && s.name === container)
  const state = isRecord(mine) && isRecord(mine.state) ? mine.state : undefined
  return state !== undefined && isRecord(state.terminated) ? state.terminated : undefined
}

/**
 * Seconds dependants still wait for the output of a step whose Job succeeded while none of its
 * pods was seen (Metacontroller's watches of Jobs and of Pods are apart), or undefined.
 */
export function outputWaitOf (record: JobRecord, now: Date): number | undefined {
  if (record.phase !== 'Succeeded' || record.output !== undefined) return undefined
  if (record.completionTime === undefined) return undefined
  const left = Date.parse(record.completionTime) + OUTPUT_WAIT_SECONDS * 1000 - now.getTime()
  return left > 0 ? Math.ceil(left / 1000) : undefined
}

/**
 * An output as a record keeps it: whole up to `max` bytes (OUTPUT_MAX_BYTES, or OUTPUT_SHOWN_BYTES
 * once no step reads it), else its start and a note of its size.
 */
export function cutOutput (output: string, max = OUTPUT_MAX_BYTES): string {
  const bytes = Buffer.byteLength(output)
  if (bytes <= max) return output
  const note = ` … (cut: ${bytes} bytes)`
  const room = max - Buffer.byteLength(note)
  // Whole characters (code points) only, each up to 4 bytes of UTF-8.
  let kept = ''
  let used = 0
  for (const char of output) {
    used += Buffer.byteLength(char)
    if (used > room) break
    kept += char
  }
  return kept + note
}

/**
 * The records as status keeps them: an output longer than OUTPUT_SHOWN_BYTES is cut once every
 * step that reads it (`readBy`: its dependants and a `forEachFrom` over it) has succeeded; until
 * then a retry or a rerun of one may read it again, whole.
 */
export function shownOutputs (records: JobRecord[], stillRead: (flow: string) => boolean): JobRecord[] {
  return records.map(record => {
    const { output } = record
    if (output === undefined || output.length <= OUTPUT_SHOWN_BYTES / 4 || stillRead(record.name)) return record
    const shown = cutOutput(output, OUTPUT_SHOWN_BYTES)
    return shown === output ? record : { ...record, output: shown }
  })
}

/** The variable a dependant reads a dependency's output from: `build-image` → `JOBHOOKS_OUTPUT_BUILD_IMAGE`. */
export function outputEnvName (flow: string): string {
  return OUTPUT_ENV_PREFIX + flow.toUpperCase().replace(/-/g, '_')
}

/**
 * A dependant's environment variables for its dependencies' outputs, which Kubernetes expands in
 * `command` and `args` (`$(JOBHOOKS_OUTPUT_BUILD)`). An output is data: a `$(HOME)` in it is
 * escaped, so that the kubelet does not expand it and the container sees what the step wrote.
 */
export function outputEnv (outputs: ReadonlyMap<string, string>): EnvVar[] {
  return [...outputs].map(([flow, value]) => literalEnvVar(outputEnvName(flow), value))
}

/** `outputJSON` for `when`: the output parsed, when it is JSON. */
export function outputJSON (output: string | undefined): unknown {
  if (output === undefined || output.trim() === '') return undefined
  try {
    return JSON.parse(output)
  } catch {
    return undefined
  }
}
