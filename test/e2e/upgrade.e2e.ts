// Upgrades lose nothing, against the real thing. The previous release (0.3.0, built from git
// history by test/e2e/previous-release.sh) and this checkout serve the hooks behind one URL, a
// round-robin proxy of the test's own (test/e2e/proxy.ts); each version runs under its own
// CompositeControllers, switched at mid-flow as a helm upgrade or rollback applies them (the skew
// runs under the checkout's, as a rolling update does once helm applied them):
//   - upgrade: parents started on the old version, which is replaced mid-flow by the new one;
//   - version skew: old and new answer the same parents alternately, call by call, all their lives;
//   - rollback: parents started on the new version, replaced mid-flow by the old one.
// In each, every parent ends as it ends without a change of version: a JobFlow (with a branch its
// own `when` skips) whose job2 fails once and succeeds on its retry, every Job deleted by its TTL
// once its outcome is recorded; a
// DaemonJob Succeeded with one Job per eligible Node (deleted by its TTL too); an EphemeralJob
// whose container lands in each of its two Pods in turn; an OperationJob whose partition 1 holds
// one target Succeeded and the other Pending until it is raised; the CollaSet whose Pods it
// replaces. Every Job, Pod and ephemeral container is created once (counted from watches of the
// API server), and no parent is ever seen Invalid. Which version answered is read from each one's
// jobhooks_build_info on /metrics and from the proxy's count of the calls it forwarded to each.
// And the status converges while both serve (docs/architecture.md, "Versions side by side"): in
// the skew, each parent is synced at most twice as often as in the upgrade, where one version
// answers at a time; two versions that undid each other's status would sync it without end.
import t, { type Test } from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseAllDocuments, stringify } from 'yaml'
import { addKwokNode, apply, applyControllers, ROOT, run, waitFor, type Service } from './cluster.js'
import { startRoundRobin, type Backend, type RoundRobin } from './proxy.js'
import {
  containerState,
  daemonJobExample,
  isLive,
  isPodReady,
  jobFlowExample,
  setEphemeralContainerState,
  startScenarios,
  waitForStatusOf,
  watchObjects,
  type Scenarios,
} from './scenario.js'
import { versionAt } from './service.js'

interface Version {
  /** The version its package.json says, which its /metrics must say too. */
  name: string
  /** Its build's folder; the checkout when absent. */
  build?: string
}

/** The previous release, built (or found built) by test/e2e/previous-release.sh, or why not. */
async function previousRelease (): Promise<Version | { skip: string }> {
  const result = await run('bash', [join(ROOT, 'test', 'e2e', 'previous-release.sh')])
  if (result.code !== 0) throw new Error(`test/e2e/previous-release.sh failed: ${result.stderr}`)
  const value = (key: string): string | undefined => new RegExp(`^${key}=(.*)$`, 'm').exec(result.stdout)?.[1]
  const skip = value('SKIP')
  if (skip !== undefined) return { skip }
  return { name: String(value('RELEASE_VERSION')), build: String(value('RELEASE_DIR')) }
}

const POOL = { 'e2e/pool': 'upgrade' }
const NODES = ['kwok-upgrade-1', 'kwok-upgrade-2', 'kwok-upgrade-3']
const JOBFLOW_JOBS = ['job1', 'job2', 'job2-2', 'job3', 'job4', 'job5'].map((j) => `jobflow-example-${j}`)
const KINDS = ['jobflow', 'daemonjob', 'ephemeraljob', 'operationjob', 'collaset']
/** The EphemeralJob's two Pods, oldest first, and the name of the container it injects. */
const EJOB_PODS = ['ejob-upgrade-a', 'ejob-upgrade-b']
const EJOB_CONTAINER = 'check'
/** How much more often than with one version alone the skew may sync a parent. */
const SKEW_FACTOR = 2

if (process.env.E2E_KUBECONFIG !== undefined && process.env.E2E_KUBECONFIG !== '') {
  t.plan(0, 'the cluster of E2E_KUBECONFIG runs its own jobhooks: the tier cannot put versions behind its hooks')
} else {
  const previous = await previousRelease()
  if ('skip' in previous) {
    process.stderr.write(`upgrade.e2e.ts: skipped: ${previous.skip}\n`)
    t.plan(0, previous.skip)
  } else {
    const current: Version = { name: String(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version) }
    await scenarios(previous, current)
  }
}

