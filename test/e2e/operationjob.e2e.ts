// OperationJob against the real thing: the API server with our CRDs, Metacontroller calling the
// OperationJob and CollaSet hooks, and the service's executor labelling Pods, writing their
// readiness-gate condition and evicting them through the eviction API, where the disruption
// controller's PodDisruptionBudgets hold. The Deployment, ReplicaSet and disruption controllers
// are the real kube-controller-manager's; kwok plays the kubelet, readiness gates included
// (test/e2e/kwok-stages.yaml). `kubectl describe opj` shows the Events the service recorded on the
// job for what it did. Everything asserted is read back from the API server.
import t, { type Test } from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseAllDocuments, stringify } from 'yaml'
import { apply, ROOT, waitFor } from './cluster.js'
import {
  isLive,
  isPodReady,
  podCondition,
  sampleReadyPods,
  startScenarios,
  waitForStatusOf,
  watchObjects,
} from './scenario.js'
import { describedEvents, waitForDescribedEvents } from './describe.js'

const { cluster, namespace, getJson } = await startScenarios(t)

const GATE = 'jobhooks.io/service-ready'
const LOCK = 'jobhooks.io/ops-lifecycle'

function exampleDoc (file: string, kind: string): any {
  return parseAllDocuments(readFileSync(join(ROOT, 'manifests', 'examples', file), 'utf8'))
    .map((d) => d.toJS())
    .find((d) => d?.kind === kind)
}

async function pods (ns: string, selector: string): Promise<any[]> {
  return (await getJson(['get', 'pods', '-n', ns, '-l', selector])).items
}

async function pod (ns: string, name: string): Promise<any | undefined> {
  const result = await cluster.kubectl(['get', 'pod', name, '-n', ns, '-o', 'json'])
  if (result.code === 0) return JSON.parse(result.stdout)
  if (/NotFound/.test(result.stderr)) return undefined
  throw new Error(result.stderr)
}

async function kubectlOk (t: Test, args: string[]): Promise<string> {
  const result = await cluster.kubectl(args)
  t.equal(result.code, 0, `kubectl ${args.join(' ')}${result.code === 0 ? '' : `: ${result.stderr}`}`)
  return result.stdout
}

async function opj (ns: string, name: string): Promise<any> {
  return await getJson(['get', 'operationjob', name, '-n', ns])
}

/** Waits until the job's status passes `check`; a timeout names the last status seen. */
async function waitForJob (
  ns: string,
  name: string,
  what: string,
  check: (status: any) => boolean,
  timeoutMs = 90_000
): Promise<any> {
  return await waitForStatusOf(getJson, 'operationjob', ns, name, what, check, timeoutMs)
}

/** The job's status in full, as a comment, when it is not what the test expected. */
function showStatus (t: Test, job: any, expected: string): void {
  if (job.status?.progress !== expected) {
    t.comment(`status of ${String(job.metadata.name)}: ${JSON.stringify(job.status, null, 2)}`)
  }
}

const jobCondition = (job: any, type: string): any => (job.status?.conditions ?? []).find((c: any) => c.type === type)

/** The CollaSet `foo` of the walkthrough, once both its Pods are Ready: their names, sorted. */
async function collaSetFoo (ns: string): Promise<string[]> {
  await apply(cluster.kubectl, stringify(exampleDoc('collaset.yaml', 'CollaSet')), ns)
  const ready = await waitFor(
    'two Ready Pods of foo',
    async () => {
      const list = (await pods(ns, 'app=foo')).filter(isLive)
      return list.length === 2 && list.every(isPodReady) ? list : undefined
    },
    90_000,
    500
  )
  return ready.map((p) => String(p.metadata.name)).sort()
}

