// EphemeralJob against the real thing: the API server with our CRD and its CEL rules,
// Metacontroller calling our service, and the service's executor patching the
// pods/ephemeralcontainers subresource. kwok runs the Pods but not ephemeral containers, so this
// test writes their statuses in the kubelet's place and checks that the job's status follows, and
// that `kubectl describe` of the job shows the Events the service recorded on it. Everything
// asserted is read back from the API server.
import t from 'tap'
import type { Condition } from '../../src/k8s/types.js'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseAllDocuments, stringify } from 'yaml'
import { apply, ROOT, waitFor } from './cluster.js'
import { containerState, setEphemeralContainerState, startScenarios } from './scenario.js'
import { waitForDescribedEvents } from './describe.js'

const { cluster, namespace, getJson } = await startScenarios(t)

const JOB = 'hello-world-ephemeral-job'
const PODS = ['helloworld-a', 'helloworld-b', 'helloworld-no-work-c', 'helloworld-no-work-d']

/**
 * The first story's EphemeralJob from manifests/examples/ephemeraljob-batch.yaml, with `mutate` applied to its spec.
 */
function storyJob (mutate: (spec: any) => void = () => {}): any {
  const doc = parseAllDocuments(readFileSync(join(ROOT, 'manifests', 'examples', 'ephemeraljob-batch.yaml'), 'utf8'))
    .map((d) => d.toJS())
    .find((d) => d?.kind === 'EphemeralJob')
  mutate(doc.spec)
  return doc
}

/** Standalone Pods on the tier's node (kwok makes them Running), created one second apart. */
async function createPods (ns: string, names: string[]): Promise<void> {
  for (const name of names) {
    await apply(
      cluster.kubectl,
      stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, labels: { app: 'helloworld' } },
        spec: {
          ...(cluster.nodeName !== undefined ? { nodeName: cluster.nodeName } : {}),
          containers: [{ name: 'helloworld', image: 'busybox:1.36', command: ['sleep', '3600'] }],
        },
      }),
      ns
    )
    await new Promise((resolve) => setTimeout(resolve, 1_100))
  }
  await waitFor(
    `Pods of ${ns} to run`,
    async () => {
      const list = await getJson(['get', 'pods', '-n', ns])
      return list.items.length === names.length && list.items.every((p: any) => p.status?.phase === 'Running')
        ? true
        : undefined
    },
    60_000,
    500
  )
}

async function ejob (ns: string, name = JOB): Promise<any> {
  return await getJson(['get', 'ephemeraljob', name, '-n', ns])
}

async function waitForStatus (
  ns: string,
  what: string,
  check: (status: any) => boolean,
  timeoutMs = 60_000
): Promise<any> {
  return await waitFor(
    `EphemeralJob ${ns}/${JOB}: ${what}`,
    async () => {
      const job = await ejob(ns)
      return job.status !== undefined && check(job.status) ? job : undefined
    },
    timeoutMs,
    500
  )
}

/** Pods that hold an ephemeral container of this job, by name. */
async function injectedPods (ns: string): Promise<Map<string, any>> {
  const list = await getJson(['get', 'pods', '-n', ns])
  return new Map(
    list.items
      .filter((p: any) =>
        (p.spec.ephemeralContainers ?? []).some((c: any) =>
          (c.env ?? []).some((e: any) => e.name === 'ephemeraljob' && e.value === JOB)
        )
      )
      .map((p: any) => [p.metadata.name, p])
  )
}

