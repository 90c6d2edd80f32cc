// Outcomes against the real thing: a finished Job is never run twice, however fast it goes, and
// the work resumes within a minute of the service coming back from an outage. Every Job creation
// is counted from a watch of the API server (ADDED events), never from our logs.
import t from 'tap'
import type { Job } from 'kubernetes-types/batch/v1.js'
import { stringify } from 'yaml'
import { addKwokNode, apply, waitFor } from './cluster.js'
import {
  daemonJobExample,
  jobFlowExample,
  startFlowUntilFirstJobs,
  startScenarios,
  waitForStatusOf,
  watchObjects,
} from './scenario.js'

const { cluster, namespace, getJson, track } = await startScenarios(t)
const FLOWS = ['job1', 'job2', 'job3', 'job4', 'job5']
const TTL_LABEL = 'jobhooks.io/ttl-seconds-after-finished'

/** The example with `ttlSecondsAfterFinished: 0` on every flow's Job template. */
const withTtlZero = (spec: any): void => {
  for (const flow of spec.flows) flow.jobTemplate.ttlSecondsAfterFinished = 0
}

/** Watches the Jobs of `namespaces`: how many times each `<ns>/<name>` was ADDED, and when. */
function watchJobs (selector: string): { started: Promise<void>; stop: () => Promise<Map<string, number[]>> } {
  const watch = watchObjects(
    cluster,
    ['jobs', '--all-namespaces', '-l', selector],
    ['.metadata.namespace', '.metadata.name']
  )
  return {
    started: watch.started,
    async stop () {
      const added = new Map<string, number[]>()
      for (const {
        type,
        fields: [ns = '', name = ''],
      } of await watch.stop()) {
        if (type === 'ADDED') added.set(`${ns}/${name}`, [...(added.get(`${ns}/${name}`) ?? []), 1])
      }
      return added
    },
  }
}

async function waitForJobFlow (
  ns: string,
  name: string,
  what: string,
  check: (status: any) => boolean,
  timeoutMs = 180_000
): Promise<any> {
  return await waitForStatusOf(getJson, 'jobflow', ns, name, what, check, timeoutMs)
}

t.test(
  'ttlSecondsAfterFinished: 0 on every Job of the five-job example, five JobFlows at once: every Job created exactly ' +
    'once, every flow Succeeded, every Job deleted after its outcome was recorded',
  async (t) => {
    const runs = await Promise.all(Array.from({ length: 5 }, async () => await namespace('ttl-flow')))
    // A Job of the tier's first namespace makes the watch start with an event (it needs one).
    const anchor = runs[0] as string
    await apply(
      cluster.kubectl,
      stringify({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'anchor', labels: { 'e2e-watch': 'ttl' } },
        spec: {
          suspend: true,
          template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox:1.36' }] } },
        },
      }),
      anchor
    )
    const watch = watchJobs('e2e-watch=ttl')
    t.teardown(async () => {
      await watch.stop().catch(() => {})
    })
    await watch.started
    for (const ns of runs) {
      await apply(
        cluster.kubectl,
        stringify(
          jobFlowExample(cluster, (spec) => {
            withTtlZero(spec)
            spec.globalParams.labels = { ...spec.globalParams.labels, 'e2e-watch': 'ttl' }
          })
        ),
        ns
      )
    }
    const done = await Promise.all(
      runs.map(
        async (ns) =>
          await waitForJobFlow(ns, 'jobflow-example', 'finished', (s) => ['Succeeded', 'Failed'].includes(s.phase))
      )
    )
    // Let any second run show up: the last Jobs' deletions and a few syncs more.
    await waitFor(
      'every Job deleted',
      async () =>
        (await getJson(['get', 'jobs', '--all-namespaces', '-l', 'jobhooks.io/jobflow=jobflow-example'])).items.filter(
          (j: any) => runs.includes(j.metadata.namespace)
        ).length === 0
          ? true
          : undefined,
      60_000,
      1_000
    )
    await new Promise((resolve) => setTimeout(resolve, 5_000))
    const added = await watch.stop()
    for (const [i, ns] of runs.entries()) {
      t.match(done[i].status, { phase: 'Succeeded' }, `${ns}: the JobFlow Succeeded`)
      t.same(
        done[i].status.jobs.map((j: any) => `${String(j.name)} ${String(j.phase)}`),
        FLOWS.map((f) => `${f} Succeeded`),
        `${ns}: every job Succeeded`
      )
      const counts = FLOWS.map((f) => `${f}×${added.get(`${ns}/jobflow-example-${f}`)?.length ?? 0}`)
      t.same(
        counts,
        FLOWS.map((f) => `${f}×1`),
        `${ns}: every Job created exactly once`
      )
    }

    // What resyncPeriodSeconds costs: the syncs of these five finished, idle JobFlows over two
    // periods and more (nothing else changes them now).
    const period = Number(
      (await getJson(['get', 'compositecontroller', 'jobflow-controller'])).spec.resyncPeriodSeconds
    )
    const windowSeconds = 2 * period + 5
    const before = await syncCalls('jobflow')
    await new Promise((resolve) => setTimeout(resolve, windowSeconds * 1000))
    const calls = (await syncCalls('jobflow')) - before
    const perHour = ((calls / runs.length) * 3600) / windowSeconds
    t.comment(
      `resyncPeriodSeconds ${period}: ${calls} syncs of ${runs.length} idle JobFlows in ${windowSeconds} s, ` +
        `${perHour.toFixed(0)} per JobFlow per hour (${(3600 / period).toFixed(0)} expected)`
    )
    t.ok(calls >= runs.length, 'every idle JobFlow was synced again within two periods')
  }
)

