// Every example of manifests/examples/ kept to its header's promise on a real control plane: the
// header's own commands, run as printed (each in a namespace of its own, `-n <ns>` added, the
// files applied unedited), until `kubectl get <resource> <name>` shows the header's table
// (test/helpers/example-promises.ts reads the headers; the unit tier holds the same promises
// against the simulator). The one help the test gives is what kwok does not do: it runs Pods but
// not ephemeral containers, so on the tier's own cluster the test writes their statuses in the
// kubelet's place, failing or hanging the ones the example's `kubectl jobhooks simulate` line
// fails or hangs (`--fail`, `--hang`): the line states what the example's containers do on a real
// node.
// kwok runs no command either: a termination message the example's command writes with a plain
// echo, kwok writes in its place, as the simulator's kubelet does (test/e2e/kwok-stages.yaml).
// An example that applies objects of Kueue's API runs where Kueue runs: the tier installs it when
// one does (test/e2e/kueue.ts); on a cluster of E2E_KUBECONFIG without Kueue it is skipped.
// The objects of every kind they make, read from the API server every few seconds from their first
// command on (a step is Queued only while its `kubectl wait` runs), must resolve every path of the
// chart's kube-state-metrics configuration (test/helpers/signals.ts).
import t, { type Test } from 'tap'
import { readFileSync } from 'node:fs'
import { isAbsolute, join } from 'node:path'
import { parse } from 'yaml'
import { ROOT, waitFor } from './cluster.js'
import { containerState, setEphemeralContainerState, startScenarios } from './scenario.js'
import {
  brokenPromises,
  exampleObjects,
  examplePromises,
  isSimulateLine,
  shellWords,
  type ExamplePromise,
} from '../helpers/example-promises.js'
import { ksmResources, schemaDeclares, unresolvedPaths } from '../helpers/signals.js'

const promises = examplePromises()
const { cluster, namespace, getJson } = await startScenarios(t, { kueue: promises.some(needsKueue) })
// A user's cluster (E2E_KUBECONFIG) has kubelets that run ephemeral containers for real.
const ownCluster = cluster.nodeName !== undefined

/** How long an example may take to keep its promise once its commands ran (the slowest takes about a minute). */
const PROMISE_TIMEOUT_MS = 240_000
/**
 * The longest `kubectl wait` the tier lets a header's wait run, in seconds (the headers allow up to 10m for a real
 * cluster).
 */
const WAIT_CAP_SECONDS = 180
/** How long a kept promise must still hold afterwards: a `Running` that was only passing by would show. */
const HOLDS_FOR_MS = 5_000
/** The kinds kube-state-metrics reads, and the objects of them the examples made, as read on the way and at the end. */
const signalResources = ksmResources()
/** Each version of each object read, once: most reads find nothing changed. */
const signalObjects = new Map<string, any>()
const signalKinds = signalResources.map((r) => `${r.groupVersionKind.kind.toLowerCase()}s.${r.groupVersionKind.group}`)
const exampleNamespaces: string[] = []
/** How often the objects are read while an example runs. */
const SIGNAL_SAMPLE_MS = 2_000
/** How long, once every example ran, the objects may take to show every path (a CronJobFlow's first success). */
const SIGNALS_TIMEOUT_MS = 150_000

/** Keeps the objects of our kinds in `ns`; a read that fails is one sample fewer, not the example's failure. */
async function readSignalObjects (ns: string): Promise<void> {
  const list = await getJson(['get', signalKinds.join(','), '-n', ns]).catch(() => ({ items: [] }))
  for (const o of list.items) signalObjects.set(`${String(o.metadata.uid)}@${String(o.metadata.resourceVersion)}`, o)
}

/** How long an ephemeral container runs before it exits, unless it hangs. */
const EPHEMERAL_RUN_MS = 1_000

const sleep = async (ms: number): Promise<void> => {
  await new Promise((resolve) => setTimeout(resolve, ms))
}