t.test(
  'story 1: containers really land in the Pods one at a time, and the status follows their exits to Failed 4/2/2',
  async (t) => {
    const ns = await namespace('ejob-story')
    await createPods(ns, PODS)
    await apply(cluster.kubectl, stringify(storyJob()), ns)

    const seen: string[] = []
    for (const [i, expected] of PODS.entries()) {
      const pods = await waitFor(
        `a container in ${expected}`,
        async () => {
          const found = await injectedPods(ns)
          return found.size > seen.length ? found : undefined
        },
        60_000,
        500
      )
      const fresh = [...pods.keys()].filter((n) => !seen.includes(n))
      t.same(fresh, [expected], `the next Pod, oldest first, and only one (parallelism 1): ${expected}`)
      const container = pods.get(expected).spec.ephemeralContainers.find((c: any) => c.name === 'helloworld-ec')
      t.match(
        container,
        {
          image: 'busybox:1.36',
          targetContainerName: 'helloworld',
          command: ['pidof', 'helloworld'],
          imagePullPolicy: 'IfNotPresent',
          terminationMessagePolicy: 'File',
        },
        'the API server accepted the subresource patch'
      )
      const uid = (await ejob(ns)).metadata.uid
      t.same(
        container.env,
        [
          { name: 'ephemeraljob', value: JOB },
          { name: 'EPHEMERALJOB_UID', value: uid },
        ],
        "it carries the job's name and uid"
      )
      seen.push(expected)

      await waitForStatus(ns, `${expected} waiting`, (s) => s.waiting === 1 && s.running === 0)
      await setEphemeralContainerState(cluster, ns, expected, 'helloworld-ec', containerState.running())
      const running = await waitForStatus(ns, `${expected} running`, (s) => s.running === 1)
      t.match(running.status, {
        phase: 'Running',
        match: 4,
        running: 1,
        waiting: 0,
        succeeded: i < 2 ? i : 2,
        failed: i < 2 ? 0 : i - 2,
      })
      t.equal((await injectedPods(ns)).size, seen.length, 'no other Pod while one runs')

      await setEphemeralContainerState(
        cluster,
        ns,
        expected,
        'helloworld-ec',
        containerState.terminated(expected.includes('no-work') ? 1 : 0)
      )
    }

    const done = await waitForStatus(ns, 'finished', (s) => typeof s.completionTime === 'string')
    t.match(done.status, { phase: 'Failed', match: 4, succeeded: 2, failed: 2, running: 0, waiting: 0 })
    const conditions = new Map<string, Condition>(done.status.conditions.map((c: Condition) => [c.type, c]))
    t.match(conditions.get('Valid'), { status: 'True' })
    t.match(conditions.get('Failed'), {
      status: 'True',
      reason: 'PodsFailed',
      message: /helloworld-no-work-c: helloworld-ec exited with code 1/,
    })
    // That every effect was applied shows in the Pods themselves: each holds exactly one of our
    // containers. (EffectsApplied describes the last sync that had effects; a later sync handed a
    // parent older than that status write carries it no further, so it is not asserted present.)
    const final = await injectedPods(ns)
    t.same([...final.keys()].sort(), [...PODS].sort(), 'the executor applied every injection')
    for (const [name, pod] of final) {
      t.equal(
        pod.spec.ephemeralContainers.filter((c: any) => c.name === 'helloworld-ec').length,
        1,
        `${name} got its container exactly once`
      )
    }
    t.not(conditions.get('EffectsApplied')?.status, 'False', 'no effect failed')
    t.equal(done.status.observedGeneration, done.metadata.generation, 'Metacontroller wrote the status')
    const table = await cluster.kubectl(['get', 'ejob', '-n', ns])
    t.match(
      table.stdout,
      new RegExp(
        String.raw`^NAME\s+MATCH\s+SUCCEED\s+FAILED\s+RUNNING\s+WAITING\s+AGE\s*\n` +
        String.raw`hello-world-ephemeral-job\s+4\s+2\s+2\s+0\s+0\s+\S+`
      ),
      "kubectl get ejob shows the proposal's columns"
    )
    const wide = await cluster.kubectl(['get', 'ejob', '-n', ns, '-o', 'wide'])
    // kubectl puts the wide-only columns last.
    t.match(
      wide.stdout,
      new RegExp(
        String.raw`^NAME\s+MATCH\s+SUCCEED\s+FAILED\s+RUNNING\s+WAITING\s+AGE\s+STATUS\s*\n` +
        String.raw`hello-world-ephemeral-job\s+4\s+2\s+2\s+0\s+0\s+\S+\s+Failed\s*\n`
      ),
      'and STATUS with -o wide'
    )

    // Where a Kruise user looks for what the job did to the Pods: kubectl describe ejob.
    const events = await waitForDescribedEvents(
      cluster,
      'ejob',
      ns,
      JOB,
      'an InjectedContainers Event per Pod',
      (list) => list.filter((e) => e.reason === 'InjectedContainers').length === PODS.length
    )
    t.same(
      events
        .filter((e) => e.reason === 'InjectedContainers')
        .map((e) => `${e.type} ${e.from} ${e.message}`)
        .sort(),
      PODS.map((p) => `Normal jobhooks Injected ephemeral container helloworld-ec into Pod ${p}`).sort(),
      'kubectl describe ejob: each injection, naming its Pod, from jobhooks'
    )
    t.same(
      events.filter((e) => e.reason !== 'InjectedContainers'),
      [],
      'and nothing else'
    )
  }
)