/** A service of one version behind the proxy. */
interface Running {
  version: Version
  service: Service
}

async function scenarios (OLD: Version, NEW: Version): Promise<void> {
  const scenario = await startScenarios(t, { serviceAtHooksUrl: false })
  const { cluster, track } = scenario
  const proxy = await startRoundRobin(Number(new URL(String(cluster.hooksUrl)).port))
  t.teardown(async () => {
    await proxy.stop()
  })
  t.comment(
    `versions: ${OLD.name} (${String(OLD.build)}) and ${NEW.name} (the checkout), behind ${String(cluster.hooksUrl)}`
  )
  for (const node of NODES) {
    track('node', node)
    await addKwokNode(cluster.kubectl, node, {}, POOL)
  }
  const startBackend = cluster.startBackend as NonNullable<typeof cluster.startBackend>
  const launch = async (version: Version): Promise<Running> => {
    const service = await startBackend(version.build !== undefined ? { build: version.build } : {})
    const answered = await versionAt(service.url)
    if (answered !== version.name) {
      throw new Error(
        `the service of ${String(version.build ?? 'the checkout')} says it is ${String(answered)}, not ${version.name}`
      )
    }
    return { version, service }
  }
  const backend = (running: Running): Backend => ({ name: running.version.name, url: running.service.url })
  /**
   * As a rolling update does it: the next version is started and ready before the parents are,
   * then at mid-flow it is given every call and the first one is ended by SIGTERM (it finishes
   * the calls it is answering).
   */
  /** Each scenario's syncs per parent (`<kind>/<name>`), for the comparison at the end. */
  const syncs = new Map<string, Map<string, number>>()
  // Each version runs under its own CompositeControllers, as a helm upgrade or rollback applies
  // them with its Deployment: a hook or child kind one release adds is never asked of one that
  // lacks it. Switching, the version that serves is the newer one: an upgrade moves the calls
  // first, then the controllers; a rollback the controllers first, then the calls.
  const hooksUrl = String(cluster.hooksUrl)
  const controllersOf = async (version: Version): Promise<void> =>
    await applyControllers(cluster.kubectl, version.build ?? ROOT, hooksUrl)
  const rollOut = (from: Version, to: Version) => async (t: Test) => {
    await controllersOf(from)
    const first = await launch(from)
    proxy.route([backend(first)])
    const next = await launch(to)
    const name = from === OLD ? 'upgrade' : 'rollback'
    const counted = await lifeOfParents(t, scenario, proxy, name, async () => {
      if (from !== OLD) await controllersOf(to)
      proxy.route([backend(next)])
      if (from === OLD) await controllersOf(to)
      await first.service.stop()
      return [to.name]
    })
    syncs.set(name, counted)
    await next.service.stop()
    await controllersOf(NEW)
  }

  t.test(
    `upgrade: parents started on ${OLD.name}, replaced mid-flow by ${NEW.name}, end as without an upgrade`,
    rollOut(OLD, NEW)
  )

  t.test(
    `version skew: ${OLD.name} and ${NEW.name} answer the same parents alternately all their lives, the same ends`,
    async (t) => {
      const both = [await launch(OLD), await launch(NEW)]
      proxy.route(both.map(backend))
      syncs.set('skew', await lifeOfParents(t, scenario, proxy, 'skew', async () => both.map((r) => r.version.name)))
      for (const r of both) await r.service.stop()
    }
  )

  t.test(
    `rollback: parents started on ${NEW.name}, replaced mid-flow by ${OLD.name}, end as without a rollback`,
    rollOut(NEW, OLD)
  )

  t.test(
    `the status converges while ${OLD.name} and ${NEW.name} both serve: ` +
      `each parent synced at most ${SKEW_FACTOR}× as often as with one version at a time`,
    async (t) => {
      const [skew, upgrade, rollback] = ['skew', 'upgrade', 'rollback'].map((name) => syncs.get(name))
      if (skew === undefined || upgrade === undefined) {
        t.fail('the skew and the upgrade scenarios must both have run to the end')
        return
      }
      for (const [parent, n] of skew) {
        const alone = upgrade.get(parent) ?? 0
        const back = String(rollback?.get(parent))
        t.comment(`syncs of ${parent}: ${n} in the skew, ${alone} in the upgrade, ${back} in the rollback`)
        t.ok(
          alone > 0 && n <= SKEW_FACTOR * alone,
          `${parent}: ${n} syncs with both versions answering, within ${SKEW_FACTOR}× the upgrade's ${alone}`
        )
      }
      t.same([...skew.keys()].sort(), [...upgrade.keys()].sort(), 'the same parents in both')
    }
  )
}

