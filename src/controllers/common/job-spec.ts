// What JobFlow and DaemonJob share about the Jobs they create: checking a JobSpec before the API
// server would refuse it, and keeping scripts ConfigMaps while a Job mounts them.
import type { JobSpec } from 'kubernetes-types/batch/v1.js'
import type { KubeObject, ObjectMap } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { keepAsObserved, objectsByName } from '../../k8s/objects.js'
import { mountedScriptsConfigMaps } from '../../scripts/configmap.js'
import { rememberedFor } from '../../k8s/derived.js'

/**
 * Checks a Job spec the way the API server would refuse it, so the problem shows in our status
 * instead of as a Metacontroller sync error that repeats forever.
 */
export function jobSpecProblems (spec: JobSpec, at: string): string[] {
  const pod = spec.template?.spec
  if (!isRecord(pod) || !Array.isArray(pod.containers) || pod.containers.length === 0) {
    return [`${at}: the Job template has no containers (template.spec.containers)`]
  }
  if (pod.restartPolicy === 'Always') {
    return [
    `${at}: a Job's pods cannot have restartPolicy Always (use Never or OnFailure)`
    ]
  }
  // What the API server would refuse the Job for, said before Metacontroller's create fails on it.
  const unnamed = pod.containers.findIndex(
    c => !isRecord(c) || typeof c.name !== 'string' || c.name === '' || typeof c.image !== 'string' || c.image === ''
  )
  if (unnamed >= 0) return [`${at}: container ${unnamed + 1} of the Job template needs a name and an image`]
  return []
}

/** The scripts ConfigMaps a Job's pods mount (remembered, frozen, for a Job the memo keeps). */
const scriptsOfJob = rememberedFor(job => {
  const pod = isRecord(job.spec) && isRecord(job.spec.template) ? job.spec.template.spec : undefined
  return mountedScriptsConfigMaps(pod)
})

/**
 * The ConfigMap children next to the Jobs: the current scripts ConfigMap (if any), then every
 * older one that a kept Job still mounts, as observed. `keptJobs` are the observed Jobs returned
 * as they are; a ConfigMap no Job mounts any more is left out, so Metacontroller deletes it.
 */
export function scriptsConfigMapChildren (
  keptJobs: Iterable<KubeObject>,
  current: KubeObject | undefined,
  children: ObjectMap
): KubeObject[] {
  const mounted = new Set<string>()
  for (const job of keptJobs) for (const name of scriptsOfJob(job)) mounted.add(name)
  const out: KubeObject[] = []
  if (current !== undefined) {
    out.push(current)
    mounted.delete(current.metadata.name)
  }
  const configMaps = objectsByName(children, 'ConfigMap', 'v1')
  for (const name of [...mounted].sort()) {
    const observed = configMaps.get(name)
    if (observed !== undefined) out.push(keepAsObserved(observed))
  }
  return out
}
