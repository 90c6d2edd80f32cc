// `kubectl jobhooks get <kind> [<name>]`: one object drawn as its kind's view (JobFlow as a tree,
// a CronJobFlow with its runs, the others by node, pod or target), or as data (-o json|yaml), or a
// JobFlow's picture (-o html); without a name, a list with the CRD's printer columns, as `kubectl
// get` prints it. A JobFlow that runs JobFlowTemplates is drawn with its groups' steps, from the
// templates it pinned (a ConfigMap).
import { stringify } from 'yaml'
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { selectorString } from '../../k8s/selectors.js'
import { DAEMONJOB_LABEL } from '../../controllers/daemonjob/job.js'
import { CRONJOBFLOW_LABEL } from '../../controllers/cronjobflow/runs.js'
import { liveFlowShape, type FlowShape } from '../flow-shape.js'
import { flowTemplates, pinsSelector, runsTemplatesAsWritten } from '../flow-groups.js'
import { htmlPage } from '../picture-html.js'
import { alignRows, cell, humanAge } from '../printer-columns.js'
import { errorCode, KubeError } from './client.js'
import { cronJobFlowTree } from './cronjobflow-tree.js'
import { flowTree } from './flow-tree.js'
import { collection, CONFIGMAPS, JOBS, kindNamed, objectPath, PODS, type Kind } from './kinds.js'
import { text, type Session } from './session.js'
import { collaSetView, daemonJobView, ephemeralJobView, operationJobView } from './views.js'

/** The kind a command names, or kubectl's error for a type it does not know. */
export function requireKind (name: string | undefined, allowed?: string[]): Kind {
  if (name === undefined) throw new KubeError('error: you must specify the type of resource to get, e.g. jf')
  const kind = kindNamed(name)
  if (kind === undefined) throw new KubeError(`error: the server doesn't have a resource type "${name}"`)
  if (allowed !== undefined && !allowed.includes(kind.kind)) {
    throw new KubeError(`error: this command acts on ${allowed.join(' or ')}, not ${kind.kind}`)
  }
  return kind
}

/** Items of a list come without apiVersion and kind; the views read them. */
function typed (item: Record<string, unknown>, list: Record<string, unknown>, kind: string): KubeObject {
  return { apiVersion: list.apiVersion, kind, ...item } as unknown as KubeObject
}

export async function listOf (
  session: Session, type: Pick<Kind, 'group' | 'version' | 'plural'> & { kind: string },
  namespace: string | undefined, labelSelector = ''
): Promise<KubeObject[]> {
  const query = labelSelector === '' ? '' : `?labelSelector=${encodeURIComponent(labelSelector)}`
  const list = await session.client.get(`${collection(type, namespace)}${query}`)
  const items = Array.isArray(list.items) ? list.items.filter(isRecord) : []
  return items.map(item => typed(item, list, type.kind))
}

/** The Pods a spec.selector selects in the object's namespace (none for a missing selector). */
async function selectedPods (session: Session, object: KubeObject): Promise<KubeObject[]> {
  const selector = isRecord(object.spec) ? object.spec.selector : undefined
  if (!isRecord(selector)) return []
  return await listOf(session, { ...PODS, kind: 'Pod' }, object.metadata.namespace,
    selectorString(selector))
}

/**
 * The ConfigMaps that pin the JobFlowTemplates `flows` ran (template-pins.ts): none when none runs
 * one, or when RBAC keeps them from the user (a group is then drawn as one step).
 */
async function pinsOf (session: Session, flows: KubeObject[], namespace: string | undefined): Promise<KubeObject[]> {
  const running = flows.filter(runsTemplatesAsWritten)
  if (running.length === 0) return []
  try {
    return await listOf(session, { ...CONFIGMAPS, kind: 'ConfigMap' }, namespace, pinsSelector(running))
  } catch (error) {
    if (errorCode(error) === 403) return []
    throw error
  }
}

/**
 * What a view reads beside the object: a DaemonJob's Jobs, the Pods of an EphemeralJob or a
 * CollaSet, the ConfigMap pinning a JobFlow's templates, a CronJobFlow's runs (JobFlows).
 */
export async function relatedOf (session: Session, kind: Kind, object: KubeObject): Promise<KubeObject[]> {
  if (kind.kind === 'JobFlow') return await pinsOf(session, [object], object.metadata.namespace)
  if (kind.kind === 'CronJobFlow') {
    return await listOf(session, requireKind('jobflow'), object.metadata.namespace,
      `${CRONJOBFLOW_LABEL}=${object.metadata.name}`)
  }
  if (kind.kind === 'DaemonJob') {
    return await listOf(session, { ...JOBS, kind: 'Job' }, object.metadata.namespace,
      `${DAEMONJOB_LABEL}=${object.metadata.name}`)
  }
  if (kind.kind === 'EphemeralJob' || kind.kind === 'CollaSet') return await selectedPods(session, object)
  return []
}