t.test('ttlSecondsAfterCreated: the service deletes the EphemeralJob itself', async (t) => {
  const ns = await namespace('ejob-ttl')
  await apply(
    cluster.kubectl,
    stringify(
      storyJob((spec) => {
        spec.ttlSecondsAfterCreated = 5
      })
    ),
    ns
  )
  const first = await waitForStatus(ns, 'a status', () => true)
  t.equal(first.status.phase, 'Waiting', 'no Pod matches: waiting')
  await waitFor(
    'the EphemeralJob to be deleted',
    async () => {
      const result = await cluster.kubectl(['get', 'ephemeraljob', JOB, '-n', ns, '-o', 'name'])
      return result.code !== 0 && /NotFound/.test(result.stderr) ? true : undefined
    },
    60_000,
    500
  )
  t.pass('deleted')
  // The job is gone, so kubectl describe has nothing to show; its Event outlives it.
  const events = await waitFor(
    'the TTLExpired Event',
    async () => {
      const list = await getJson([
        'get',
        'events',
        '-n',
        ns,
        '--field-selector',
        `involvedObject.uid=${String(first.metadata.uid)},reason=TTLExpired`,
      ])
      return list.items.length > 0 ? list.items : undefined
    },
    30_000,
    500
  )
  t.match(
    events,
    [
      {
        type: 'Normal',
        message: `Deleted EphemeralJob ${JOB}: its time to live has passed`,
        source: { component: 'jobhooks' },
        involvedObject: { kind: 'EphemeralJob', name: JOB, namespace: ns },
      },
    ],
    'kubectl get events: the deletion after the TTL'
  )
})

t.test('the CRD refuses invalid EphemeralJobs and changes to what may not change', async (t) => {
  const ns = await namespace('ejob-rules')
  const cases: Array<[string, (spec: any) => void, RegExp]> = [
    [
      'a container without imagePullPolicy',
      (spec) => {
        delete spec.template.ephemeralContainers[0].imagePullPolicy
      },
      /imagePullPolicy: Required value/,
    ],
    [
      'a container without targetContainerName',
      (spec) => {
        delete spec.template.ephemeralContainers[0].targetContainerName
      },
      /targetContainerName: Required value/,
    ],
    [
      'parallelism 11',
      (spec) => {
        spec.parallelism = 11
      },
      /parallelism: Invalid value/,
    ],
    [
      'an empty selector',
      (spec) => {
        spec.selector = {}
      },
      /must not be empty/,
    ],
  ]
  for (const [what, mutate, message] of cases) {
    const result = await cluster.kubectl(['apply', '-n', ns, '-f', '-'], stringify(storyJob(mutate)))
    t.not(result.code, 0, `${what} is refused`)
    t.match(result.stderr, message, what)
  }
  await apply(cluster.kubectl, stringify(storyJob()), ns)
  const allowed = await cluster.kubectl(
    ['apply', '-n', ns, '-f', '-'],
    stringify(
      storyJob((spec) => {
        spec.parallelism = 3
        spec.replicas = 2
        spec.paused = true
      })
    )
  )
  t.equal(allowed.code, 0, `replicas, parallelism and paused may change: ${allowed.stderr}`)
  const immutable: Array<[string, (spec: any) => void, RegExp]> = [
    [
      'the selector',
      (spec) => {
        spec.selector.matchLabels.app = 'other'
      },
      /spec.selector cannot change/,
    ],
    [
      'the template',
      (spec) => {
        spec.template.ephemeralContainers[0].image = 'busybox:1.37'
      },
      /spec.template cannot change/,
    ],
    [
      'ttlSecondsAfterCreated',
      (spec) => {
        spec.ttlSecondsAfterCreated = 60
      },
      /ttlSecondsAfterCreated cannot change/,
    ],
  ]
  for (const [what, mutate, message] of immutable) {
    const result = await cluster.kubectl(
      ['apply', '-n', ns, '-f', '-'],
      stringify(
        storyJob((spec) => {
          spec.parallelism = 3
          spec.replicas = 2
          spec.paused = true
          mutate(spec)
        })
      )
    )
    t.not(result.code, 0, `a change of ${what} is refused`)
    t.match(result.stderr, message, what)
  }
})