/** The sync calls of `kind` that `calls` (by `<version> <path>`) forwarded to `version`. */
function answered (calls: Map<string, number>, version: string, kind: string): number {
  return calls.get(`${version} /hooks/${kind}/sync`) ?? 0
}

/**
 * The sync calls of each parent of `ns`, whichever version answered, by `<kind>/<name>`, from the
 * proxy's counts by parent (`/hooks/<kind>/sync <ns>/<name>`).
 */
function syncsIn (byParent: Map<string, number>, ns: string): Map<string, number> {
  const found = new Map<string, number>()
  for (const [key, n] of byParent) {
    const match = /^\/hooks\/([a-z]+)\/sync (\S+)\/(\S+)$/.exec(key)
    if (match !== null && match[2] === ns) found.set(`${String(match[1])}/${String(match[3])}`, n)
  }
  return new Map([...found].sort(([a], [b]) => (a < b ? -1 : 1)))
}

/** The counts of `after` less those of `before`. */
function since (before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  return new Map([...after].map(([key, n]) => [key, n - (before.get(key) ?? 0)]))
}

/**
 * The parents in a namespace of their own, from start to end: `midway` (a change of version, or
 * nothing) once each is under way, then the partition held, raised, and every end checked.
 * `midway` returns the versions that answer from then on: each must answer every kind. Returns the
 * sync calls of each parent over its life, whichever version answered them.
 */
async function lifeOfParents (
  t: Test,
  scenario: Scenarios,
  proxy: RoundRobin,
  name: string,
  midway: () => Promise<string[]>
): Promise<Map<string, number>> {
  const { cluster, getJson } = scenario
  const ns = await scenario.namespace(name)
  const targets = await collaSetFoo(scenario, ns)
  await ejobPods(scenario, ns)
  const { jobs, pods } = await watchNamespace(t, scenario, ns)
  const invalid = sampleInvalid(getJson, ns)
  // A scenario that fails half-way stops its loops too, or they would hold the test process open.
  t.teardown(async () => {
    await invalid.stop()
  })
  const failuresBefore = proxy.failures()
  const callsBefore = proxy.counts()
  // The EphemeralJob first: its first container is started in the kubelet's place before the
  // others begin, so that every parent is still under way at mid-flow.
  await startEphemeralJob(scenario, ns)
  await applyParents(scenario, ns, targets)
  await waitFor(
    'every parent under way',
    async () => {
      const names = (await getJson(['get', 'jobs', '-n', ns])).items.map((j: any) => String(j.metadata.name))
      const opj = await getJson(['get', 'operationjob', 'opj-replace', '-n', ns])
      return names.includes('jobflow-example-job1') &&
        names.some((n: string) => n.startsWith('daemonjob-upgrade-')) &&
        opj.status?.progress === 'Processing'
        ? true
        : undefined
    },
    180_000,
    250
  )
  const answering = await midway()
  const callsMidway = proxy.counts()
  t.comment(`up to mid-flow, calls by version: ${describeCalls(since(callsBefore, callsMidway))}`)
  await checkUnderWay(t, scenario, ns)
  // From now on the kubelet's part: each container of the EphemeralJob exits 0 as it lands.
  const kubelet = playEphemeralContainers(scenario, ns)
  t.teardown(kubelet.stop)

  await checkPartitionHolds(t, scenario, ns, targets)
  await cluster.kubectl([
    'patch',
    'operationjob',
    'opj-replace',
    '-n',
    ns,
    '--type',
    'merge',
    '-p',
    '{"spec":{"partition":2}}',
  ])
  await checkEnds(t, scenario, ns, targets)
  await kubelet.stop()
  // Let a second creation show up, if one were coming: the TTL deletions and a few syncs more.
  await new Promise((resolve) => setTimeout(resolve, 5_000))
  await checkCreatedOnce(t, scenario, ns, jobs, pods, targets)
  const seen = await invalid.stop()
  t.same(seen, [], 'no parent was ever seen Invalid')
  const after = since(callsMidway, proxy.counts())
  t.comment(`after mid-flow, calls by version: ${describeCalls(after)}`)
  for (const kind of KINDS) {
    t.ok(
      answering.every((v) => answered(after, v, kind) > 0),
      `after mid-flow, ${kind} syncs answered by ` +
        `${answering.map((v) => `${v} (${answered(after, v, kind)})`).join(' and ')}`
    )
  }
  t.equal(proxy.failures() - failuresBefore, 0, 'no hook call failed at the proxy (no backend, or a backend gone)')
  const syncs = syncsIn(proxy.byParent(), ns)
  t.comment(`${name}: syncs per parent over its life: ${describeCalls(syncs)}`)
  return syncs
}