/** Waits until `name` is gone and `replacement` (labelled replace-origin=name) is Ready. */
async function checkReplaced (t: Test, ns: string, name: string, replacement: string | undefined): Promise<void> {
  t.ok(
    replacement !== undefined && replacement !== name,
    `extraInfo.NewPod names the replacement of ${name}: ${String(replacement)}`
  )
  if (replacement === undefined) return
  // Deleted, the Pod may still be terminating (its grace period): gone once the kubelet is done.
  const gone = await waitFor(`${name} gone`, async () => ((await pod(ns, name)) === undefined ? true : undefined),
    60_000, 500)
  t.equal(gone, true, `${name} is gone`)
  const fresh = await pod(ns, replacement)
  t.ok(fresh !== undefined, `${replacement} exists`)
  if (fresh === undefined) return
  t.match(fresh.metadata.name, /^foo-[a-z0-9]{5}$/, `${replacement} is a Pod of foo`)
  t.equal(
    fresh.metadata.labels?.['jobhooks.io/replace-origin'],
    name,
    `${replacement} is labelled jobhooks.io/replace-origin=${name}`
  )
  t.ok(isLive(fresh) && isPodReady(fresh), `${replacement} is Ready`)
  t.equal(podCondition(fresh, GATE)?.status, 'True', `${replacement}: ${GATE} True`)
}

const CLS_TABLE =
  new RegExp(
    String.raw`^NAME\s+DESIRED\s+CURRENT\s+AVAILABLE\s+UPDATED\s+UPDATED_READY\s+UPDATED_AVAILABLE\s+` +
    String.raw`CURRENT_REVISION\s+UPDATED_REVISION\s+AGE\s*\n` +
    String.raw`foo\s+2\s+2\s+2\s+2\s+2\s+2\s+foo-[0-9a-f]{10}\s+foo-[0-9a-f]{10}\s+\S+\s*$`
  )

