// `kubectl jobhooks submit --from jobflowtemplate/<name> [-p key=value]… [--name N] [-o yaml|json]`,
// as `argo submit --from workflowtemplate/<name> -p key=value`: a JobFlow made of a JobFlowTemplate
// read from the cluster, its flows and exit steps copied and each of its arguments given a value
// (-p's, else the template's default). It is created with one POST, as `kubectl create` sends it;
// with -o it is printed, and nothing is created.
import { stringify } from 'yaml'
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { JOBFLOW_TEMPLATE_LABEL } from '../../k8s/labels.js'
import { KubeError } from './client.js'
import { getObject, requireKind } from './get.js'
import { collection, kindNamed, type Kind } from './kinds.js'
import { UsageError } from './options.js'
import type { Session } from './session.js'
import { shown } from './steer.js'

const TEMPLATE_KIND = 'JobFlowTemplate'
/** The longest label value Kubernetes takes. */
const LABEL_VALUE_MAX = 63

/** `-p key=value` as given, each key with its value (the last one given wins). */
export function parameterValues (given: readonly string[]): Map<string, string> {
  const values = new Map<string, string>()
  for (const parameter of given) {
    const at = parameter.indexOf('=')
    if (at <= 0) throw new UsageError(`-p takes key=value, not ${JSON.stringify(parameter)}`)
    values.set(parameter.slice(0, at), parameter.slice(at + 1))
  }
  return values
}

/** What the JobFlow is made with beside the template. */
export interface Submission {
  namespace: string
  /** The JobFlow's name; unset, the API server makes one from `<template>-`. */
  name?: string
  /** The values given for the template's arguments, by name. */
  parameters: ReadonlyMap<string, string>
  /** Where an argument without a default is given, as an error says it (default: `with -p <name>=<value>`). */
  giving?: MissingHint
}

/** How to give `missing` arguments, after `give it`/`give them` in the error. */
export type MissingHint = (missing: readonly string[]) => string

const withParameters: MissingHint = missing => `with ${missing.map(name => `-p ${name}=<value>`).join(' ')}`

/** A JobFlow to create: named, or with the prefix the API server makes a name of. */
export interface NewJobFlow {
  apiVersion: string
  kind: 'JobFlow'
  metadata: { name?: string, generateName?: string, namespace: string, labels: Record<string, string> }
  spec: Record<string, unknown>
}

/** The template's arguments, `{name, value?}` each, as its spec lists them. */
function templateArguments (spec: Record<string, unknown>): Array<{ name: string, value?: string }> {
  const list = Array.isArray(spec.arguments) ? spec.arguments.filter(isRecord) : []
  return list.filter(a => typeof a.name === 'string').map(a => ({
    name: a.name as string,
    ...(typeof a.value === 'string' ? { value: a.value } : {})
  }))
}

const quoted = (names: readonly string[]): string => names.map(n => JSON.stringify(n)).join(', ')

/**
 * Each argument of the template with its value: the one given, else its default. A parameter the
 * template does not have, or an argument with neither, is an error that names them.
 */
export function argumentValues (
  template: KubeObject, parameters: ReadonlyMap<string, string>, giving: MissingHint = withParameters
): Array<{ name: string, value: string }> {
  const spec = isRecord(template.spec) ? template.spec : {}
  const declared = templateArguments(spec)
  const it = `jobflowtemplate.jobhooks.io/${template.metadata.name}`
  const unknown = [...parameters.keys()].filter(key => !declared.some(a => a.name === key))
  if (unknown.length > 0) {
    const has = declared.length > 0 ? `its arguments: ${declared.map(a => a.name).join(', ')}` : 'it has none'
    throw new KubeError(`error: ${it} has no argument ${quoted(unknown)} (${has})`)
  }
  const missing = declared.filter(a => a.value === undefined && !parameters.has(a.name)).map(a => a.name)
  if (missing.length > 0) {
    const one = missing.length === 1
    throw new KubeError(`error: ${it}: ${one ? 'argument' : 'arguments'} ${quoted(missing)} ` +
      `${one ? 'has' : 'have'} no default: give ${one ? 'it' : 'them'} ${giving(missing)}`)
  }
  return declared.map(a => ({ name: a.name, value: parameters.get(a.name) ?? a.value ?? '' }))
}

/** The JobFlow `submit --from` makes of `template`: nothing read, nothing sent. */
export function jobFlowOf (template: KubeObject, submission: Submission): NewJobFlow {
  const spec = isRecord(template.spec) ? template.spec : {}
  const name = template.metadata.name
  if (!Array.isArray(spec.flows) || spec.flows.length === 0) {
    throw new KubeError(`error: jobflowtemplate.jobhooks.io/${name} has no spec.flows`)
  }
  if (name.length > LABEL_VALUE_MAX) {
    throw new KubeError(`error: the name of jobflowtemplate.jobhooks.io/${name} is longer than ${LABEL_VALUE_MAX} ` +
      `characters: it cannot be the value of the label ${JOBFLOW_TEMPLATE_LABEL}`)
  }
  const args = argumentValues(template, submission.parameters, submission.giving)
  return {
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'JobFlow',
    metadata: {
      ...(submission.name !== undefined ? { name: submission.name } : { generateName: `${name}-` }),
      namespace: submission.namespace,
      labels: { [JOBFLOW_TEMPLATE_LABEL]: name }
    },
    spec: {
      ...(args.length > 0 ? { arguments: args } : {}),
      flows: structuredClone(spec.flows),
      ...(Array.isArray(spec.onExit) && spec.onExit.length > 0 ? { onExit: structuredClone(spec.onExit) } : {})
    }
  }
}

/** `--from jobflowtemplate/<name>` (any name of the kind: jft, jobflowtemplates, …). */
function templateFrom (from: string | undefined): { kind: Kind, name: string } {
  if (from === undefined) throw new UsageError('submit needs a template: submit --from jobflowtemplate/<name>')
  const [type = '', name = '', ...rest] = from.split('/')
  const kind = kindNamed(type, [TEMPLATE_KIND])
  if (kind === undefined || name === '' || rest.length > 0) {
    throw new UsageError(`--from takes jobflowtemplate/<name> or jft/<name>, not ${JSON.stringify(from)}`)
  }
  return { kind, name }
}

export async function submitCommand (session: Session): Promise<void> {
  const { options, io } = session
  if (options.args.length > 0) {
    throw new UsageError(`submit takes no arguments, not ${options.args.join(' ')}: submit --from jft/<name>`)
  }
  if (options.output === 'html') throw new UsageError('submit prints the JobFlow with -o yaml or -o json only')
  const { kind, name } = templateFrom(options.from)
  const parameters = parameterValues(options.parameters ?? [])
  const template = await getObject(session, kind, name)
  const flow = jobFlowOf(template, {
    namespace: session.namespace,
    parameters,
    ...(options.name !== undefined ? { name: options.name } : {})
  })
  if (options.output === 'json') return io.out(`${JSON.stringify(flow, null, 4)}\n`)
  if (options.output === 'yaml') return io.out(stringify(flow))
  const flowKind = requireKind('jobflow')
  const created = await session.client.create(collection(flowKind, session.namespace), flow)
  const createdName = isRecord(created.metadata) && typeof created.metadata.name === 'string'
    ? created.metadata.name
    : flow.metadata.name ?? ''
  io.out(`${shown(flowKind, createdName)} created\n`)
}