/** One object as `get` draws it, from the object and what it read beside it (relatedOf). */
export function view (kind: Kind, object: KubeObject, related: KubeObject[], now: Date): string[] {
  switch (kind.kind) {
    case 'JobFlow': return flowTree(object, now, flowTemplates(object, related))
    case 'CronJobFlow': return cronJobFlowTree(object, related, now)
    case 'DaemonJob': return daemonJobView(object, related, now)
    case 'EphemeralJob': return ephemeralJobView(object, related, now)
    case 'OperationJob': return operationJobView(object, now)
    default: return collaSetView(object, related, now)
  }
}

/**
 * JobFlows as one page: their graphs and Gantt charts, in seconds since each started; `configMaps`
 * hold the templates they pinned.
 */
export function flowsPage (flows: KubeObject[], now: Date, configMaps: KubeObject[] = []): string {
  const shapes = flows.map(flow => liveFlowShape(flow, flowTemplates(flow, configMaps)))
  const ends = flows.map((flow, i) => flowSeconds(flow, shapes[i] as FlowShape, now))
  const summary = `JobFlow ${flows.map(f => `${f.metadata.namespace ?? ''}/${f.metadata.name}`).join(', ')} ` +
    `at ${now.toISOString()}`
  return `${htmlPage(summary, shapes, Math.max(0, ...ends), 'seconds since the flow started')}\n`
}

/** How many seconds a JobFlow has run (to its completion, else to `now`): where its Gantt chart ends. */
export function flowSeconds (flow: KubeObject, shape: FlowShape, now: Date): number {
  const status = isRecord(flow.status) ? flow.status : {}
  const end = typeof status.completionTime === 'string' ? Date.parse(status.completionTime) : now.getTime()
  const origin = typeof status.startTime === 'string' ? Date.parse(status.startTime) : end
  return Math.max(0, Math.round((end - origin) / 1000), ...shape.attempts.map(a => a.end ?? 0))
}

/** One object as the output format asks. */
export async function render (session: Session, kind: Kind, object: KubeObject): Promise<string> {
  const { output } = session.options
  if (output === 'json') return `${JSON.stringify(object, null, 4)}\n`
  if (output === 'yaml') return stringify(object)
  const related = await relatedOf(session, kind, object)
  if (output === 'html') return flowsPage([object], session.io.now(), related)
  return text(view(kind, object, related, session.io.now()))
}

/** A `date` column as `kubectl get` prints it: how long ago (AGE, LAST SCHEDULE); empty when absent. */
function dateCell (object: KubeObject, jsonPath: string, nowMs: number): string {
  const at = Date.parse(cell(object, jsonPath))
  return Number.isNaN(at) ? cell(object, jsonPath) : humanAge((nowMs - at) / 1000)
}

/**
 * A list as the output format asks: kubectl's table of printer columns, a List, or one page of
 * pictures (`configMaps` hold the templates the JobFlows pinned).
 */
export function renderList (
  session: Session, kind: Kind, objects: KubeObject[], configMaps: KubeObject[] = []
): string {
  const { output, allNamespaces } = session.options
  if (output === 'json' || output === 'yaml') {
    const list = { apiVersion: 'v1', kind: 'List', items: objects, metadata: { resourceVersion: '' } }
    return output === 'json' ? `${JSON.stringify(list, null, 4)}\n` : stringify(list)
  }
  if (output === 'html') return flowsPage(objects, session.io.now(), configMaps)
  if (objects.length === 0) {
    return allNamespaces ? 'No resources found\n' : `No resources found in ${session.namespace} namespace.\n`
  }
  return text(alignRows(listTable(kind, objects, session.io.now(), allNamespaces)))
}

/** A list as `kubectl get` tabulates it: the header (NAMESPACE with -A), then a row per object. */
export function listTable (kind: Kind, objects: KubeObject[], now: Date, allNamespaces: boolean): string[][] {
  const rows = objects.map(object => [
    ...(allNamespaces ? [object.metadata.namespace ?? ''] : []),
    object.metadata.name,
    ...kind.columns.map(c => c.type === 'date' ? dateCell(object, c.jsonPath, now.getTime()) : cell(object, c.jsonPath))
  ])
  const head = [...(allNamespaces ? ['NAMESPACE'] : []), 'NAME', ...kind.columns.map(c => c.name.toUpperCase())]
  return [head, ...rows]
}

export async function getObject (session: Session, kind: Kind, name: string): Promise<KubeObject> {
  const object = await session.client.get(objectPath(kind, session.namespace, name))
  return object as unknown as KubeObject
}

export async function getCommand (session: Session): Promise<void> {
  const [kindName, name, ...rest] = session.options.args
  const kind = requireKind(kindName)
  if (rest.length > 0) throw new KubeError(`error: get takes one name, not ${[name, ...rest].join(' ')}`)
  if (session.options.output === 'html' && kind.kind !== 'JobFlow') {
    throw new KubeError('error: -o html draws JobFlows only')
  }
  if (name === undefined) {
    const namespace = session.options.allNamespaces ? undefined : session.namespace
    const objects = await listOf(session, kind, namespace)
    const pins = session.options.output === 'html' ? await pinsOf(session, objects, namespace) : []
    session.io.out(renderList(session, kind, objects, pins))
    return
  }
  session.io.out(await render(session, kind, await getObject(session, kind, name)))
}
