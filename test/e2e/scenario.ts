// What every end-to-end test file needs around its scenarios: the cluster, a namespace of its
// own per scenario, JSON reads through kubectl, and a teardown that deletes what the scenarios
// made (a user's cluster stays clean) before it stops the processes.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseAllDocuments, stringify } from 'yaml'
import { apply, clusterFromEnv, ROOT, waitFor, type Cluster, type TierOptions } from './cluster.js'

interface Tap {
  comment: (message: string) => void
  teardown: (fn: () => unknown) => void
}

export interface Scenarios {
  cluster: Cluster
  /** A new namespace `e2e-<name>-…`, deleted at the end. */
  namespace: (name: string) => Promise<string>
  /** A cluster-scoped object the scenarios created (a Node), deleted at the end. */
  track: (kind: string, name: string) => void
  /** `kubectl <args> -o json`, parsed; throws with kubectl's message when it fails. */
  getJson: (args: string[]) => Promise<any>
}

export async function startScenarios (t: Tap, options: TierOptions = {}): Promise<Scenarios> {
  const cluster = await clusterFromEnv(options)
  t.comment(
    `running against ${cluster.metacontroller}` +
      (cluster.service !== undefined ? `, service ${cluster.service}` : '') +
      (cluster.logDir !== undefined ? `, logs in ${cluster.logDir}` : '')
  )
  const namespaces: string[] = []
  const tracked = new Map<string, string[]>()
  t.teardown(async () => {
    if (namespaces.length > 0) await cluster.kubectl(['delete', 'namespace', '--wait=false', ...namespaces])
    for (const [kind, names] of tracked) await cluster.kubectl(['delete', kind, '--wait=false', ...names])
    await cluster.stop()
  })
  return {
    cluster,
    async namespace (name) {
      const ns = `e2e-${name}-${Date.now().toString(36)}-${namespaces.length}`
      await apply(
        cluster.kubectl,
        stringify({
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: ns, labels: { 'jobhooks.io/e2e': 'true' } },
        })
      )
      namespaces.push(ns)
      return ns
    },
    track (kind, name) {
      tracked.set(kind, [...(tracked.get(kind) ?? []), name])
    },
    async getJson (args) {
      const result = await cluster.kubectl([...args, '-o', 'json'])
      if (result.code !== 0) throw new Error(result.stderr)
      return JSON.parse(result.stdout)
    },
  }
}

/**
 * Waits until the status of `resource` ns/name (a kubectl resource name: `daemonjob`, say)
 * passes `check`, and returns the object; a timeout names the last status seen.
 */
