// The plugin's writes, each one merge patch of the object, as `kubectl annotate` and `kubectl
// patch --type merge` would send it: the rerun annotation with a fresh value (and the steps it
// starts from), and spec.suspend.
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { knownStepNames } from '../flow-shape.js'
import { KubeError } from './client.js'
import { getObject, requireKind } from './get.js'
import { objectPath, type Kind } from './kinds.js'
import type { Session } from './session.js'

/** The annotation whose every new value reruns a finished JobFlow (docs/jobflow.md, "Rerun"). */
export const RERUN_ANNOTATION = 'jobhooks.io/rerun'
/** The steps such a rerun starts from, read with the value (docs/jobflow.md, "Rerun"). */
export const RERUN_STEPS_ANNOTATION = 'jobhooks.io/rerun-steps'

function named (session: Session, verb: string, allowed: string[]): { kind: Kind, name: string } {
  const [kindName, name, ...rest] = session.options.args
  const kind = requireKind(kindName, allowed)
  if (name === undefined) {
    throw new KubeError(`error: ${verb} needs a name: kubectl jobhooks ${verb} ${kindName} <name>`)
  }
  if (rest.length > 0) throw new KubeError(`error: ${verb} takes one name, not ${[name, ...rest].join(' ')}`)
  return { kind, name }
}

/** An object as kubectl names it in its messages: `jobflow.jobhooks.io/<name>`. */
export const shown = (kind: Kind, name: string): string => `${kind.singular}.${kind.group}/${name}`

/**
 * `rerun jf <name> [--step S …]`: a value the JobFlow has not seen (the time in seconds, made
 * unique against the last one), and the steps named, in one patch so that the hook reads them
 * together; without --step, steps left by an earlier rerun are removed. Refused while the JobFlow
 * runs, where the hook would use the value up and do nothing.
 */
export async function rerunCommand (session: Session): Promise<void> {
  const { kind, name } = named(session, 'rerun', ['JobFlow'])
  const flow = await getObject(session, kind, name)
  const phase = isRecord(flow.status) ? flow.status.phase : undefined
  if (phase !== 'Succeeded' && phase !== 'Failed') {
    throw new KubeError(`error: ${shown(kind, name)} is ${String(phase ?? 'Pending')}: a rerun acts on a finished ` +
      'JobFlow only (the hook would use the value up and do nothing)')
  }
  const steps = session.options.steps
  if (steps !== undefined) requireSteps(flow, steps)
  const last = flow.metadata.annotations?.[RERUN_ANNOTATION]
  let value = String(Math.floor(session.io.now().getTime() / 1000))
  if (value === last) value = `${value}-2`
  const annotations: Record<string, string | null> = { [RERUN_ANNOTATION]: value }
  if (steps !== undefined) annotations[RERUN_STEPS_ANNOTATION] = steps.join(',')
  else if (flow.metadata.annotations?.[RERUN_STEPS_ANNOTATION] !== undefined) annotations[RERUN_STEPS_ANNOTATION] = null
  await session.client.mergePatch(objectPath(kind, session.namespace, name), { metadata: { annotations } })
  const from = steps === undefined ? '' : `, ${RERUN_STEPS_ANNOTATION}=${steps.join(',')}`
  session.io.out(`${shown(kind, name)} rerun requested (${RERUN_ANNOTATION}=${value}${from})\n`)
}

/**
 * Every step named is a step of the flow (of its spec, or a template group's, which only its
 * records name): the hook would rerun nothing for a name it does not know.
 */
function requireSteps (flow: KubeObject, steps: readonly string[]): void {
  const known = knownStepNames(flow)
  const unknown = steps.filter(step => !known.includes(step))
  if (unknown.length > 0) {
    throw new KubeError(`error: jobflow ${flow.metadata.name} has no step ${unknown.map(s => `"${s}"`).join(', ')} ` +
      `(steps: ${known.join(', ')})`)
  }
}

/** `suspend` / `resume` jf|dj|cjf <name>: spec.suspend true or false. */
export async function suspendCommand (session: Session, suspend: boolean): Promise<void> {
  const verb = suspend ? 'suspend' : 'resume'
  const { kind, name } = named(session, verb, ['JobFlow', 'DaemonJob', 'CronJobFlow'])
  await session.client.mergePatch(objectPath(kind, session.namespace, name), { spec: { suspend } })
  session.io.out(`${shown(kind, name)} ${suspend ? 'suspended' : 'resumed'}\n`)
}