/** The files the header's `kubectl apply -f` lines apply, in order. */
function appliedFiles (promise: ExamplePromise): string[] {
  return promise.commands
    .map(shellWords)
    .filter((w) => w[0] === 'kubectl' && w[1] === 'apply')
    .flatMap((w) => w.filter((_, i) => w[i - 1] === '-f' || w[i - 1] === '--filename'))
}

/** Whether an applied file holds objects of Kueue's API (a LocalQueue, a ClusterQueue): it needs Kueue. */
function needsKueue (promise: ExamplePromise): boolean {
  return appliedFiles(promise)
    .flatMap((file) => exampleObjects(file.replace(/^manifests\/examples\//, '')))
    .some((o) => String(o.apiVersion).startsWith('kueue.x-k8s.io/'))
}

/** Whether an applied file makes ephemeral containers: an EphemeralJob, or an OperationJob with the Exec action. */
function injectsEphemeralContainers (promise: ExamplePromise): boolean {
  return appliedFiles(promise)
    .flatMap((file) => exampleObjects(file.replace(/^manifests\/examples\//, '')))
    .some((o) => o.kind === 'EphemeralJob' || (o.kind === 'OperationJob' && o.spec?.action === 'Exec'))
}

/** The names the simulate line gives `flag` (`--fail a,b`, `--fail=a`), as the simulator reads them. */
function namesOf (simulate: string[], flag: string): string[] {
  return simulate
    .flatMap((arg, i) =>
      arg === flag ? [simulate[i + 1] ?? ''] : arg.startsWith(`${flag}=`) ? [arg.slice(flag.length + 1)] : []
    )
    .flatMap((raw) => raw.split(',').map((s) => s.trim()))
    .filter((s) => s !== '')
}

/**
 * Whether the Pod is `name`, or a Pod of the workload `name`: a CollaSet's own, or a Deployment's
 * through its ReplicaSet `name-<hash>` (a hash has no dash, so `helloworld` is not `helloworld-no-work`).
 */
function answersTo (pod: any, name: string): boolean {
  if (pod.metadata.name === name) return true
  return (pod.metadata.ownerReferences ?? []).some(
    (o: any) =>
      o.controller === true &&
      ((o.kind === 'CollaSet' && o.name === name) ||
        (o.kind === 'ReplicaSet' &&
          String(o.name).startsWith(`${name}-`) &&
          !String(o.name)
            .slice(name.length + 1)
            .includes('-')))
  )
}

/**
 * Plays the kubelet for the ephemeral containers of the Pods of `ns` until stopped: each starts
 * running as soon as it is in the Pod's spec, and a second later exits 1 in a Pod the simulate
 * line fails, 0 elsewhere, or keeps running in a Pod it hangs.
 */
function playEphemeralKubelet (ns: string, simulate: string[]): { stop: () => Promise<unknown> } {
  const fail = namesOf(simulate, '--fail')
  const hang = namesOf(simulate, '--hang')
  let running = true
  let lastError: unknown
  const started = new Map<string, number>()
  const loop = (async () => {
    while (running) {
      try {
        for (const pod of (await getJson(['get', 'pods', '-n', ns])).items) {
          for (const container of pod.spec.ephemeralContainers ?? []) {
            const key = `${String(pod.metadata.uid)}/${String(container.name)}`
            const state =
              (pod.status?.ephemeralContainerStatuses ?? []).find((s: any) => s.name === container.name)?.state ?? {}
            if (state.running === undefined && state.terminated === undefined) {
              await setEphemeralContainerState(cluster, ns, pod.metadata.name, container.name, containerState.running())
              started.set(key, Date.now())
            } else if (
              state.running !== undefined &&
              !hang.some((n) => answersTo(pod, n)) &&
              Date.now() - (started.get(key) ?? 0) >= EPHEMERAL_RUN_MS
            ) {
              await setEphemeralContainerState(
                cluster,
                ns,
                pod.metadata.name,
                container.name,
                containerState.terminated(fail.some((n) => answersTo(pod, n)) ? 1 : 0)
              )
            }
          }
        }
      } catch (error) {
        // A failed read or write is tried again on the next round; the last one is reported.
        lastError = error
      }
      await sleep(500)
    }
  })()
  return {
    stop: async () => {
      running = false
      await loop
      return lastError
    },
  }
}

/** A duration as kubectl's --timeout takes it (90s, 5m, 1h), in seconds. */
function durationSeconds (text: string): number | undefined {
  const match = /^(\d+)(s|m|h)$/.exec(text)
  return match === null ? undefined : Number(match[1]) * { s: 1, m: 60, h: 3600 }[match[2] as 's' | 'm' | 'h']
}

/**
 * A header's kubectl command as the test runs it in `ns`: `-n <ns>` added, a file named relative to
 * the repository found from wherever the test runs, and a wait's timeout capped to fit the tier.
 */
function kubectlArgs (command: string, ns: string): string[] {
  const [program, ...args] = shellWords(command)
  if (program !== 'kubectl') throw new Error(`the header runs ${String(program)}, which the tier does not: ${command}`)
  const capped = args.map((arg, i) => {
    if ((args[i - 1] === '-f' || args[i - 1] === '--filename') && !isAbsolute(arg)) return join(ROOT, arg)
    const timeout = arg.startsWith('--timeout=') ? durationSeconds(arg.slice('--timeout='.length)) : undefined
    return args[0] === 'wait' && timeout !== undefined && timeout > WAIT_CAP_SECONDS
      ? `--timeout=${WAIT_CAP_SECONDS}s`
      : arg
  })
  return [...capped, '-n', ns]
}

/** What the namespace holds, for a failure's message: the object's status and every Pod's phase and node. */
async function describe (t: Test, promise: ExamplePromise, ns: string): Promise<void> {
  const object = await getJson(['get', promise.get.resource, promise.get.name, '-n', ns]).catch((error: Error) => ({
    status: error.message,
  }))
  t.comment(`status of ${promise.get.resource} ${ns}/${promise.get.name}: ${JSON.stringify(object.status, null, 2)}`)
  const pods = await getJson(['get', 'pods', '-n', ns]).catch(() => ({ items: [] }))
  t.comment(
    `Pods of ${ns}: ${pods.items
      .map((p: any) => `${String(p.metadata.name)} ${String(p.status?.phase)} on ${String(p.spec.nodeName)}`)
      .join(', ') || 'none'}`
  )
}

/** The promised cells the object does not show yet (empty once it keeps the promise), with the object read. */
async function check (promise: ExamplePromise, ns: string): Promise<{ problems: string[]; object: any }> {
  const object = await getJson(['get', promise.get.resource, promise.get.name, '-n', ns])
  return { problems: brokenPromises(promise, object), object }
}

async function keepsItsPromise (t: Test, promise: ExamplePromise): Promise<void> {
  const ns = await namespace(promise.file.replace(/\.yaml$/, ''))
  exampleNamespaces.push(ns)
  const sampling = setInterval(() => {
    readSignalObjects(ns).catch(() => undefined)
  }, SIGNAL_SAMPLE_MS)
  t.teardown(() => clearInterval(sampling))
  const kubelet =
    ownCluster && injectsEphemeralContainers(promise) ? playEphemeralKubelet(ns, promise.simulate) : undefined
  t.teardown(async () => {
    await kubelet?.stop()
  })

  for (const command of promise.commands) {
    // The simulator's line is the unit tier's to run (test/cli/simulate.test.ts).
    if (isSimulateLine(command)) continue
    const args = kubectlArgs(command, ns)
    const result = await cluster.kubectl(args)
    if (result.code !== 0) {
      t.fail(`$ ${command} (as kubectl ${args.join(' ')}) failed: ${result.stderr.trim()}`)
      await describe(t, promise, ns)
      return
    }
    t.pass(`$ ${command}`)
  }

  const what = `kubectl get ${promise.get.resource} ${promise.get.name} to show ${Object.entries(promise.columns)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ')}`
  let last: { problems: string[]; object: any } = { problems: ['never read'], object: undefined }
  try {
    await waitFor(
      what,
      async () => {
        last = await check(promise, ns)
        return last.problems.length === 0 ? true : undefined
      },
      PROMISE_TIMEOUT_MS,
      1_000
    )
  } catch (error) {
    t.fail(
      `${promise.file} does not keep its promise: ${last.problems.join('; ')} ` +
        `(${error instanceof Error ? error.message : String(error)})`
    )
    await describe(t, promise, ns)
    return
  }
  t.pass(what)

  await sleep(HOLDS_FOR_MS)
  const later = await check(promise, ns)
  t.same(later.problems, [], `the promise still holds ${HOLDS_FOR_MS / 1000} s later`)
  if (later.problems.length > 0) await describe(t, promise, ns)
  clearInterval(sampling)
  await readSignalObjects(ns)

  const table = await cluster.kubectl(['get', promise.get.resource, promise.get.name, '-n', ns])
  t.comment(`$ kubectl get ${promise.get.resource} ${promise.get.name} -n ${ns}\n${table.stdout.trimEnd()}`)
  t.same(
    // Columns are three blanks apart; a name may be two words (LAST SCHEDULE).
    table.stdout.split('\n')[0]?.trim().split(/\s{2,}/),
    ['NAME', ...Object.keys(promise.columns), 'AGE'],
    "kubectl prints the columns of the header's table"
  )

  const kubeletError = await kubelet?.stop()
  if (kubeletError !== undefined) {
    t.comment(`the last failed write of an ephemeral container's status (retried): ${String(kubeletError)}`)
  }
}

// Each example in its own namespace, all at once: they share only the Nodes, which none changes.
t.jobs = promises.length
const examples = promises.map(async (promise) =>
  await t.test(
    `${promise.file}: ${promise.commands.filter((c) => !isSimulateLine(c)).length} commands as printed, then ` +
      `kubectl get ${promise.get.resource} ${promise.get.name} shows the header's table`,
    { skip: needsKueue(promise) && cluster.kueue === undefined ? 'needs Kueue, which this cluster has not' : false },
    async (t) => {
      await keepsItsPromise(t, promise)
    }
  )
)
await Promise.all(examples)

// A count a status leaves out while it is zero (a DaemonJob's nodes queued by Kueue; no example
// queues one) may be absent from every object here, if its CRD keeps the field: the unit tier
// (test/charts/signals.test.ts) has the hooks write each of them.
function unresolvedSignals (): Map<string, { objects: number; strict: string[]; problems: string[] }> {
  return new Map(
    signalResources.map((resource) => {
      const { kind } = resource.groupVersionKind
      const crd = parse(readFileSync(join(ROOT, 'manifests', 'crds', `${kind.toLowerCase()}.yaml`), 'utf8'))
      const objects = [...signalObjects.values()].filter((o) => o.kind === kind)
      const declared = (path: Array<string | number>): boolean => schemaDeclares(crd, path)
      const problems = unresolvedPaths(resource, objects, declared)
      return [kind, { objects: objects.length, strict: unresolvedPaths(resource, objects), problems }]
    })
  )
}

t.test("every path of kube-state-metrics' configuration resolves on the objects the examples made", async (t) => {
  // The report example's first run succeeds a minute or so after its promise: read on until it has.
  await waitFor(
    'every path to resolve',
    async () => {
      for (const ns of exampleNamespaces) await readSignalObjects(ns)
      return [...unresolvedSignals().values()].every((k) => k.problems.length === 0) ? true : undefined
    },
    SIGNALS_TIMEOUT_MS,
    5_000
  ).catch(() => undefined)
  for (const [kind, { objects, strict, problems }] of unresolvedSignals()) {
    t.ok(objects > 0, `${kind}: examples made some`)
    if (strict.length > 0) t.comment(`${kind}: absent on every object, a count read as 0: ${strict.join('; ')}`)
    t.same(problems, [], `${kind}: ${objects} versions of its objects`)
  }
})