export async function waitForStatusOf (
  getJson: Scenarios['getJson'],
  resource: string,
  ns: string,
  name: string,
  what: string,
  check: (status: any) => boolean,
  timeoutMs: number
): Promise<any> {
  let last: unknown
  try {
    return await waitFor(
      `${resource} ${ns}/${name}: ${what}`,
      async () => {
        const object = await getJson(['get', resource, name, '-n', ns])
        last = object.status
        return object.status !== undefined && check(object.status) ? object : undefined
      },
      timeoutMs,
      500
    )
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}; last status: ${JSON.stringify(last)}`)
  }
}

/** A Pod's condition of `type`, if it has one. */
export function podCondition (pod: any, type: string): any {
  return (pod.status?.conditions ?? []).find((c: any) => c.type === type)
}

export function isPodReady (pod: any): boolean {
  return podCondition(pod, 'Ready')?.status === 'True'
}

/** Not being deleted. */
export function isLive (pod: any): boolean {
  return pod.metadata.deletionTimestamp === undefined
}

export interface ReadySamples {
  /** The fewest Ready Pods (not being deleted) one sample saw. */
  fewest: number
  samples: number
  /** Every distinct sample, in order: `<n> Ready: <names> (of <names, * when being deleted>)`. */
  log: string[]
}

/**
 * Samples the Ready Pods that `selector` matches in `ns`, about five times a second, until
 * `stop()`: a poll, so a dip shorter than one round trip could slip between two samples.
 */
export function sampleReadyPods (
  getJson: Scenarios['getJson'],
  ns: string,
  selector: string
): { started: Promise<void>; stop: () => Promise<ReadySamples> } {
  let running = true
  let markStarted: () => void = () => {}
  const started = new Promise<void>((resolve) => {
    markStarted = resolve
  })
  let fewest = Number.POSITIVE_INFINITY
  let samples = 0
  const log: string[] = []
  const loop = (async () => {
    while (running) {
      try {
        const list: any[] = (await getJson(['get', 'pods', '-n', ns, '-l', selector])).items
        const ready = list
          .filter((p) => isLive(p) && isPodReady(p))
          .map((p) => String(p.metadata.name))
          .sort()
        samples++
        fewest = Math.min(fewest, ready.length)
        const line = `${ready.length} Ready: ${ready.join(' ')} (of ${list
          .map((p) => String(p.metadata.name) + (isLive(p) ? '' : '*'))
          .sort()
          .join(' ')})`
        if (log[log.length - 1] !== line) log.push(line)
        markStarted()
      } catch {
        // A failed read is no sample.
      }
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    markStarted()
  })()
  let result: Promise<ReadySamples> | undefined
  return {
    /** Resolves once the first sample is in (or sampling stopped). */
    started,
    async stop () {
      running = false
      result ??= loop.then(() => ({ fewest, samples, log }))
      return await result
    },
  }
}

/** One change the API server made to a watched object: the watch event's type and the fields asked for. */
export interface WatchEvent {
  /** ADDED (also every object there when the watch starts), MODIFIED or DELETED. */
  type: string
  fields: string[]
  /** When the event reached the watch (Date.now()): for latencies between watched changes. */
  at: number
}

/**
 * Every change to the objects that `kubectl get <args>` selects, in the API server's order, from
 * a watch: unlike a poll, no version of an object slips by between two samples, however short it
 * lasted. `fields` are JSONPath expressions into the object (`.metadata.uid`), empty when absent;
 * their values must not contain "|".
 */
export function watchObjects (
  cluster: Cluster,
  args: string[],
  fields: string[]
): { started: Promise<void>; stop: () => Promise<WatchEvent[]> } {
  // kubectl aligns tabs into spaces: the fields are separated by "|" (no value asked for has one).
  const template = `{.type}${fields.map((f) => `{"|"}{.object${f}}`).join('')}{"\\n"}`
  const child = cluster.spawnKubectl(['get', ...args, '--watch', '--output-watch-events', '-o', `jsonpath=${template}`])
  const events: WatchEvent[] = []
  let buffered = ''
  let stderr = ''
  let markStarted: () => void = () => {}
  let failStart: (error: Error) => void = () => {}
  const started = new Promise<void>((resolve, reject) => {
    markStarted = resolve
    failStart = reject
  })
  child.stdout?.on('data', (chunk) => {
    buffered += String(chunk)
    const lines = buffered.split('\n')
    buffered = lines.pop() ?? ''
    const at = Date.now()
    for (const line of lines) {
      const [type, ...values] = line.split('|')
      if (type !== undefined && type !== '') events.push({ type, fields: values, at })
    }
    if (events.length > 0) markStarted()
  })
  child.stderr?.on('data', (chunk) => {
    stderr += String(chunk)
  })
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()))
  void closed.then(() =>
    failStart(new Error(`kubectl get ${args.join(' ')} --watch ended before any event: ${stderr}`))
  )
  const timer = setTimeout(
    () => failStart(new Error(`kubectl get ${args.join(' ')} --watch sent no event in 30 s: ${stderr}`)),
    30_000
  )
  void started.finally(() => clearTimeout(timer)).catch(() => {})
  let result: Promise<WatchEvent[]> | undefined
  return {
    /** Resolves once the objects there when the watch started came in (it must select some). */
    started,
    /** Ends the watch: every event seen; throws when the watch had ended by itself (events may be missing). */
    async stop () {
      result ??= (async () => {
        clearTimeout(timer)
        const running = child.exitCode === null && child.signalCode === null
        if (running) child.kill('SIGTERM')
        await closed
        if (!running) {
          throw new Error(
            `kubectl get ${args.join(' ')} --watch ended by itself (exit ${String(child.exitCode)}), events may be ` +
              `missing: ${stderr}`
          )
        }
        return events
      })()
      return await result
    },
  }
}

/** A time as the kubelet writes it in a container state (whole seconds). */
function kubeletTime (): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z')
}

/** Container states as the kubelet reports them: started now, or ended now with an exit code. */
export const containerState = {
  running: (): Record<string, unknown> => ({ running: { startedAt: kubeletTime() } }),
  terminated: (exitCode: number): Record<string, unknown> => {
    const now = kubeletTime()
    return { terminated: { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', startedAt: now, finishedAt: now } }
  },
}

/**
 * Writes the state of the ephemeral container `container` of Pod ns/`pod` in the kubelet's place:
 * kwok runs Pods but not ephemeral containers. The other ephemeral containers' statuses stay (a
 * merge patch replaces the whole list); the caller writes one Pod at a time.
 */
export async function setEphemeralContainerState (
  cluster: Cluster,
  ns: string,
  pod: string,
  container: string,
  state: Record<string, unknown>
): Promise<void> {
  const read = await cluster.kubectl(['get', 'pod', pod, '-n', ns, '-o', 'json'])
  if (read.code !== 0) throw new Error(`reading Pod ${ns}/${pod}: ${read.stderr}`)
  const current = JSON.parse(read.stdout)
  const image = (current.spec.ephemeralContainers ?? []).find((c: any) => c.name === container)?.image ?? ''
  const others = (current.status?.ephemeralContainerStatuses ?? []).filter((s: any) => s.name !== container)
  const patch = {
    status: {
      ephemeralContainerStatuses: [
        ...others,
        { name: container, image, imageID: '', ready: false, restartCount: 0, state },
      ],
    },
  }
  const result = await cluster.kubectl([
    'patch',
    'pod',
    pod,
    '-n',
    ns,
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify(patch),
  ])
  if (result.code !== 0) throw new Error(`patching the status of ${ns}/${pod}: ${result.stderr}`)
}

/** The first object of `kind` in manifests/examples/`file`. */
function exampleObject (file: string, kind: string): any {
  return parseAllDocuments(readFileSync(join(ROOT, 'manifests', 'examples', file), 'utf8'))
    .map((d) => d.toJS())
    .find((d) => d?.kind === kind)
}

/**
 * The five-job example of manifests/examples/jobflow.yaml, pinned to the tier's node (its
 * `minikube` is the reference's), with short Jobs and `mutate` applied to its spec.
 */
export function jobFlowExample (cluster: Cluster, mutate: (spec: any) => void = () => {}): any {
  const doc = exampleObject('jobflow.yaml', 'JobFlow')
  if (cluster.nodeName !== undefined) doc.spec.globalParams.nodeName = cluster.nodeName
  else delete doc.spec.globalParams.nodeName
  for (const flow of doc.spec.flows) {
    // Short Jobs: kwok finishes them after 3 s; on a real cluster they sleep 3 s.
    flow.jobTemplate.template.spec.containers[0].command = ['sh', '-c', 'sleep 3']
  }
  mutate(doc.spec)
  return doc
}

/**
 * The example with job1 and job2 slow (15 s each on kwok), so that it still runs while a test acts
 * on it, and job2 failing at its first pod, so that it ends Failed.
 */
export function slowFailingFlow (cluster: Cluster): any {
  return jobFlowExample(cluster, spec => {
    const slow = { 'e2e.jobhooks.io/slow': 'true' }
    spec.flows[0].jobTemplate.template.metadata = { annotations: slow }
    spec.flows[1].jobTemplate.template.metadata = { annotations: slow, labels: { 'e2e-outcome': 'fail' } }
    spec.flows[1].jobTemplate.backoffLimit = 0
  })
}

/** A taint some e2e Nodes carry, which the DaemonJob example tolerates. */
export const SPOT_TAINT = { key: 'e2e/spot', value: 'true', effect: 'NoExecute' }

/**
 * The example of manifests/examples/daemonjob.yaml named `name`, with short Jobs, the given
 * exclude list and a toleration of the e2e/spot taint.
 */
export function daemonJobExample (
  excludeNodeList: string,
  mutate: (spec: any) => void = () => {},
  name = 'daemonjob-example'
): any {
  const doc = exampleObject('daemonjob.yaml', 'DaemonJob')
  doc.metadata.name = name
  doc.spec.excludeNodeList = excludeNodeList
  // kwok finishes Job pods after 3 s; on a real cluster they sleep 3 s.
  doc.spec.template.spec.containers[0].command = ['sh', '-c', 'sleep 3']
  doc.spec.template.spec.tolerations = [{ key: SPOT_TAINT.key, operator: 'Exists' }]
  mutate(doc.spec)
  return doc
}

/**
 * Applies the five-job example `flow` in `ns` and returns once its first sync created job1 and
 * job4, with a watch of the namespace's Jobs that has seen them (and sees every Job from then on):
 * a flow under way, for scenarios that then take the service away. The watch stops at the end of
 * the test, if the caller has not stopped it before.
 */
export async function startFlowUntilFirstJobs (
  t: Tap,
  { cluster, getJson }: Pick<Scenarios, 'cluster' | 'getJson'>,
  ns: string,
  flow: any
): Promise<ReturnType<typeof watchObjects>> {
  await apply(cluster.kubectl, stringify(flow), ns)
  const watch = watchObjects(cluster, ['jobs', '-n', ns], ['.metadata.name'])
  const watching = watch.started.catch(() => {})
  t.teardown(async () => {
    await watch.stop().catch(() => {})
  })
  await waitFor(
    'job1 and job4 to be created',
    async () => {
      const names = (await getJson(['get', 'jobs', '-n', ns])).items.map((j: any) => j.metadata.name)
      return names.includes('jobflow-example-job1') && names.includes('jobflow-example-job4') ? true : undefined
    },
    120_000,
    200
  )
  await watching
  return watch
}
