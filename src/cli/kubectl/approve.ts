// `kubectl jobhooks approve jf <name> <step> [<step>…]`: approves waiting approval steps of a
// JobFlow by adding their names to its annotation jobhooks.io/approve (docs/jobflow.md,
// "Approval steps"), one merge patch, as `kubectl annotate --overwrite` would send it.
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { flowRecords, specSteps } from '../flow-records.js'
import { APPROVAL_WAITING, APPROVE_ANNOTATION, approvedSteps } from '../../controllers/jobflow/approval.js'
import { KubeError } from './client.js'
import { getObject, requireKind } from './get.js'
import { objectPath } from './kinds.js'
import type { Session } from './session.js'
import { shown } from './steer.js'

/**
 * The steps approve may name: the approval steps the spec writes, and the steps whose record waits
 * for approval. A step of a JobFlowTemplate's group (`<step>.<inner>`) is not written in the
 * JobFlow's spec: its record is all there is of it.
 */
function approvalSteps (flow: KubeObject): string[] {
  const written = specSteps(flow).filter(s => isRecord(s.approval)).map(s => s.name as string)
  const waiting = flowRecords(flow).filter(r => r.message?.startsWith(APPROVAL_WAITING) === true).map(r => r.name)
  return [...new Set([...written, ...waiting])]
}

/**
 * Adds the steps to the annotation. The patch carries the resourceVersion it read, so a
 * concurrent approval is refused (409) rather than overwritten.
 */
export async function approveCommand (session: Session): Promise<void> {
  const [kindName, name, ...steps] = session.options.args
  const kind = requireKind(kindName, ['JobFlow'])
  if (name === undefined || steps.length === 0) {
    throw new KubeError(`error: approve needs a JobFlow and a step: kubectl jobhooks approve ${kindName} <name> <step>`)
  }
  const flow = await getObject(session, kind, name)
  const gates = approvalSteps(flow)
  const before = [...approvedSteps(flow)]
  // A step already approved is known even once its record no longer waits.
  const unknown = steps.filter(s => !gates.includes(s) && !before.includes(s))
  if (unknown.length > 0) {
    const has = gates.length > 0 ? `its approval steps: ${gates.join(', ')}` : 'it has none'
    const named = unknown.map(s => JSON.stringify(s)).join(', ')
    throw new KubeError(`error: ${shown(kind, name)} has no approval step ${named} (${has})`)
  }
  const value = [...new Set([...before, ...steps])].join(',')
  if (before.length > 0 && steps.every(s => before.includes(s))) {
    session.io.out(`${shown(kind, name)} already approved: ${steps.join(', ')}\n`)
    return
  }
  const patch = {
    metadata: { annotations: { [APPROVE_ANNOTATION]: value }, resourceVersion: flow.metadata.resourceVersion }
  }
  await session.client.mergePatch(objectPath(kind, session.namespace, name), patch)
  session.io.out(`${shown(kind, name)} approved: ${steps.join(', ')} (${APPROVE_ANNOTATION}=${value})\n`)
}
