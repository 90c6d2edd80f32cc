// The built-in `Exec` action: runs a command or a script in an ephemeral container of each
// target Pod; the container's exit code decides the target's outcome. Ephemeral containers cannot
// mount volumes, so a script (shipped in hooks/ or inline in spec.scripts) is passed inline to
// `sh -c`. Ephemeral containers cannot be removed either: releasing a target undoes nothing.
//
//   spec:
//     action: Exec
//     exec:
//       image: busybox:1.36
//       command: [sh, -c, 'echo hello']        # or
//       script: {name: hello.sh, args: [a, b]}
import type { EnvVar, EphemeralContainer } from 'kubernetes-types/core/v1.js'
import type { KubeObject } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'
import { fitName } from '../k8s/names.js'
import { isFinished, isTerminating, markedBy } from '../k8s/pods.js'
import { parseInlineScripts, parseScriptRef, resolveScripts, type ScriptRef } from '../scripts/configmap.js'
import { MAX_SCRIPT_NAME, SCRIPT_NAME_PATTERN, type ScriptLibrary } from '../scripts/library.js'
import type { StructuralSchema } from '../k8s/openapi.js'
import { refTo } from '../effects/types.js'
import { POD_UID, targetGone } from './pods.js'
import type {
  ActionContext,
  ActionJob,
  ActionPlugin,
  ActionTarget,
  OperateResult,
  ProgressResult,
  TargetError
} from './types.js'

/** The env var every Exec container carries, valued with the OperationJob's name. */
export const EXEC_JOB_ENV = 'OPERATIONJOB'
/** The env var with the OperationJob's UID: tells this job's containers from a same-named earlier job's. */
export const EXEC_JOB_UID_ENV = 'OPERATIONJOB_UID'
const EXEC_MARKS = { name: EXEC_JOB_ENV, uid: EXEC_JOB_UID_ENV }

const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never']
/** Waiting reasons after which an ephemeral container never starts (it is not restarted). */
const FATAL_WAITING = new Set([
  'RunContainerError',
  'CreateContainerError',
  'CreateContainerConfigError',
  'InvalidImageName',
  'ErrImageNeverPull'
])

export interface ExecSpec {
  image: string
  imagePullPolicy?: string
  /** The container's command: `command` as given, or `sh -c <script> <name> <args…>`. */
  command: string[]
}

/** Reads `spec.exec` (and `spec.scripts`): the container to run, or every problem with it. */
export function parseExecSpec (job: ActionJob, library: ScriptLibrary): ExecSpec | string[] {
  const exec = job.spec.exec
  if (!isRecord(exec)) {
    return ['spec.exec is required for action Exec: {image, command} or {image, script: {name, args}}']
  }
  const problems: string[] = []
  if (typeof exec.image !== 'string' || exec.image.trim() === '') problems.push('spec.exec.image must name an image')
  if (
    exec.imagePullPolicy !== undefined &&
    (typeof exec.imagePullPolicy !== 'string' || !PULL_POLICIES.includes(exec.imagePullPolicy))
  ) {
    problems.push(`spec.exec.imagePullPolicy must be one of ${PULL_POLICIES.join(', ')}`)
  }
  const hasCommand = exec.command !== undefined
  const hasScript = exec.script !== undefined
  let command: string[] = []
  if (hasCommand === hasScript) {
    problems.push('spec.exec needs exactly one of command and script')
  } else if (hasCommand) {
    if (!Array.isArray(exec.command) || exec.command.length === 0 || !exec.command.every(c => typeof c === 'string')) {
      problems.push('spec.exec.command must be a non-empty list of strings')
    } else {
      command = exec.command
    }
  } else {
    const ref = parseScriptRef(exec.script, 'spec.exec')
    if (typeof ref === 'string') problems.push(ref)
    else if (ref.container !== undefined) {
      problems.push(
        'spec.exec.script.container is not used by Exec: the target container comes from spec.targets[].containers'
      )
    } else {
      const inline = parseInlineScripts(job.spec.scripts)
      if (Array.isArray(inline)) problems.push(...inline)
      else {
        const resolved = resolveScripts([ref.name], inline, library)
        problems.push(...resolved.problems)
        const content = resolved.scripts[ref.name]
        if (content !== undefined) command = inlineScriptCommand(ref, content)
      }
    }
  }
  if (problems.length > 0) return problems
  return {
    image: exec.image as string,
    ...(typeof exec.imagePullPolicy === 'string' ? { imagePullPolicy: exec.imagePullPolicy } : {}),
    command
  }
}