t.test(
  'the Replace walkthrough: partition 1 replaces the first target new Pod first, partition 2 the other, and the job ' +
    'succeeds',
  async (t) => {
    const ns = await namespace('opj-replace')
    const [first, second] = (await collaSetFoo(ns)) as [string, string]
    const watch = sampleReadyPods(getJson, ns, 'app=foo')
    t.teardown(async () => {
      await watch.stop()
    })
    await watch.started

    const job = exampleDoc('operationjob-replace.yaml', 'OperationJob')
    job.spec.targets = [{ name: first }, { name: second }]
    t.match(job.spec, { action: 'Replace', partition: 1 }, "the example is the walkthrough's job")
    await apply(cluster.kubectl, stringify(job), ns)

    const one = await waitForJob(
      ns,
      'opj-replace',
      `${first} replaced`,
      (s) => s.targetDetails?.[0]?.progress === 'Succeeded'
    )
    t.match(
      one.status,
      { progress: 'Processing', totalPodCount: 2, succeededPodCount: 1, failedPodCount: 0 },
      'Processing, 1 of 2 succeeded'
    )
    t.match(
      one.status.targetDetails,
      [
        { name: first, progress: 'Succeeded' },
        { name: second, progress: 'Pending' },
      ],
      'the first target succeeded, the second waits'
    )
    t.notOk(one.status.targetDetails[1].startTime, 'the second target never started')
    const newFirst = one.status.targetDetails[0].extraInfo?.NewPod as string | undefined
    await checkReplaced(t, ns, first, newFirst)
    t.match(
      await kubectlOk(t, ['get', 'opj', '-n', ns]),
      new RegExp(
        String.raw`^NAME\s+ACTION\s+PROGRESS\s+TOTAL\s+SUCCEEDED\s+FAILED\s+AGE\s*\n` +
        String.raw`opj-replace\s+Replace\s+Processing\s+2\s+1\s+0\s+\S+`
      ),
      'kubectl get opj shows ACTION, PROGRESS and the counts'
    )

    // The partition holds: a few syncs later the second target is still untouched.
    await new Promise((resolve) => setTimeout(resolve, 5_000))
    const held = await opj(ns, 'opj-replace')
    t.match(held.status, { progress: 'Processing', succeededPodCount: 1 }, 'still Processing with partition 1')
    t.equal(held.status.targetDetails[1].progress, 'Pending', `${second} still Pending`)
    const untouched = await pod(ns, second)
    t.ok(
      untouched !== undefined && untouched.metadata.labels?.['jobhooks.io/to-replace'] === undefined,
      `${second} is not asked to be replaced`
    )
    t.equal((await pods(ns, 'app=foo')).length, 2, 'no third Pod while the partition holds')

    await kubectlOk(t, ['patch', 'opj', 'opj-replace', '-n', ns, '--type', 'merge', '-p', '{"spec":{"partition":2}}'])
    const done = await waitForJob(
      ns,
      'opj-replace',
      'Succeeded',
      (s) => s.progress === 'Succeeded' || s.progress === 'Failed'
    )
    showStatus(t, done, 'Succeeded')
    t.match(
      done.status,
      { progress: 'Succeeded', totalPodCount: 2, succeededPodCount: 2, failedPodCount: 0 },
      'Succeeded, 2 of 2'
    )
    t.equal(done.status.observedGeneration, done.metadata.generation, 'the status describes the patched spec')
    t.ok(done.status.endTime, 'the job has an endTime')
    t.match(
      done.status.targetDetails,
      [
        { name: first, progress: 'Succeeded', extraInfo: { NewPod: newFirst } },
        { name: second, progress: 'Succeeded' },
      ],
      'both targets succeeded; the first kept its NewPod'
    )
    const newSecond = done.status.targetDetails[1].extraInfo?.NewPod as string | undefined
    await checkReplaced(t, ns, second, newSecond)
    t.not(jobCondition(done, 'EffectsApplied')?.status, 'False', 'no effect failed')
    t.match(
      await kubectlOk(t, ['get', 'opj', '-n', ns]),
      new RegExp(
        String.raw`^NAME\s+ACTION\s+PROGRESS\s+TOTAL\s+SUCCEEDED\s+FAILED\s+AGE\s*\n` +
        String.raw`opj-replace\s+Replace\s+Succeeded\s+2\s+2\s+0\s+\S+`
      ),
      'kubectl get opj shows PROGRESS Succeeded, 2 of 2'
    )

    await waitFor(
      'foo to settle on its two new Pods',
      async () => {
        const list = await pods(ns, 'app=foo')
        return list.length === 2 && list.every((p) => isLive(p) && isPodReady(p)) ? list : undefined
      },
      60_000,
      500
    )
    t.same(
      (await pods(ns, 'app=foo')).map((p) => p.metadata.name).sort(),
      [newFirst, newSecond].sort(),
      'foo runs the two replacements'
    )
    const cls = await waitFor(
      'the CollaSet status to count two available Pods',
      async () => {
        const table = await cluster.kubectl(['get', 'cls', 'foo', '-n', ns])
        return CLS_TABLE.test(table.stdout) ? table.stdout : undefined
      },
      30_000,
      500
    )
    t.match(cls, CLS_TABLE, 'kubectl get cls foo shows 2 desired, current and available')

    const seen = await watch.stop()
    t.ok(
      seen.fewest >= 2,
      `never fewer than 2 Ready Pods of foo meanwhile (fewest seen: ${seen.fewest} in ${seen.samples} samples)`
    )
    t.comment(`Ready Pods as sampled:\n${seen.log.join('\n')}`)
  }
)

/** A Deployment of `replicas` Pods without a readiness gate, and a PodDisruptionBudget on them. */
function deploymentWithBudget (replicas: number, minAvailable: number): string {
  return [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        replicas,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ containerPort: 80 }] }] },
        },
      },
    },
    {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'web' },
      spec: { minAvailable, selector: { matchLabels: { app: 'web' } } },
    },
  ]
    .map((d) => stringify(d))
    .join('---\n')
}

