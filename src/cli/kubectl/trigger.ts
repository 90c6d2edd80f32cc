// `kubectl jobhooks trigger cjf <name> [--name N] [-o yaml|json]`: a run of a CronJobFlow started
// now, as `kubectl create job --from=cronjob/<name>` starts a Job of a CronJob. The JobFlow is made
// of the CronJobFlow's spec.jobFlowTemplate (its labels, annotations and spec), or of the
// JobFlowTemplate its spec.jobFlowTemplateRef names, read from the cluster and made as `submit
// --from` makes one with the reference's arguments. It is the CronJobFlow's child as Metacontroller
// makes one (the label controller-uid and a controller ownerReference), so the CronJobFlow counts
// it under concurrencyPolicy and history, and marked as started by hand (jobhooks.io/instantiate:
// manual, as kubectl marks its Job). One POST creates it; with -o it is printed, nothing created.
import { stringify } from 'yaml'
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { CRONJOBFLOW_LABEL, INSTANTIATE_ANNOTATION, JOBFLOW_API } from '../../controllers/cronjobflow/runs.js'
import { inlineRunTemplate, type RunTemplate } from '../../controllers/cronjobflow/spec.js'
import { CONTROLLER_UID_LABEL } from '../../simulator/controller.js'
import { KubeError } from './client.js'
import { getObject, requireKind } from './get.js'
import { collection, kindNamed, type Kind } from './kinds.js'
import { UsageError } from './options.js'
import type { Session } from './session.js'
import { shown } from './steer.js'
import { jobFlowOf } from './submit.js'

/** The JobFlow trigger creates. */
export interface ManualRun {
  apiVersion: string
  kind: 'JobFlow'
  metadata: {
    name: string
    namespace: string
    labels: Record<string, string>
    annotations: Record<string, string>
    ownerReferences: Array<Record<string, unknown>>
  }
  spec: Record<string, unknown>
}

/** The name kubectl would print for the CronJobFlow: `cronjobflow.jobhooks.io/<name>`. */
const itsName = (cronJobFlow: KubeObject): string => `cronjobflow.jobhooks.io/${cronJobFlow.metadata.name}`

/**
 * spec.jobFlowTemplate as a run's template, read as the hook reads it (a problem is kubectl's
 * error); undefined when the CronJobFlow names a JobFlowTemplate instead.
 */
export function inlineTemplate (cronJobFlow: KubeObject): RunTemplate | undefined {
  const spec = isRecord(cronJobFlow.spec) ? cronJobFlow.spec : {}
  if (spec.jobFlowTemplate === undefined || spec.jobFlowTemplate === null) return undefined
  const problems: string[] = []
  const template = inlineRunTemplate(spec.jobFlowTemplate, problems)
  if (template === undefined || problems.length > 0) {
    throw new KubeError(`error: ${itsName(cronJobFlow)}: ${problems.join('; ')}`)
  }
  return template
}

/**
 * The run's template made of the JobFlowTemplate `template` that spec.jobFlowTemplateRef names, as
 * `submit --from` makes a JobFlow of it with the reference's arguments as its `-p`s.
 */
export function referencedTemplate (cronJobFlow: KubeObject, template: KubeObject): RunTemplate {
  const ref = referenceOf(cronJobFlow)
  const given = Array.isArray(ref?.arguments) ? ref.arguments.filter(isRecord) : []
  const parameters = new Map(given.flatMap(a => typeof a.name === 'string' && typeof a.value === 'string'
    ? [[a.name, a.value] as const]
    : []))
  const flow = jobFlowOf(template, {
    namespace: cronJobFlow.metadata.namespace ?? '',
    name: cronJobFlow.metadata.name,
    parameters,
    giving: () => `in spec.jobFlowTemplateRef.arguments of ${itsName(cronJobFlow)}`
  })
  return { labels: flow.metadata.labels, annotations: {}, spec: flow.spec }
}