/** `sh -c <content> <name> <args…>`: the script as `$0`'s program, its args as `$1…`. */
export function inlineScriptCommand (ref: ScriptRef, content: string): string[] {
  return ['sh', '-c', content, ref.name, ...ref.args]
}

/** The ephemeral container's name for a job: `opj-<job name>`, fitted to a DNS label. */
export function execContainerName (jobName: string): string {
  return fitName(`opj-${jobName.replace(/\./g, '-')}`)
}

function podContainers (pod: KubeObject, field: 'containers' | 'ephemeralContainers'): Array<Record<string, unknown>> {
  const spec = isRecord(pod.spec) ? pod.spec : {}
  const list = spec[field]
  return Array.isArray(list) ? list.filter(isRecord) : []
}

/** Whether an ephemeral container was put into the Pod by this job (its name and UID in the env). */
function isOurs (container: Record<string, unknown>, job: ActionJob): boolean {
  return markedBy(container, EXEC_MARKS, job)
}

/** The container of the Pod the ephemeral container targets: the target's first, else the Pod's first. */
function targetContainer (target: ActionTarget, pod: KubeObject): string | TargetError {
  const names = podContainers(pod, 'containers').map(c => c.name).filter((n): n is string => typeof n === 'string')
  const wanted = target.containers[0]
  if (wanted === undefined) {
    return names[0] ?? { reason: 'ContainerNotFound', message: `Pod ${pod.metadata.name} has no containers` }
  }
  if (!names.includes(wanted)) {
    return { reason: 'ContainerNotFound', message: `Pod ${pod.metadata.name} has no container ${wanted}` }
  }
  return wanted
}

function operate (target: ActionTarget, context: ActionContext): OperateResult {
  const gone = targetGone(target)
  if (gone !== undefined) return { effects: [], error: gone }
  const pod = target.pod as KubeObject
  const { job } = context
  const name = execContainerName(job.name)
  const existing = podContainers(pod, 'ephemeralContainers').find(c => c.name === name)
  const extraInfo: Record<string, string> = {
    ContainerName: name,
    ...(typeof pod.metadata.uid === 'string' ? { [POD_UID]: pod.metadata.uid } : {})
  }
  if (existing !== undefined) {
    if (!isOurs(existing, job)) return { effects: [], extraInfo, error: foreign(name) }
    return { effects: [], extraInfo }
  }
  if (isTerminating(pod)) {
    return {
      effects: [],
      extraInfo,
      error: { reason: 'PodTerminating', message: `Pod ${pod.metadata.name} is terminating` }
    }
  }
  const spec = parseExecSpec(job, context.scripts)
  if (Array.isArray(spec)) return { effects: [], extraInfo, error: { reason: 'InvalidSpec', message: spec.join('; ') } }
  const targetName = targetContainer(target, pod)
  if (typeof targetName !== 'string') return { effects: [], extraInfo, error: targetName }
  const ref = refTo(pod)
  if (ref === undefined) {
    return { effects: [], extraInfo, error: { reason: 'PodNotFound', message: `Pod ${pod.metadata.name} has no uid` } }
  }
  const env: EnvVar[] = [{ name: EXEC_JOB_ENV, value: job.name }]
  if (job.uid !== undefined) env.push({ name: EXEC_JOB_UID_ENV, value: job.uid })
  const container: EphemeralContainer = {
    name,
    image: spec.image,
    ...(spec.imagePullPolicy !== undefined ? { imagePullPolicy: spec.imagePullPolicy } : {}),
    command: spec.command,
    env,
    targetContainerName: targetName,
    terminationMessagePolicy: 'FallbackToLogsOnError'
  }
  return {
    effects: [{
      type: 'InjectEphemeralContainers',
      target: ref,
      containers: [container]
    }],
    extraInfo
  }
}