t.test(
  'Recreate through the eviction API: a PodDisruptionBudget refusal makes the job wait; once the budget allows, the ' +
    'Deployment has the Pod back',
  async (t) => {
    const ns = await namespace('opj-recreate')
    await apply(cluster.kubectl, deploymentWithBudget(2, 2), ns)
    const before = await waitFor(
      'two Ready Pods of the Deployment',
      async () => {
        const list = (await pods(ns, 'app=web')).filter(isLive)
        return list.length === 2 && list.every(isPodReady) ? list : undefined
      },
      90_000,
      500
    )
    await waitFor(
      'the disruption controller to count the budget',
      async () => {
        const pdb = await getJson(['get', 'pdb', 'web', '-n', ns])
        return pdb.status?.observedGeneration === pdb.metadata.generation &&
          pdb.status?.currentHealthy === 2 &&
          pdb.status?.disruptionsAllowed === 0
          ? pdb
          : undefined
      },
      60_000,
      500
    )
    const names = before.map((p) => String(p.metadata.name)).sort()
    const target = names[0] as string
    const other = names[1] as string
    const targetUid = before.find((p) => p.metadata.name === target).metadata.uid
    t.notOk(before[0].spec.readinessGates, "the Deployment's Pods have no readiness gate")

    await apply(
      cluster.kubectl,
      stringify({
        apiVersion: 'jobhooks.io/v1alpha1',
        kind: 'OperationJob',
        metadata: { name: 'opj-recreate' },
        spec: { action: 'Recreate', targets: [{ name: target }] },
      }),
      ns
    )

    const refused = await waitForJob(ns, 'opj-recreate', 'the eviction refused', (s) =>
      (s.conditions ?? []).some((c: any) => c.type === 'EffectsApplied' && c.status === 'False')
    )
    const effects = jobCondition(refused, 'EffectsApplied')
    t.match(effects.message, new RegExp(`evict Pod ${ns}/${target}`), 'the failed effect is the eviction of the target')
    t.match(
      effects.message,
      /disruption budget/,
      `the API server refused it for the disruption budget: ${String(effects.message)}`
    )
    t.match(
      refused.status,
      { progress: 'Processing', targetDetails: [{ name: target, progress: 'Processing' }] },
      'the job and its target wait'
    )

    // A refusal is a wait, not a failure: some retries later nothing has changed.
    await new Promise((resolve) => setTimeout(resolve, 8_000))
    const waiting = await opj(ns, 'opj-recreate')
    t.match(
      waiting.status,
      { progress: 'Processing', failedPodCount: 0, targetDetails: [{ name: target, progress: 'Processing' }] },
      'still Processing after retries'
    )
    t.match(
      jobCondition(waiting, 'EffectsApplied'),
      { status: 'False', message: /disruption budget/ },
      'still refused by the budget'
    )
    const held = await pod(ns, target)
    t.ok(
      held !== undefined && isLive(held) && held.metadata.uid === targetUid,
      `${target} is still there, not being deleted`
    )
    t.equal(
      held?.metadata.labels?.[LOCK],
      'opj-recreate',
      `${target} carries the PodOpsLifecycle lock ${LOCK}=opj-recreate`
    )
    t.same(
      (await pods(ns, 'app=web')).map((p) => p.metadata.name).sort(),
      names,
      'the Deployment still has its two Pods'
    )
    // Where a kuperator user looks: kubectl describe opj shows the refusal, counted on one Warning.
    const refusals = (
      await waitForDescribedEvents(cluster, 'opj', ns, 'opj-recreate', 'the refusal counted more than once', (events) =>
        events.some((e) => e.reason === 'EvictionRefused' && e.count > 1)
      )
    ).filter((e) => e.reason === 'EvictionRefused')
    t.equal(
      refusals.length,
      1,
      `one EvictionRefused Event for every retry, not one each: ${refusals.map((e) => e.age).join('; ')}`
    )
    t.match(
      refusals[0],
      {
        type: 'Warning',
        from: 'jobhooks',
        message: new RegExp(
          `^Cannot evict Pod ${target}: The disruption budget web needs 2 healthy pods and has 2 currently$`
        ),
      },
      "a Warning naming the Pod and, in the API server's words, the budget"
    )
    const refusalEvents = (await getJson(['get', 'events', '-n', ns, '--field-selector', 'reason=EvictionRefused']))
      .items
    t.equal(refusalEvents.length, 1, 'one Event object in the namespace')
    t.match(refusalEvents[0], {
      involvedObject: {
        apiVersion: 'jobhooks.io/v1alpha1',
        kind: 'OperationJob',
        name: 'opj-recreate',
        uid: refused.metadata.uid,
      },
      related: { kind: 'Pod', name: target, uid: targetUid },
      reportingComponent: 'jobhooks',
    })
    t.ok(refusalEvents[0].count > 1, `its count is raised on each retry (${String(refusalEvents[0].count)})`)

    await kubectlOk(t, ['patch', 'pdb', 'web', '-n', ns, '--type', 'merge', '-p', '{"spec":{"minAvailable":1}}'])
    await waitFor(
      `${target} to be evicted`,
      async () => {
        const current = await pod(ns, target)
        return current === undefined || current.metadata.uid !== targetUid ? true : undefined
      },
      60_000,
      500
    )
    t.pass(`${target} went once the budget allowed one disruption`)

    const done = await waitForJob(
      ns,
      'opj-recreate',
      'finished',
      (s) => s.progress === 'Succeeded' || s.progress === 'Failed'
    )
    showStatus(t, done, 'Succeeded')
    t.match(
      done.status,
      { progress: 'Succeeded', totalPodCount: 1, succeededPodCount: 1, failedPodCount: 0 },
      'the job Succeeded'
    )
    t.ok(done.status.endTime, 'the job has an endTime')
    const detail = done.status.targetDetails[0]
    t.match(detail, { name: target, progress: 'Succeeded' }, 'its target Succeeded')
    const list = (await pods(ns, 'app=web')).filter(isLive)
    t.equal(list.length, 2, 'the Deployment has two Pods again')
    t.ok(list.every(isPodReady), 'both Ready')
    t.notOk(
      list.some((p) => p.metadata.uid === targetUid),
      `${target} is not among them`
    )
    t.ok(
      list.some((p) => p.metadata.name === other),
      `${other} was left alone`
    )
    const back = list.find((p) => p.metadata.name !== other)
    t.ok(back !== undefined, `the Deployment brought a new Pod up: ${String(back?.metadata.name)}`)
    if (detail.extraInfo?.NewPod !== undefined) {
      t.equal(detail.extraInfo.NewPod, back?.metadata.name, 'extraInfo.NewPod names it')
    }
    t.match(
      back?.metadata.ownerReferences,
      [{ kind: 'ReplicaSet', controller: true }],
      "it belongs to the Deployment's ReplicaSet"
    )
    t.equal(back?.metadata.labels?.[LOCK], undefined, 'the new Pod carries no lock')
    const remaining = await pod(ns, other)
    t.equal(remaining?.metadata.labels?.[LOCK], undefined, `${other} carries no lock`)
    t.match(
      await kubectlOk(t, ['get', 'opj', '-n', ns]),
      new RegExp(
        String.raw`^NAME\s+ACTION\s+PROGRESS\s+TOTAL\s+SUCCEEDED\s+FAILED\s+AGE\s*\n` +
        String.raw`opj-recreate\s+Recreate\s+Succeeded\s+\d+\s+\d+\s+0\s+\S+`
      ),
      'kubectl get opj shows ACTION Recreate, PROGRESS Succeeded'
    )

    const events = await waitForDescribedEvents(cluster, 'opj', ns, 'opj-recreate', 'the eviction', (list) =>
      list.some((e) => e.reason === 'EvictedPod')
    )
    t.same(
      events
        .filter((e) => e.reason !== 'EvictionRefused')
        .map((e) => `${e.type} ${e.reason} ${e.from} ${e.message}`)
        .sort(),
      [
        `Normal EvictedPod jobhooks Evicted Pod ${target}`,
        `Normal LabelledPod jobhooks Labelled Pod ${target}: ${LOCK}=opj-recreate`,
      ],
      'kubectl describe opj: the lock, then the eviction once the budget allowed it'
    )
    const { text } = await describedEvents(cluster, 'opj', ns, 'opj-recreate')
    t.comment(`kubectl describe opj opj-recreate:\n${text.slice(text.indexOf('Events:'))}`)
  }
)