/** At mid-flow, no parent has finished: the version after it finishes each. */
async function checkUnderWay (t: Test, { getJson }: Scenarios, ns: string): Promise<void> {
  const parents = (await getJson(['get', 'jobflows,daemonjobs,ephemeraljobs,operationjobs', '-n', ns])).items
  const where = parents.map((p: any) => `${String(p.kind)} ${String(p.status?.phase ?? p.status?.progress)}`).sort()
  t.same(
    where,
    ['DaemonJob Running', 'EphemeralJob Running', 'JobFlow Running', 'OperationJob Processing'],
    'every parent was under way at mid-flow'
  )
}

function describeCalls (calls: Map<string, number>): string {
  return [...calls]
    .filter(([, n]) => n > 0)
    .sort()
    .map(([key, n]) => `${key} ${n}`)
    .join(', ')
}

/** The first `kind` document of manifests/examples/`file`. */
function exampleDoc (file: string, kind: string): any {
  return parseAllDocuments(readFileSync(join(ROOT, 'manifests', 'examples', file), 'utf8'))
    .map((d) => d.toJS())
    .find((d) => d?.kind === kind)
}

/** The CollaSet `foo` of the Replace walkthrough, once its two Pods are Ready: their names, sorted. */
async function collaSetFoo ({ cluster, getJson }: Scenarios, ns: string): Promise<string[]> {
  await apply(cluster.kubectl, stringify(exampleDoc('collaset.yaml', 'CollaSet')), ns)
  const ready = await waitFor(
    'two Ready Pods of foo',
    async () => {
      const list = (await getJson(['get', 'pods', '-n', ns, '-l', 'app=foo'])).items.filter(isLive)
      return list.length === 2 && list.every(isPodReady) ? list : undefined
    },
    180_000,
    500
  )
  return ready.map((p: any) => String(p.metadata.name)).sort()
}

/** The EphemeralJob's two Pods, standalone on the tier's node (kwok runs them), created a second apart. */
async function ejobPods ({ cluster, getJson }: Scenarios, ns: string): Promise<void> {
  for (const name of EJOB_PODS) {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels: { app: 'ejob-upgrade' } },
      spec: {
        ...(cluster.nodeName !== undefined ? { nodeName: cluster.nodeName } : {}),
        containers: [{ name: 'main', image: 'busybox:1.36', command: ['sleep', '3600'] }],
      },
    }
    await apply(cluster.kubectl, stringify(pod), ns)
    await new Promise((resolve) => setTimeout(resolve, 1_100))
  }
  await waitFor(
    'the EphemeralJob\'s Pods running',
    async () => {
      const list = (await getJson(['get', 'pods', '-n', ns, '-l', 'app=ejob-upgrade'])).items
      const running = list.filter((p: any) => p.status?.phase === 'Running')
      return running.length === EJOB_PODS.length ? true : undefined
    },
    60_000,
    500
  )
}

/** The states of the EphemeralJob's containers in its Pods, by Pod: none, or `running`, `terminated`, `waiting`. */
async function ejobContainers ({ getJson }: Scenarios, ns: string): Promise<Map<string, string[]>> {
  const list = (await getJson(['get', 'pods', '-n', ns, '-l', 'app=ejob-upgrade'])).items
  return new Map(
    list.map((pod: any) => {
      const injected = (pod.spec.ephemeralContainers ?? []).filter((c: any) => c.name === EJOB_CONTAINER)
      const state = (pod.status?.ephemeralContainerStatuses ?? []).find((c: any) => c.name === EJOB_CONTAINER)?.state
      return [String(pod.metadata.name), injected.map(() => Object.keys(state ?? { waiting: {} })[0] ?? 'waiting')]
    })
  )
}

/**
 * The EphemeralJob (its two Pods in turn, one container at a time), once its container landed in
 * the first Pod and runs there (written in the kubelet's place: kwok runs no ephemeral container).
 */
