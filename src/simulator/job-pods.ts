// The pod a succeeded Job leaves behind, as the kubelet and the Job controller leave it: phase
// Succeeded, labelled with its Job's name (`batch.kubernetes.io/job-name`, which Kubernetes sets),
// owned by the Job (it goes with it), each container terminated with its termination message.
// A JobFlow reads a step's output from it. The message is the one given for every container
// (`--output-of`), else the script's `output` for the first container, else what the container's
// own command writes to /dev/termination-log with a plain `echo` or `printf`
// (`echo v1.2.3 > /dev/termination-log`), else none. The command is read as the container runs it:
// after Kubernetes' `$(NAME)` expansion against its environment, so `$(JOBHOOKS_OUTPUT_BUILD)`
// writes the build's output.
import type { EnvVar } from 'kubernetes-types/core/v1.js'
import type { KubeObject } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'
import { expandedCommandLine } from '../k8s/expansion.js'
import { JOB_NAME_LABEL } from '../k8s/jobs.js'
import { kubeTime } from './objects.js'

const WRITE_TO_TERMINATION_LOG =
  /(?:echo|printf)\s+(?:-n\s+)?(?:'([^']*)'|"([^"]*)"|([^\s>'"]+))\s*>\s*\/dev\/termination-log/

/** Termination messages given for a pod: the first container's, and every container's (which wins). */
export interface PodMessages { first?: string | undefined, every?: string | undefined }

/** The succeeded pod of `job`, finished at `nowMs`, its containers' messages as `messages` says. */
export function succeededPod (job: KubeObject, messages: PodMessages, nowMs: number): KubeObject {
  const template = isRecord(job.spec) && isRecord(job.spec.template) ? job.spec.template : {}
  const meta = isRecord(template.metadata) ? template.metadata : {}
  const pod = isRecord(template.spec) ? template.spec : {}
  const containers = Array.isArray(pod.containers) ? pod.containers.filter(isRecord) : []
  const finishedAt = kubeTime(nowMs)
  const containerStatuses = containers.map((container, i) => {
    const message = messages.every ?? (i === 0 ? messages.first : undefined) ?? writtenMessage(container)
    const terminated = { exitCode: 0, reason: 'Completed', finishedAt, ...(message !== undefined ? { message } : {}) }
    return { name: String(container.name), ready: false, restartCount: 0, state: { terminated } }
  })
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${job.metadata.name}-${String(job.metadata.uid).slice(-5)}`,
      ...(job.metadata.namespace !== undefined ? { namespace: job.metadata.namespace } : {}),
      labels: { ...(isRecord(meta.labels) ? meta.labels : {}), [JOB_NAME_LABEL]: job.metadata.name },
      ownerReferences: [{
        apiVersion: 'batch/v1', kind: 'Job', name: job.metadata.name, uid: String(job.metadata.uid), controller: true
      }]
    },
    spec: pod,
    status: { phase: 'Succeeded', containerStatuses }
  }
}

/** What a container's shell command writes to its termination log, when it is a plain echo or printf. */
function writtenMessage (container: Record<string, unknown>): string | undefined {
  const { command, args } = expandedCommandLine({
    env: listOf(container.env).filter((e): e is EnvVar => isRecord(e) && typeof e.name === 'string'),
    command: listOf(container.command).filter(w => typeof w === 'string'),
    args: listOf(container.args).filter(w => typeof w === 'string')
  })
  const match = [...command, ...args].join(' ').match(WRITE_TO_TERMINATION_LOG)
  return match === null ? undefined : (match[1] ?? match[2] ?? match[3])
}

function listOf (value: unknown): unknown[] {
  return Array.isArray(value) ? value : []
}
