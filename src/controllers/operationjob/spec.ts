// Reading an OperationJob's spec. Everything that makes it unusable is collected, not thrown: the
// hook reports it in status and operates nothing (law 2). An unknown action is such a problem.
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { schemaProblems } from '../../k8s/openapi.js'
import type { ScriptLibrary } from '../../scripts/library.js'
import { optionalWholeNumber, type Parsed } from '../common/parsed.js'
import type { ActionJob, ActionRegistry, RegisteredAction } from '../../actions/registry.js'

/** What the CRD defaults `activeDeadlineSeconds` to (3 h); the hook assumes the same when it is absent. */
export const DEFAULT_ACTIVE_DEADLINE_SECONDS = 10800
/** What the CRD defaults `TTLSecondsAfterFinished` to (30 min); the hook assumes the same when it is absent. */
export const DEFAULT_TTL_SECONDS_AFTER_FINISHED = 1800

export interface OperationTarget {
  name: string
  containers: string[]
}

export interface OperationJobSpec {
  action: RegisteredAction
  targets: OperationTarget[]
  /** How many targets may ever be started; undefined: all. */
  partition?: number
  operationDelaySeconds?: number
  activeDeadlineSeconds: number
  TTLSecondsAfterFinished: number
}

/** The job as actions see it; `targets`, when the spec's were read already (thousands, read once a sync). */
export function actionJob (
  parent: KubeObject,
  targets: readonly OperationTarget[] = readTargets(parent.spec)
): ActionJob {
  return {
    name: parent.metadata.name,
    ...(parent.metadata.namespace !== undefined ? { namespace: parent.metadata.namespace } : {}),
    ...(typeof parent.metadata.uid === 'string' ? { uid: parent.metadata.uid } : {}),
    spec: isRecord(parent.spec) ? parent.spec : {},
    targets: targets.map(t => t.name)
  }
}

/** `spec.targets` alone, as far as it can be read (customize and the status of an invalid job use it). */
export function readTargets (spec: unknown, problems: string[] = []): OperationTarget[] {
  const raw = isRecord(spec) ? spec.targets : undefined
  if (!Array.isArray(raw) || raw.length === 0) {
    problems.push('spec.targets must be a non-empty list of {name, containers}')
    return []
  }
  const targets: OperationTarget[] = []
  const seen = new Set<string>()
  raw.forEach((entry, i) => {
    if (!isRecord(entry) || typeof entry.name !== 'string' || entry.name === '') {
      problems.push(`spec.targets[${i}] needs the name of a Pod`)
      return
    }
    if (seen.has(entry.name)) {
      problems.push(`spec.targets: Pod ${entry.name} is named twice`)
      return
    }
    seen.add(entry.name)
    let containers: string[] = []
    if (entry.containers !== undefined && entry.containers !== null) {
      if (!Array.isArray(entry.containers) || !entry.containers.every(c => typeof c === 'string' && c !== '')) {
        problems.push(`spec.targets[${i}].containers must be a list of container names`)
      } else {
        containers = entry.containers as string[]
        if (containers.length > 1 && new Set(containers).size !== containers.length) {
          problems.push(
          `spec.targets[${i}].containers names a container twice`
          )
        }
      }
    }
    targets.push({ name: entry.name, containers })
  })
  return targets
}

/**
 * What is wrong with the action's part of the spec: its own field against the schema it declared,
 * then, when that holds, whatever the action's `validate` finds.
 */
function actionProblems (
  action: RegisteredAction,
  parent: KubeObject,
  targets: readonly OperationTarget[],
  scripts: ScriptLibrary
): string[] {
  const job = actionJob(parent, targets)
  const field = action.specField
  if (field !== undefined) {
    const value = job.spec[field.name]
    const where = `spec.${field.name}`
    const problems = value === undefined || value === null
      ? (field.required ? [`${where} is required for action ${action.name}`] : [])
      : schemaProblems(value, field.schema, where)
    if (problems.length > 0) return problems
  }
  return action.handler.validate?.(job, scripts) ?? []
}

export function parseOperationJobSpec (
  parent: KubeObject,
  registry: ActionRegistry,
  scripts: ScriptLibrary
): Parsed<OperationJobSpec> {
  const spec = parent.spec
  if (!isRecord(spec)) return { ok: false, problems: ['spec is required'] }
  const problems: string[] = []
  let action: RegisteredAction | undefined
  if (typeof spec.action !== 'string' || spec.action === '') {
    problems.push('spec.action must name an action')
  } else {
    action = registry.get(spec.action)
    if (action === undefined) {
      problems.push(
      `unknown action ${JSON.stringify(spec.action)}: registered actions are ${registry.names().join(', ') || 'none'}`
      )
    }
  }
  const targets = readTargets(spec, problems)
  const partition = optionalWholeNumber(spec.partition, 'spec.partition', 0, undefined, problems)
  const operationDelaySeconds = optionalWholeNumber(
    spec.operationDelaySeconds,
    'spec.operationDelaySeconds',
    0,
    undefined,
    problems
  )
  const activeDeadlineSeconds = optionalWholeNumber(
    spec.activeDeadlineSeconds,
    'spec.activeDeadlineSeconds',
    1,
    undefined,
    problems
  ) ?? DEFAULT_ACTIVE_DEADLINE_SECONDS
  const TTLSecondsAfterFinished = optionalWholeNumber(
    spec.TTLSecondsAfterFinished,
    'spec.TTLSecondsAfterFinished',
    1,
    undefined,
    problems
  ) ?? DEFAULT_TTL_SECONDS_AFTER_FINISHED
  if (action !== undefined) problems.push(...actionProblems(action, parent, targets, scripts))
  if (problems.length > 0 || action === undefined) return { ok: false, problems }
  return {
    ok: true,
    value: {
      action,
      targets,
      ...(partition !== undefined ? { partition } : {}),
      ...(operationDelaySeconds !== undefined ? { operationDelaySeconds } : {}),
      activeDeadlineSeconds,
      TTLSecondsAfterFinished
    }
  }
}
