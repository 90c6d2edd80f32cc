// Argo Workflows in the end-to-end tier, for the scenario files that ask for it (TierOptions.argo):
// the workflow controller of Argo's own module (cmd/workflow-controller, built by
// test/e2e/build-binaries.sh) run as a process with the tier's admin kubeconfig, watching every
// namespace (--namespaced=false, its default), its configuration in ConfigMap
// argo/workflow-controller-configmap as Argo's install has it, and the CRDs of the module.
//
// kwok runs no container, so no pod of Argo's has its executor (argoexec). kwok finishes the pods,
// every container of them (test/e2e/kwok-stages.yaml): the controller keeps a pod's node as it was
// while the pod's `wait` container still runs. And the task-result writer below writes what the
// `wait` container writes, as it writes it (cmd/argoexec/commands/wait.go,
// workflow/executor/taskresult.go): once the pod runs, the WorkflowTaskResult named after the
// pod's node ID, labelled with the workflow and `report-outputs-completed: "false"`, owned by the
// Workflow; once the pod has finished, the template's outputs (none: kwok's containers write
// nothing) and the label "true". What the controller does with them (v4.0.5,
// workflow/controller/taskresult.go, operator.go): a pod's node starts `taskResultSynced: true`, so
// with no WorkflowTaskResult at all a template without outputs goes by its pod's phase alone (the
// smoke test passes without the writer too); a result labelled "false" holds the node, and what
// follows it, until it says "true" (or 10 minutes after the node finished); a template with
// outputs (parameters, a result, required artifacts) stays unfinished until a result carries
// them, which this writer cannot: kwok's containers produce none. The writer is there so that the
// controller sees the objects and the events (each one requeues the workflow) a real cluster
// gives it.
import { readFileSync, readdirSync } from 'node:fs'
import { Agent, request as httpsRequest } from 'node:https'
import { join } from 'node:path'
import { parse, parseAllDocuments, stringify } from 'yaml'
import { freePort, waitFor, type Process, type Result } from './processes.js'

export interface ArgoBinaries {
  controller: string
  version: string
  /** The folder of Argo's CRDs (manifests/base/crds/minimal of its module). */
  crds: string
}

/** What Argo needs of the tier: its folder, kubeconfig, kubectl and a way to start processes. */
export interface ArgoHost {
  dir: string
  kubeconfig: string
  kubectl: (args: string[], input?: string) => Promise<Result>
  start: (name: string, command: string, args: string[], env?: NodeJS.ProcessEnv) => Process
}

/** Argo as started: what the tier says it runs, and how to stop the task-result writer. */
export interface RunningArgo {
  description: string
  writer: TaskResultWriter
}

/** The namespace Argo's install puts the controller (and its ConfigMap) in. */
export const ARGO_NAMESPACE = 'argo'
const GROUP = 'argoproj.io'
const API_VERSION = `${GROUP}/v1alpha1`
const LABEL_WORKFLOW = 'workflows.argoproj.io/workflow'
const LABEL_COMPLETED = 'workflows.argoproj.io/report-outputs-completed'
const LABEL_INSTANCE_ID = 'workflows.argoproj.io/controller-instanceid'
const ANNOTATION_NODE_ID = 'workflows.argoproj.io/node-id'
const LEADER_IDENTITY = 'e2e-workflow-controller'

/** The Argo npm run e2e built (E2E_ARGO...), or why there is none (E2E_ARGO_SKIPPED). */
export function argoFromEnv (): ArgoBinaries | { skipped: string } {
  const skipped = process.env.E2E_ARGO_SKIPPED
  if (skipped !== undefined && skipped !== '') return { skipped }
  const controller = process.env.E2E_ARGO
  const crds = process.env.E2E_ARGO_CRDS
  if (controller === undefined || controller === '' || crds === undefined || crds === '') {
    return { skipped: 'E2E_ARGO is not set: run the tier with npm run e2e' }
  }
  return { controller, crds, version: process.env.E2E_ARGO_VERSION ?? 'unknown' }
}