t.test(
  'Recreate of a CollaSet Pod inside a PodOpsLifecycle: out of traffic (gate False, not Ready) before the eviction',
  async (t) => {
    const ns = await namespace('opj-lifecycle')
    const [target, other] = (await collaSetFoo(ns)) as [string, string]
    const targetUid = (await pod(ns, target)).metadata.uid

    // Everything the target Pod goes through until it is gone, and every Pod of foo seen meanwhile,
    // from a watch, not a poll: the service evicts on the first sync that shows it the Pod not
    // Ready, and Metacontroller syncs the job as soon as the Pod changes, so the Pod may be not
    // Ready for less than a poll's round trip (a 150 ms poll once saw it go from Ready to gone).
    const watch = watchObjects(
      cluster,
      ['pods', '-n', ns, '-l', 'app=foo'],
      [
        '.metadata.uid',
        '.metadata.name',
        `.metadata.labels.${LOCK.replaceAll('.', '\\.')}`,
        `.status.conditions[?(@.type=="${GATE}")].status`,
        '.status.conditions[?(@.type=="Ready")].status',
        '.metadata.deletionTimestamp',
        '.metadata.creationTimestamp',
      ]
    )
    t.teardown(async () => {
      await watch.stop()
    })
    await watch.started

    await apply(
      cluster.kubectl,
      stringify({
        apiVersion: 'jobhooks.io/v1alpha1',
        kind: 'OperationJob',
        metadata: { name: 'opj-lifecycle' },
        spec: { action: 'Recreate', targets: [{ name: target }] },
      }),
      ns
    )
    // Every Pod of foo the watch saw, and what the target went through.
    const states: string[] = []
    const uids = new Map<string, string>()
    const readWatch = async (): Promise<void> => {
      for (const {
        type,
        fields: [uid = '', name = '', lock, gate, ready, deleting, created],
      } of await watch.stop()) {
        if (!uids.has(uid)) uids.set(uid, `${name} made ${created ?? '?'}`)
        if (uid !== targetUid) continue
        const state =
          type === 'DELETED'
            ? 'gone'
            : `lock=${lock || '-'} gate=${gate || '-'} ready=${ready || '-'}${deleting ? ' deleting' : ''}`
        if (states[states.length - 1] !== state) states.push(state)
      }
      t.comment(
        `${target} went through (every change the API server made, from a watch):\n${states.join('\n')}\nfoo's Pods: ` +
          `${[...uids.values()].join(', ')}`
      )
    }
    const done = await waitForJob(
      ns,
      'opj-lifecycle',
      'finished',
      (s) => s.progress === 'Succeeded' || s.progress === 'Failed'
    ).catch(async (error: unknown) => {
      await readWatch()
      throw error
    })
    showStatus(t, done, 'Succeeded')
    // A little longer: a second eviction after the job finished would show too.
    await new Promise((resolve) => setTimeout(resolve, 3_000))
    await readWatch()
    t.match(done.status, { progress: 'Succeeded', succeededPodCount: 1, failedPodCount: 0 }, 'the job Succeeded')

    const outOfTraffic = states.findIndex((s) => s.startsWith('lock=opj-lifecycle gate=False ready=False'))
    t.ok(outOfTraffic >= 0, `${target} was locked, its gate False and it not Ready`)
    t.same(
      states.slice(0, outOfTraffic).filter((s) => s.includes('ready=False')),
      [],
      'it was Ready until the lifecycle took it out of traffic'
    )
    t.ok(
      states.slice(outOfTraffic).every((s) => !s.includes('ready=True')),
      'it never became Ready again before it went'
    )
    t.equal(states[states.length - 1], 'gone', `${target} was evicted`)

    const list = await waitFor(
      'foo back at two Ready Pods',
      async () => {
        const current = await pods(ns, 'app=foo')
        return current.length === 2 && current.every((p) => isLive(p) && isPodReady(p)) ? current : undefined
      },
      60_000,
      500
    )
    t.ok(
      list.some((p) => p.metadata.name === other),
      `${other} was left alone`
    )
    const back = list.find((p) => p.metadata.name !== other)
    // A new Pod (a new UID), maybe under the old name: CollaSet names are a function of observed state.
    t.ok(
      back !== undefined && back.metadata.uid !== targetUid,
      `the CollaSet brought a new Pod up: ${String(back?.metadata.name)}`
    )
    t.equal(
      uids.size,
      3,
      'foo had three Pods in all: the two first ones and one new one, nothing else evicted ' +
        `(${[...uids].map(([uid, name]) => `${name}/${uid.slice(0, 8)}`).join(', ')})`
    )
    t.equal(podCondition(back, GATE)?.status, 'True', 'with its gate True')
    t.equal(back?.metadata.labels?.[LOCK], undefined, 'and no lock')

    const events = await waitForDescribedEvents(cluster, 'opj', ns, 'opj-lifecycle', 'the eviction', (list) =>
      list.some((e) => e.reason === 'EvictedPod')
    )
    t.same(
      events.map((e) => `${e.type} ${e.reason} ${e.message}`).sort(),
      [
        `Normal EvictedPod Evicted Pod ${target}`,
        `Normal LabelledPod Labelled Pod ${target}: ${LOCK}=opj-lifecycle`,
        `Normal SetPodCondition Set condition ${GATE}=False on Pod ${target}: OperationJob opj-lifecycle takes the ` +
          'Pod out of traffic',
      ],
      'kubectl describe opj: the lock, traffic off, the eviction'
    )
  }
)