function foreign (name: string): TargetError {
  return {
    reason: 'ContainerConflict',
    message: `the Pod already has an ephemeral container ${name} that this job did not inject`
  }
}

function progress (target: ActionTarget, context: ActionContext): ProgressResult {
  const gone = targetGone(target)
  if (gone !== undefined) return { progress: 'Failed', error: gone }
  const pod = target.pod as KubeObject
  const name = execContainerName(context.job.name)
  const container = podContainers(pod, 'ephemeralContainers').find(c => c.name === name)
  const stopped = isFinished(pod) || isTerminating(pod)
  if (container === undefined) {
    // Not injected yet: operate injects it (again) unless the Pod stopped.
    return stopped
      ? {
          progress: 'Failed',
          error: { reason: 'PodStopped', message: `Pod ${pod.metadata.name} stopped before the container was injected` }
        }
      : { progress: 'Processing' }
  }
  if (!isOurs(container, context.job)) return { progress: 'Failed', error: foreign(name) }
  const statuses =
    isRecord(pod.status) && Array.isArray(pod.status.ephemeralContainerStatuses)
      ? pod.status.ephemeralContainerStatuses.filter(isRecord)
      : []
  const state = statuses.find(s => s.name === name)?.state
  if (isRecord(state) && isRecord(state.terminated)) {
    const code = state.terminated.exitCode
    if (code === 0) return { progress: 'Succeeded' }
    const reason =
      typeof state.terminated.reason === 'string' && state.terminated.reason !== ''
        ? ` (${state.terminated.reason})`
        : ''
    return {
      progress: 'Failed',
      error: {
        reason: 'ExitCode',
        message: `${name} exited with code ${typeof code === 'number' ? code : 'unknown'}${reason}`
      }
    }
  }
  if (
    isRecord(state) &&
    isRecord(state.waiting) &&
    typeof state.waiting.reason === 'string' &&
    FATAL_WAITING.has(state.waiting.reason)
  ) {
    return {
      progress: 'Failed',
      error: {
        reason: state.waiting.reason,
        message: `${name} could not start` +
          (typeof state.waiting.message === 'string' ? `: ${state.waiting.message}` : '')
      }
    }
  }
  if (stopped) {
    return {
      progress: 'Failed',
      error: { reason: 'PodStopped', message: `Pod ${pod.metadata.name} stopped before ${name} finished` }
    }
  }
  return { progress: 'Processing' }
}

/** `spec.exec`, as the CRD and the hook check it; what the schema cannot say, parseExecSpec adds. */
const EXEC_SCHEMA: StructuralSchema = {
  type: 'object',
  description: 'What the Exec action runs in an ephemeral container of each target Pod.',
  required: ['image'],
  'x-kubernetes-validations': [
    { rule: 'has(self.command) != has(self.script)', message: 'set exactly one of exec.command and exec.script' }
  ],
  properties: {
    image: { type: 'string', description: 'The image of the ephemeral container.', minLength: 1 },
    imagePullPolicy: {
      type: 'string', description: 'When the image is pulled: Always, IfNotPresent or Never.', enum: PULL_POLICIES
    },
    command: {
      type: 'array',
      description: 'The command the container runs, with its arguments; exit code 0 is success.',
      minItems: 1,
      items: { type: 'string' }
    },
    script: {
      type: 'object',
      required: ['name'],
      description: 'A script shipped with the service (hooks/) or in spec.scripts, run inline with sh -c.',
      properties: {
        name: {
          type: 'string',
          description: 'A plain file name (no slashes, no leading dot).',
          maxLength: MAX_SCRIPT_NAME,
          pattern: SCRIPT_NAME_PATTERN
        },
        args: { type: 'array', description: 'Arguments passed to the script, in order.', items: { type: 'string' } }
      }
    }
  }
}

export const execAction: ActionPlugin = {
  name: 'Exec',
  specField: { name: 'exec', required: true, schema: EXEC_SCHEMA },
  handler: {
    validate: (job, scripts) => {
      const spec = parseExecSpec(job, scripts)
      return Array.isArray(spec) ? spec : []
    },
    operate,
    progress,
    // An ephemeral container cannot be removed from a Pod: nothing to undo. The hooks mark the
    // target released.
    release: () => ({ effects: [] })
  }
}