/** The service's count of sync calls of `kind` answered so far, from /metrics. */
async function syncCalls (kind: string): Promise<number> {
  const text = await (await fetch(`${String(cluster.hooksUrl)}/metrics`)).text()
  let total = 0
  for (const line of text.split('\n')) {
    if (
      line.startsWith('jobhooks_hook_calls_total{') &&
      line.includes(`kind="${kind}"`) &&
      line.includes('hook="sync"')
    ) {
      total += Number(line.split(' ').at(-1))
    }
  }
  return total
}

t.test(
  "ttlSecondsAfterFinished: 0 on a DaemonJob: every node's Job created exactly once and deleted once its outcome is " +
    'recorded; the TTL rides on a label',
  async (t) => {
    const ns = await namespace('ttl-daemon')
    const pool = { 'e2e/pool': 'ttl' }
    const nodes = ['kwok-ttl-1', 'kwok-ttl-2', 'kwok-ttl-3']
    for (const node of nodes) {
      track('node', node)
      await addKwokNode(cluster.kubectl, node, {}, pool)
    }
    const watch = watchObjects(
      cluster,
      ['jobs', '-n', ns, '-l', 'jobhooks.io/daemonjob=daemonjob-ttl'],
      ['.metadata.name', `.metadata.labels.${TTL_LABEL.replaceAll('.', '\\.')}`, '.spec.ttlSecondsAfterFinished']
    )
    const watching = watch.started.catch(() => {})
    t.teardown(async () => {
      await watch.stop().catch(() => {})
    })
    await apply(
      cluster.kubectl,
      stringify(
        daemonJobExample(
          '',
          (spec) => {
            spec.template.spec.nodeSelector = pool
            spec.ttlSecondsAfterFinished = 0
          },
          'daemonjob-ttl'
        )
      ),
      ns
    )
    await watching
    const done = await waitForStatusOf(
      getJson,
      'daemonjob',
      ns,
      'daemonjob-ttl',
      'finished',
      (s) => ['Succeeded', 'Failed'].includes(s.phase),
      180_000
    )
    await waitFor(
      'every Job deleted',
      async () => ((await getJson(['get', 'jobs', '-n', ns])).items.length === 0 ? true : undefined),
      60_000,
      1_000
    )
    await new Promise((resolve) => setTimeout(resolve, 5_000))
    const events = await watch.stop()
    t.match(
      done.status,
      { phase: 'Succeeded', desired: 3, succeeded: 3, failed: 0 },
      'the DaemonJob Succeeded on its three nodes'
    )
    t.same(done.status.succeededNodes, nodes, 'succeededNodes names the three')
    const created = events.filter((e) => e.type === 'ADDED')
    t.same(
      created.map((e) => e.fields[0]).sort(),
      nodes.map((n) => `daemonjob-ttl-${n}`),
      "every node's Job created exactly once"
    )
    t.ok(
      created.every((e) => e.fields[1] === '0' && (e.fields[2] ?? '') === ''),
      'each carried the TTL as a label, not in its spec'
    )
    t.equal(events.filter((e) => e.type === 'DELETED').length, 3, 'and each was deleted')
  }
)

const restartable = cluster.killService !== undefined && cluster.startService !== undefined
t.test(
  'the service killed while the example runs and started again 25 s later: the next Job within 60 s of the restart, ' +
    'every Job once, in dependency order',
  { skip: restartable ? false : 'the service is not run by the tier' },
  async (t) => {
    const { killService, startService } = cluster as Required<typeof cluster>
    const ns = await namespace('outage')
    const watch = await startFlowUntilFirstJobs(t, { cluster, getJson }, ns, jobFlowExample(cluster))
    await killService()
    t.pass('the service was killed (SIGKILL) while job1 and job4 ran')
    await new Promise((resolve) => setTimeout(resolve, 25_000))
    await startService()
    const back = Date.now()
    t.pass('started again 25 s later')
    await waitFor(
      'job2 to be created',
      async () =>
        (await getJson(['get', 'jobs', '-n', ns])).items.some((j: any) => j.metadata.name === 'jobflow-example-job2')
          ? true
          : undefined,
      120_000,
      250
    )
    const after = (Date.now() - back) / 1000
    t.ok(after <= 60, `job2 was created ${after.toFixed(1)} s after the service was back (at most 60 s)`)

    const done = await waitForJobFlow(ns, 'jobflow-example', 'finished', (s) =>
      ['Succeeded', 'Failed'].includes(s.phase)
    )
    t.match(done.status, { phase: 'Succeeded' }, 'the JobFlow Succeeded')
    const added = (await watch.stop()).filter((e) => e.type === 'ADDED').map((e) => e.fields[0])
    t.same(
      [...added].sort(),
      FLOWS.map((f) => `jobflow-example-${f}`),
      'every Job created exactly once'
    )
    // Dependency order, from the API server's times (whole seconds): a Job is created no sooner
    // than each of its dependencies completed.
    const items: Job[] = (await getJson(['get', 'jobs', '-n', ns])).items
    const jobs = new Map(items.map((j) => [j.metadata?.labels?.['jobhooks.io/flow'], j]))
    const seconds = (time: string): number => Date.parse(time) / 1000
    for (const flow of done.spec.flows) {
      for (const dependency of flow.dependencies ?? []) {
        const created = seconds(jobs.get(flow.name)?.metadata?.creationTimestamp ?? '')
        const completed = seconds(jobs.get(dependency)?.status?.completionTime ?? '')
        t.ok(created >= completed, `${String(flow.name)} created after ${String(dependency)} completed`)
      }
    }
  }
)