function referenceOf (cronJobFlow: KubeObject): { name: string, arguments?: unknown } | undefined {
  const spec = isRecord(cronJobFlow.spec) ? cronJobFlow.spec : {}
  const ref = spec.jobFlowTemplateRef
  return isRecord(ref) && typeof ref.name === 'string' && ref.name !== '' ? { ...ref, name: ref.name } : undefined
}

/**
 * The JobFlow a run started by hand is: `template` named `name`, marked as the CronJobFlow's child,
 * in its namespace (`namespace` when it says none). Nothing read, nothing sent.
 */
export function manualRun (cronJobFlow: KubeObject, template: RunTemplate, name: string, namespace = ''): ManualRun {
  const { uid } = cronJobFlow.metadata
  if (typeof uid !== 'string' || uid === '') {
    throw new KubeError(`error: ${itsName(cronJobFlow)} has no metadata.uid to own its run by`)
  }
  return {
    apiVersion: JOBFLOW_API,
    kind: 'JobFlow',
    metadata: {
      name,
      namespace: cronJobFlow.metadata.namespace ?? namespace,
      labels: { ...template.labels, [CRONJOBFLOW_LABEL]: cronJobFlow.metadata.name, [CONTROLLER_UID_LABEL]: uid },
      annotations: { ...template.annotations, [INSTANTIATE_ANNOTATION]: 'manual' },
      ownerReferences: [{
        apiVersion: cronJobFlow.apiVersion,
        kind: 'CronJobFlow',
        name: cronJobFlow.metadata.name,
        uid,
        controller: true,
        blockOwnerDeletion: true
      }]
    },
    spec: template.spec
  }
}

/** The run's template: spec.jobFlowTemplate, or the JobFlowTemplate spec.jobFlowTemplateRef names, read. */
async function templateOf (session: Session, cronJobFlow: KubeObject): Promise<RunTemplate> {
  const inline = inlineTemplate(cronJobFlow)
  if (inline !== undefined) return inline
  const ref = referenceOf(cronJobFlow)
  const templates = kindNamed('JobFlowTemplate', ['JobFlowTemplate'])
  if (ref === undefined || templates === undefined) {
    throw new KubeError(`error: ${itsName(cronJobFlow)} has neither spec.jobFlowTemplate nor ` +
      'spec.jobFlowTemplateRef.name')
  }
  return referencedTemplate(cronJobFlow, await getObject(session, templates, ref.name))
}

function named (session: Session): { kind: Kind, name: string } {
  const [kindName, name, ...rest] = session.options.args
  if (kindName === undefined) {
    throw new KubeError('error: trigger needs a CronJobFlow: kubectl jobhooks trigger cjf <name>')
  }
  const kind = requireKind(kindName, ['CronJobFlow'])
  if (name === undefined) {
    throw new KubeError(`error: trigger needs a name: kubectl jobhooks trigger ${kindName} <name>`)
  }
  if (rest.length > 0) throw new KubeError(`error: trigger takes one name, not ${[name, ...rest].join(' ')}`)
  return { kind, name }
}

export async function triggerCommand (session: Session): Promise<void> {
  const { options, io } = session
  if (options.output === 'html') throw new UsageError('trigger prints the JobFlow with -o yaml or -o json only')
  const { kind, name } = named(session)
  const cronJobFlow = await getObject(session, kind, name)
  const runName = options.name ?? `${cronJobFlow.metadata.name}-manual-${Math.floor(io.now().getTime() / 1000)}`
  const flow = manualRun(cronJobFlow, await templateOf(session, cronJobFlow), runName, session.namespace)
  if (options.output === 'json') return io.out(`${JSON.stringify(flow, null, 4)}\n`)
  if (options.output === 'yaml') return io.out(stringify(flow))
  const flowKind = requireKind('jobflow')
  const created = await session.client.create(collection(flowKind, flow.metadata.namespace), flow)
  const createdName = isRecord(created.metadata) && typeof created.metadata.name === 'string'
    ? created.metadata.name
    : runName
  io.out(`${shown(flowKind, createdName)} created\n`)
}