async function startEphemeralJob (scenario: Scenarios, ns: string): Promise<void> {
  const { cluster, getJson } = scenario
  const job = {
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'EphemeralJob',
    metadata: { name: 'ejob-upgrade' },
    spec: {
      selector: { matchLabels: { app: 'ejob-upgrade' } },
      replicas: EJOB_PODS.length,
      parallelism: 1,
      template: {
        ephemeralContainers: [
          {
            name: EJOB_CONTAINER,
            image: 'busybox:1.36',
            imagePullPolicy: 'IfNotPresent',
            terminationMessagePolicy: 'File',
            targetContainerName: 'main',
            command: ['sh', '-c', 'true'],
          },
        ],
      },
    },
  }
  await apply(cluster.kubectl, stringify(job), ns)
  const first = String(EJOB_PODS[0])
  await waitFor(
    `the EphemeralJob's container in ${first}`,
    async () => ((await ejobContainers(scenario, ns)).get(first)?.length === 1 ? true : undefined),
    60_000,
    250
  )
  await setEphemeralContainerState(cluster, ns, first, EJOB_CONTAINER, containerState.running())
  await waitForStatusOf(getJson, 'ephemeraljob', ns, 'ejob-upgrade', 'running', (s) => s.phase === 'Running', 60_000)
}

/**
 * Runs `step` about twice a second until `stop()`, which returns once the last turn is over. A
 * turn that throws (a failed read or write) is no turn: the next one tries again.
 */
function everyHalfSecond (step: () => Promise<void>): { stop: () => Promise<void> } {
  let running = true
  const loop = (async () => {
    while (running) {
      await step().catch(() => {})
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
  })()
  return {
    stop: async () => {
      running = false
      await loop
    },
  }
}

/** The kubelet's part for the EphemeralJob until `stop`: every container that lands exits 0. */
function playEphemeralContainers (scenario: Scenarios, ns: string): { stop: () => Promise<void> } {
  return everyHalfSecond(async () => {
    for (const [pod, states] of await ejobContainers(scenario, ns)) {
      if (states.length > 0 && states[0] !== 'terminated') {
        await setEphemeralContainerState(scenario.cluster, ns, pod, EJOB_CONTAINER, containerState.terminated(0))
      }
    }
  })
}

/** Watches of the namespace's Jobs and foo's Pods, stopped at the end of the test if not before. */
async function watchNamespace (
  t: Test,
  { cluster }: Scenarios,
  ns: string
): Promise<{ jobs: ReturnType<typeof watchObjects>; pods: ReturnType<typeof watchObjects> }> {
  // A Job of no parent, which nothing touches: a watch needs an object to start on.
  await apply(
    cluster.kubectl,
    stringify({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'bystander' },
      spec: {
        suspend: true,
        template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox:1.36' }] } },
      },
    }),
    ns
  )
  const jobs = watchObjects(cluster, ['jobs', '-n', ns], ['.metadata.name'])
  const pods = watchObjects(cluster, ['pods', '-n', ns, '-l', 'app=foo'], ['.metadata.name'])
  t.teardown(async () => {
    await jobs.stop().catch(() => {})
    await pods.stop().catch(() => {})
  })
  await Promise.all([jobs.started, pods.started])
  return { jobs, pods }
}

/**
 * The JobFlow (job2 fails once, its retry succeeds; TTL 0 on every Job), the DaemonJob (TTL 0) and the OperationJob
 * (partition 1).
 */