async function ok (kubectl: ArgoHost['kubectl'], args: string[], input?: string): Promise<string> {
  const result = await kubectl(args, input)
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${result.stderr}`)
  return result.stdout
}

/**
 * Installs Argo's CRDs, its namespace and ConfigMap, starts the controller and the task-result
 * writer; resolves once the controller leads (its Lease names it). The ConfigMap holds Argo's
 * defaults but for the metrics server's port: by default it listens on :9090 of every interface,
 * and panics when that port is taken; here it gets a free one. (Its health and pprof server on
 * :6060 is fixed in main.go; when that port is taken it only logs so.)
 */
export async function startArgo (host: ArgoHost, binaries: ArgoBinaries): Promise<RunningArgo> {
  const files = readdirSync(binaries.crds).filter((f) => f.endsWith('.yaml')).sort()
  const crds = files.flatMap((f) => parseAllDocuments(readFileSync(join(binaries.crds, f), 'utf8'))
    .map((d) => d.toJS()).filter((d) => d?.kind === 'CustomResourceDefinition'))
  if (crds.length === 0) throw new Error(`no CustomResourceDefinition in ${binaries.crds}`)
  await ok(host.kubectl, ['apply', '--server-side', '-f', '-'], crds.map((d) => stringify(d)).join('---\n'))
  await ok(host.kubectl, ['wait', '--for=condition=Established', '--timeout=60s',
    ...crds.map((d) => `crd/${String(d.metadata.name)}`)])
  const metricsPort = await freePort()
  await ok(host.kubectl, ['apply', '-f', '-'], [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ARGO_NAMESPACE } },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'workflow-controller-configmap', namespace: ARGO_NAMESPACE },
      data: { metricsConfig: stringify({ port: metricsPort }) },
    },
  ].map((d) => stringify(d)).join('---\n'))

  const controller = host.start('workflow-controller', binaries.controller, [
    '--kubeconfig', host.kubeconfig, '--namespace', ARGO_NAMESPACE,
  ], { ...process.env, KUBECONFIG: host.kubeconfig, LEADER_ELECTION_IDENTITY: LEADER_IDENTITY })
  await waitFor('Argo\'s workflow controller to lead', async () => {
    if (!controller.running) {
      throw new Error(`the workflow controller exited (log: ${join(host.dir, 'workflow-controller.log')})`)
    }
    const lease = await host.kubectl(['-n', ARGO_NAMESPACE, 'get', 'lease', 'workflow-controller',
      '-o', 'jsonpath={.spec.holderIdentity}'])
    return lease.stdout === LEADER_IDENTITY ? true : undefined
  }, 60_000)
  return {
    description: `Argo Workflows ${binaries.version}`,
    writer: startTaskResultWriter(apiOf(host.kubeconfig)),
  }
}

/** Argo started as startArgo starts it, or why the tier has none (E2E_ARGO_SKIPPED). */
export async function startArgoIfBuilt (host: ArgoHost): Promise<RunningArgo | { skipped: string }> {
  const binaries = argoFromEnv()
  return 'skipped' in binaries ? binaries : await startArgo(host, binaries)
}

/** Argo's pods, as far as the writer reads them. */
interface ArgoPod {
  metadata: {
    name: string
    namespace: string
    labels?: Record<string, string>
    annotations?: Record<string, string>
    ownerReferences?: Array<{ apiVersion: string; kind: string; name: string; uid: string }>
  }
  spec: { containers: Array<{ name: string; env?: Array<{ name: string; value?: string }> }> }
  status?: { phase?: string }
}

export interface TaskResultWriter {
  /** The WorkflowTaskResults it created (namespace/name) and those it marked complete. */
  readonly created: ReadonlySet<string>
  readonly completed: ReadonlySet<string>
  /** How many rounds it has begun: each lists every Argo pod once (a cluster-wide LIST of pods). */
  readonly rounds: number
  /** The last error of a round, if the last round had one. */
  readonly lastError: string | undefined
  stop: () => Promise<void>
}

/** The WorkflowTaskResult `argoexec wait` creates for `pod` first (InitializeOutput), if it runs one. */
export function placeholderFor (pod: ArgoPod): Record<string, unknown> | undefined {
  const nodeId = pod.metadata.annotations?.[ANNOTATION_NODE_ID]
  const workflow = pod.metadata.labels?.[LABEL_WORKFLOW]
  const owner = pod.metadata.ownerReferences?.find((o) => o.kind === 'Workflow' && o.apiVersion === API_VERSION)
  const wait = pod.spec.containers.find((c) => c.name === 'wait')
  if (nodeId === undefined || workflow === undefined || owner === undefined || wait === undefined) return undefined
  const instanceId = wait.env?.find((e) => e.name === 'ARGO_INSTANCE_ID')?.value
  return {
    apiVersion: API_VERSION,
    kind: 'WorkflowTaskResult',
    metadata: {
      name: nodeId,
      namespace: pod.metadata.namespace,
      labels: {
        [LABEL_WORKFLOW]: workflow,
        [LABEL_COMPLETED]: 'false',
        ...(instanceId !== undefined && instanceId !== '' ? { [LABEL_INSTANCE_ID]: instanceId } : {}),
      },
      ownerReferences: [{ apiVersion: API_VERSION, kind: 'Workflow', name: owner.name, uid: owner.uid }],
    },
  }
}

/** One request to the tier's API server: its status and body. */
export type ApiCall = (
  method: string,
  path: string,
  body?: unknown,
  type?: string
) => Promise<{ status: number; text: string }>

/**
 * Requests to the API server of the tier's `kubeconfig`, with its bearer token, over kept-alive
 * connections: a kubectl per write costs a process each, too slow for a wave of 100 pods (Argo
 * reads a finished pod whose result is still open 10 s after it started as deleted). The
 * certificate is the tier's own, unchecked, as the kubeconfig says.
 */
export function apiOf (kubeconfig: string): ApiCall {
  const config = parse(readFileSync(kubeconfig, 'utf8'))
  const server = new URL(config.clusters[0].cluster.server)
  const token = String(config.users[0].user.token)
  const agent = new Agent({ keepAlive: true, rejectUnauthorized: false, maxSockets: 8 })
  return async (method, path, body, type = 'application/json') => await new Promise((resolve, reject) => {
    const headers = { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': type } : {}) }
    const options = { host: server.hostname, port: server.port, path, method, agent, headers }
    const call = httpsRequest(options, (response) => {
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk) => {
        text += String(chunk)
      })
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }))
    })
    call.on('error', reject)
    call.end(body !== undefined ? JSON.stringify(body) : undefined)
  })
}

async function okCall (api: ApiCall, method: string, path: string, body?: unknown, type?: string): Promise<string> {
  const { status, text } = await api(method, path, body, type)
  if (status >= 300) throw new Error(`${method} ${path}: ${status} ${text}`)
  return text
}

/**
 * Plays the `wait` container of every Argo pod in every namespace, polling the pods every
 * `everyMs`: the placeholder once the pod runs, then, once it has finished, its outputs (an empty
 * `outputs`, as for a container template with none) and the label that says they are complete.
 * Each pod's writes go at once, as each pod's own `wait` container would make them.
 */
export function startTaskResultWriter (api: ApiCall, everyMs = 500): TaskResultWriter {
  const created = new Set<string>()
  const completed = new Set<string>()
  let lastError: string | undefined
  let stopped = false
  let rounds = 0
  const round = async (): Promise<void> => {
    rounds++
    const list = `/api/v1/pods?labelSelector=${encodeURIComponent(LABEL_WORKFLOW)}`
    const pods = JSON.parse(await okCall(api, 'GET', list))
    await Promise.all((pods.items as ArgoPod[]).map(async (pod) => {
      const phase = pod.status?.phase ?? 'Pending'
      const result = placeholderFor(pod)
      if (result === undefined || phase === 'Pending') return
      const { name, namespace } = result.metadata as { name: string; namespace: string }
      const key = `${namespace}/${name}`
      const results = `/apis/${API_VERSION}/namespaces/${namespace}/workflowtaskresults`
      if (!created.has(key)) {
        const made = await api('POST', results, result)
        // 409: made by an earlier round whose answer was lost.
        if (made.status >= 300 && made.status !== 409) throw new Error(`POST ${results}: ${made.status} ${made.text}`)
        created.add(key)
      }
      if ((phase === 'Succeeded' || phase === 'Failed') && !completed.has(key)) {
        const patch = async (body: unknown): Promise<string> =>
          await okCall(api, 'PATCH', `${results}/${name}`, body, 'application/merge-patch+json')
        await patch({ outputs: {} })
        await patch({ metadata: { labels: { [LABEL_COMPLETED]: 'true' } } })
        completed.add(key)
      }
    }))
  }
  const loop = (async () => {
    while (!stopped) {
      try {
        await round()
        lastError = undefined
      } catch (error) {
        lastError = error instanceof Error ? error.message : String(error)
      }
      await new Promise((resolve) => setTimeout(resolve, everyMs))
    }
  })()
  return {
    created,
    completed,
    get rounds () {
      return rounds
    },
    get lastError () {
      return lastError
    },
    stop: async () => {
      stopped = true
      await loop
    },
  }
}
