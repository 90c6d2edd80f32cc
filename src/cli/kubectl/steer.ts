// The plugin's writes, each one merge patch of the object, as `kubectl annotate` and `kubectl
// patch --type merge` would send it: the rerun annotation with a fresh value, and spec.suspend.
import { isRecord } from '../../k8s/types.js'
import { KubeError } from './client.js'
import { getObject, requireKind } from './get.js'
import { objectPath, type Kind } from './kinds.js'
import type { Session } from './session.js'

/** The annotation whose every new value reruns a finished JobFlow (docs/jobflow.md, "Rerun"). */
export const RERUN_ANNOTATION = 'jobhooks.io/rerun'

function named (session: Session, verb: string, allowed: string[]): { kind: Kind, name: string } {
  const [kindName, name, ...rest] = session.options.args
  const kind = requireKind(kindName, allowed)
  if (name === undefined) {
    throw new KubeError(`error: ${verb} needs a name: kubectl jobhooks ${verb} ${kindName} <name>`)
  }
  if (rest.length > 0) throw new KubeError(`error: ${verb} takes one name, not ${[name, ...rest].join(' ')}`)
  return { kind, name }
}

const shown = (kind: Kind, name: string): string => `${kind.singular}.${kind.group}/${name}`

/**
 * `rerun jf <name>`: a value the JobFlow has not seen (the time in seconds, made unique against
 * the last one). Refused while the JobFlow runs, where the hook would use the value up and do nothing.
 */
export async function rerunCommand (session: Session): Promise<void> {
  const { kind, name } = named(session, 'rerun', ['JobFlow'])
  const flow = await getObject(session, kind, name)
  const phase = isRecord(flow.status) ? flow.status.phase : undefined
  if (phase !== 'Succeeded' && phase !== 'Failed') {
    throw new KubeError(`error: ${shown(kind, name)} is ${String(phase ?? 'Pending')}: a rerun acts on a finished ` +
      'JobFlow only (the hook would use the value up and do nothing)')
  }
  const last = flow.metadata.annotations?.[RERUN_ANNOTATION]
  let value = String(Math.floor(session.io.now().getTime() / 1000))
  if (value === last) value = `${value}-2`
  const patch = { metadata: { annotations: { [RERUN_ANNOTATION]: value } } }
  await session.client.mergePatch(objectPath(kind, session.namespace, name), patch)
  session.io.out(`${shown(kind, name)} rerun requested (${RERUN_ANNOTATION}=${value})\n`)
}

/** `suspend` / `resume` jf|dj <name>: spec.suspend true or false. */
export async function suspendCommand (session: Session, suspend: boolean): Promise<void> {
  const verb = suspend ? 'suspend' : 'resume'
  const { kind, name } = named(session, verb, ['JobFlow', 'DaemonJob'])
  await session.client.mergePatch(objectPath(kind, session.namespace, name), { spec: { suspend } })
  session.io.out(`${shown(kind, name)} ${suspend ? 'suspended' : 'resumed'}\n`)
}