async function applyParents ({ cluster }: Scenarios, ns: string, targets: string[]): Promise<void> {
  const flow = jobFlowExample(cluster, (spec) => {
    for (const f of spec.flows) f.jobTemplate.ttlSecondsAfterFinished = 0
    const job2 = spec.flows.find((f: any) => f.name === 'job2')
    // kwok fails the pods of the Job named so (test/e2e/kwok-stages.yaml); the retry is named job2-2.
    Object.assign(job2.jobTemplate, { backoffLimit: 0 })
    job2.jobTemplate.template.metadata = { labels: { 'e2e-fail-job': 'jobflow-example-job2' } }
    job2.retry = { limit: 2, backoffSeconds: 5 }
    // What both versions read of each other: a branch its own `when` skipped (a leaf, so both
    // versions agree it does not fail the flow). Fan-out is not given: 0.2.0, the release this
    // scenario was written against, had none, and the plain steps cover the record format.
    const job1 = spec.flows.find((f: any) => f.name === 'job1')
    spec.flows.push({
      name: 'on-failure',
      dependencies: ['job1'],
      when: "flows.job1.phase == 'Failed'",
      jobTemplate: structuredClone(job1.jobTemplate),
    })
  })
  const daemon = daemonJobExample(
    '',
    (spec) => {
      spec.template.spec.nodeSelector = POOL
      spec.ttlSecondsAfterFinished = 0
      // Three pods one after the other (about 10 s): still running when the version changes.
      Object.assign(spec, { completions: 3, parallelism: 1 })
    },
    'daemonjob-upgrade'
  )
  const job = exampleDoc('operationjob-replace.yaml', 'OperationJob')
  job.spec.targets = targets.map((name) => ({ name }))
  for (const parent of [flow, daemon, job]) await apply(cluster.kubectl, stringify(parent), ns)
}

/** Partition 1: one target Succeeded, the other Pending, and still so a few syncs later. */
async function checkPartitionHolds (t: Test, { getJson }: Scenarios, ns: string, targets: string[]): Promise<void> {
  await waitForStatusOf(
    getJson,
    'operationjob',
    ns,
    'opj-replace',
    'its first target replaced',
    (s) => s.targetDetails?.[0]?.progress === 'Succeeded',
    240_000
  )
  await new Promise((resolve) => setTimeout(resolve, 5_000))
  const held = await getJson(['get', 'operationjob', 'opj-replace', '-n', ns])
  t.match(
    held.status,
    { progress: 'Processing', totalPodCount: 2, succeededPodCount: 1, failedPodCount: 0 },
    'partition 1: Processing, 1 of 2 Succeeded'
  )
  t.same(
    held.status.targetDetails.map((d: any) => `${String(d.name)} ${String(d.progress)}`),
    [`${String(targets[0])} Succeeded`, `${String(targets[1])} Pending`],
    'the first target Succeeded, the other Pending'
  )
}

/** Every parent's end, as it is without a change of version. */
async function checkEnds (t: Test, { cluster, getJson }: Scenarios, ns: string, targets: string[]): Promise<void> {
  const finished = (s: any): boolean => ['Succeeded', 'Failed', 'Invalid'].includes(s.phase)
  const [flow, daemon, ejob, job] = await Promise.all([
    waitForStatusOf(getJson, 'jobflow', ns, 'jobflow-example', 'finished', finished, 300_000),
    waitForStatusOf(getJson, 'daemonjob', ns, 'daemonjob-upgrade', 'finished', finished, 300_000),
    waitForStatusOf(getJson, 'ephemeraljob', ns, 'ejob-upgrade', 'finished', finished, 300_000),
    waitForStatusOf(
      getJson,
      'operationjob',
      ns,
      'opj-replace',
      'finished',
      (s) => ['Succeeded', 'Failed'].includes(s.progress),
      300_000
    ),
  ])
  t.match(flow.status, { phase: 'Succeeded', jobsSucceeded: '5/6' }, 'the JobFlow Succeeded, 5/6')
  t.same(
    flow.status.jobs.map((j: any) => `${String(j.name)} ${String(j.jobName)} ${String(j.phase)}`),
    [
      'job1 jobflow-example-job1 Succeeded',
      'job2 jobflow-example-job2 Failed',
      'job2 jobflow-example-job2-2 Succeeded',
      'job3 jobflow-example-job3 Succeeded',
      'job4 jobflow-example-job4 Succeeded',
      'job5 jobflow-example-job5 Succeeded',
      'on-failure jobflow-example-on-failure Skipped',
    ],
    "every step's attempts: job2 failed once, its retry succeeded; the branch not taken"
  )
  t.match(flow.status.conditions, [
    { type: 'Valid', status: 'True' },
    { type: 'Complete', status: 'True' },
  ])
  t.match(
    daemon.status,
    { phase: 'Succeeded', desired: NODES.length, succeeded: NODES.length, failed: 0 },
    'the DaemonJob Succeeded on its Nodes'
  )
  t.same(daemon.status.succeededNodes, NODES, 'succeededNodes names every eligible Node')
  t.match(
    ejob.status,
    { phase: 'Succeeded', match: 2, succeeded: 2, failed: 0, running: 0, waiting: 0 },
    'the EphemeralJob Succeeded in both Pods'
  )
  // No Job waited for Kueue: the QUEUED columns are empty, as kubectl prints an absent field.
  const tables = await Promise.all(
    ['jobflows', 'daemonjobs'].map(async (resource) => (await cluster.kubectl(['get', resource, '-n', ns])).stdout)
  )
  t.match(
    tables[0],
    /^NAME\s+STATUS\s+JOBS\s+QUEUED\s+AGE\s*\njobflow-example\s+Succeeded\s+5\/6\s+\d+[smhd]\S*\s*$/m,
    'kubectl get jobflows: QUEUED empty'
  )
  t.match(
    tables[1],
    new RegExp(`^daemonjob-upgrade\\s+Succeeded\\s+${NODES.length}\\s+0\\s+${NODES.length}\\s+0\\s+\\S+\\s*$`, 'm'),
    'kubectl get daemonjobs: QUEUED empty'
  )
  t.match(
    job.status,
    { progress: 'Succeeded', totalPodCount: 2, succeededPodCount: 2, failedPodCount: 0 },
    'partition 2: the OperationJob Succeeded, 2 of 2'
  )
  t.same(
    job.status.targetDetails.map((d: any) => `${String(d.name)} ${String(d.progress)}`),
    targets.map((name) => `${name} Succeeded`)
  )
  await waitFor(
    'every Job of the parents deleted by its TTL',
    async () => {
      const left = (await getJson(['get', 'jobs', '-n', ns])).items.filter((j: any) => j.metadata.name !== 'bystander')
      return left.length === 0 ? true : undefined
    },
    120_000,
    1_000
  )
  t.pass('every Job of the JobFlow and the DaemonJob was deleted by its TTL, its outcome kept in the status')
}