t.test(
  'the Label example as a user applies it: web-0 labelled, then web-1 once the partition grows; the CRD refuses what ' +
    'Label refuses',
  async (t) => {
    const ns = await namespace('opj-label')
    const file = join(ROOT, 'manifests', 'examples', 'operationjob-label.yaml')
    await kubectlOk(t, ['apply', '-n', ns, '-f', file])
    const one = await waitForJob(
      ns,
      'web-canary',
      'web-0 labelled',
      (s) => s.targetDetails?.[0]?.progress === 'Succeeded'
    )
    t.match(one.status, { progress: 'Processing', totalPodCount: 2, succeededPodCount: 1 }, 'Processing, 1 of 2')
    t.equal((await pod(ns, 'web-0'))?.metadata.labels?.track, 'canary', 'web-0 carries track=canary')
    t.equal((await pod(ns, 'web-1'))?.metadata.labels?.track, undefined, 'web-1 waits behind the partition')

    await kubectlOk(t, ['patch', 'opj', 'web-canary', '-n', ns, '--type', 'merge', '-p', '{"spec":{"partition":2}}'])
    const done = await waitForJob(
      ns,
      'web-canary',
      'Succeeded',
      (s) => s.progress === 'Succeeded' || s.progress === 'Failed'
    )
    showStatus(t, done, 'Succeeded')
    t.match(done.status, { progress: 'Succeeded', succeededPodCount: 2, failedPodCount: 0 })
    t.same(
      (await pods(ns, 'track=canary')).map((p) => p.metadata.name).sort(),
      ['web-0', 'web-1'],
      'kubectl get pods -l track=canary: the two targets'
    )
    t.not(jobCondition(done, 'EffectsApplied')?.status, 'False', 'no effect failed')
    const events = await waitForDescribedEvents(
      cluster,
      'opj',
      ns,
      'web-canary',
      'both Pods labelled',
      (list) => list.filter((e) => e.reason === 'LabelledPod').length === 2
    )
    t.same(
      events.map((e) => `${e.type} ${e.reason} ${e.from} ${e.message}`).sort(),
      ['web-0', 'web-1'].map((p) => `Normal LabelledPod jobhooks Labelled Pod ${p}: track=canary`),
      'kubectl describe opj: each Pod labelled'
    )

    const refused = async (what: string, edit: (job: any) => void, message: RegExp): Promise<void> => {
      const job = exampleDoc('operationjob-label.yaml', 'OperationJob')
      job.metadata.name = 'refused'
      edit(job)
      const result = await cluster.kubectl(['apply', '-n', ns, '-f', '-'], stringify(job))
      t.not(result.code, 0, `kubectl apply refuses ${what}`)
      t.match(result.stderr, message, what)
    }
    await refused(
      'a label under jobhooks.io/',
      (job) => {
        job.spec.label.labels['jobhooks.io/to-replace'] = 'true'
      },
      /belong to the jobhooks service/
    )
    await refused(
      'Label without spec.label',
      (job) => {
        delete job.spec.label
      },
      /action Label needs spec.label/
    )
    await refused(
      'an action nobody registered',
      (job) => {
        job.spec.action = 'Relabel'
      },
      /Unsupported value: "Relabel"/
    )
  }
)