/**
 * From the watches: each Job created once, and of foo's Pods the two first and one replacement of
 * each target; and one container of the EphemeralJob in each of its Pods.
 */
async function checkCreatedOnce (
  t: Test,
  scenario: Scenarios,
  ns: string,
  jobs: ReturnType<typeof watchObjects>,
  pods: ReturnType<typeof watchObjects>,
  targets: string[]
): Promise<void> {
  const added = async (watch: ReturnType<typeof watchObjects>): Promise<string[]> =>
    (await watch.stop())
      .filter((e) => e.type === 'ADDED')
      .map((e) => e.fields[0] ?? '')
      .sort()
  const jobNames = (await added(jobs)).filter((n) => n !== 'bystander')
  t.same(
    jobNames,
    [...NODES.map((n) => `daemonjob-upgrade-${n}`), ...JOBFLOW_JOBS].sort(),
    `${ns}: every Job created exactly once, each JobFlow attempt and each Node's`
  )
  const podNames = await added(pods)
  t.equal(new Set(podNames).size, podNames.length, 'no Pod of foo created twice')
  t.equal(
    podNames.length,
    targets.length * 2,
    `foo's Pods: its two and one replacement per target (${podNames.join(', ')})`
  )
  t.same(
    Object.fromEntries(await ejobContainers(scenario, ns)),
    Object.fromEntries(EJOB_PODS.map((pod) => [pod, ['terminated']])),
    'one container of the EphemeralJob in each of its Pods, injected once'
  )
}

/**
 * Samples the parents of `ns` about twice a second until `stop()`: every one seen Invalid (phase
 * or progress Invalid, or a Valid condition False), as `<kind>/<name> <what>`, once each.
 */
function sampleInvalid (getJson: Scenarios['getJson'], ns: string): { stop: () => Promise<string[]> } {
  const seen = new Set<string>()
  const sampling = everyHalfSecond(async () => {
    const kinds = 'jobflows,daemonjobs,ephemeraljobs,operationjobs,collasets'
    for (const item of (await getJson(['get', kinds, '-n', ns])).items) {
      const status = item.status ?? {}
      const valid = (status.conditions ?? []).find((c: any) => c.type === 'Valid')
      if (status.phase === 'Invalid' || status.progress === 'Invalid') {
        seen.add(`${String(item.kind)}/${String(item.metadata.name)} Invalid`)
      }
      if (valid?.status === 'False') {
        seen.add(`${String(item.kind)}/${String(item.metadata.name)} Valid False: ${String(valid.message)}`)
      }
    }
  })
  return {
    stop: async () => {
      await sampling.stop()
      return [...seen]
    },
  }
}
