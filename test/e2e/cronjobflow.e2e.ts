// CronJobFlow against the real thing: Metacontroller syncing it at the times its answers ask for
// (resyncAfterSeconds), the JobFlows it creates run by the JobFlow controller, and its history
// limits deleting them. A schedule of every minute, Forbid, and runs of more than a minute (five
// steps of 15 s each, one after the other): the runs start at the right minutes, never two at
// once, and the oldest successes are deleted. Beside it, the same under Replace: each minute's run
// stops the one before through the service's own write (the StopJobFlow effect, with the RBAC of
// manifests/deploy/rbac.yaml), which keeps its records. Everything is read back from the API server.
import t from 'tap'
import { stringify } from 'yaml'
import { apply, waitFor } from './cluster.js'
import { startScenarios } from './scenario.js'

const { cluster, namespace, getJson } = await startScenarios(t)

/** How long the scenario watches the schedule: four runs' worth, each over a minute. */
const WATCH_MS = 300_000
/** How late after its minute a run may be created: a sync is due at the minute, plus Metacontroller's queue. */
const LATE_MS = 75_000

function cronJobFlow (name = 'every-minute', concurrencyPolicy = 'Forbid'): any {
  const step = (name: string, after?: string): any => ({
    name,
    ...(after !== undefined ? { dependencies: [after] } : {}),
    jobTemplate: {
      backoffLimit: 0,
      template: {
        // kwok finishes such a pod after 15 s (test/e2e/kwok-stages.yaml); a real node sleeps 15 s.
        metadata: { annotations: { 'e2e.jobhooks.io/slow': 'true' } },
        spec: {
          restartPolicy: 'Never',
          ...(cluster.nodeName !== undefined ? { nodeName: cluster.nodeName } : {}),
          containers: [{ name: 'main', image: 'busybox:1.36', command: ['sh', '-c', 'sleep 15'] }]
        }
      }
    }
  })
  const names = ['a', 'b', 'c', 'd', 'e']
  return {
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'CronJobFlow',
    metadata: { name },
    spec: {
      schedule: '* * * * *',
      concurrencyPolicy,
      successfulJobFlowsHistoryLimit: 1,
      failedJobFlowsHistoryLimit: 10,
      jobFlowTemplate: { spec: { flows: names.map((name, i) => step(name, names[i - 1])) } }
    }
  }
}

// Started now, read once the Forbid scenario has watched its five minutes.
const replaceNs = await namespace('cron-replace')
await apply(cluster.kubectl, stringify(cronJobFlow('replacing', 'Replace')), replaceNs)

interface Seen { name: string, minuteMs: number, createdMs: number, completedMs?: number }

const finished = (flow: any): boolean => flow.status?.phase === 'Succeeded' || flow.status?.phase === 'Failed'

t.test('every minute, Forbid, runs of over a minute: right minutes, never two at once, history trimmed', async t => {
  const ns = await namespace('cron')
  await apply(cluster.kubectl, stringify(cronJobFlow()), ns)
  const seen = new Map<string, Seen>()
  let mostRunning = 0
  const until = Date.now() + WATCH_MS
  while (Date.now() < until) {
    const flows = (await getJson(['get', 'jobflows', '-n', ns, '-l', 'jobhooks.io/cronjobflow=every-minute'])).items
    mostRunning = Math.max(mostRunning, flows.filter((f: any) => !finished(f)).length)
    for (const flow of flows) {
      const minutes = Number(String(flow.metadata.name).replace('every-minute-', ''))
      const entry: Seen = seen.get(flow.metadata.name) ?? {
        name: flow.metadata.name, minuteMs: minutes * 60_000, createdMs: Date.parse(flow.metadata.creationTimestamp)
      }
      if (typeof flow.status?.completionTime === 'string') entry.completedMs = Date.parse(flow.status.completionTime)
      seen.set(flow.metadata.name, entry)
    }
    await new Promise(resolve => setTimeout(resolve, 2_000))
  }
  const runs = [...seen.values()].sort((a, b) => a.minuteMs - b.minuteMs)
  t.comment(runs.map(r => `${r.name}: created ${(r.createdMs - r.minuteMs) / 1000} s after its minute`).join('; '))
  t.ok(runs.length >= 3, `${runs.length} runs in ${WATCH_MS / 60_000} minutes`)
  t.equal(mostRunning, 1, 'never two runs at once (as seen every 2 s)')
  for (const [i, run] of runs.entries()) {
    t.ok(run.createdMs >= run.minuteMs - 1_000 && run.createdMs - run.minuteMs < LATE_MS,
      `${run.name} created at its minute or, held by Forbid, within ${LATE_MS / 1000} s of it`)
    const before = runs[i - 1]
    if (before !== undefined) {
      t.ok(before.completedMs !== undefined && before.completedMs <= run.createdMs + 1_000,
        `${run.name} created once ${before.name} had finished`)
      t.ok(run.minuteMs - before.minuteMs >= 60_000, 'each run for a later minute')
    }
  }
  const left = (await getJson(['get', 'jobflows', '-n', ns, '-l', 'jobhooks.io/cronjobflow=every-minute'])).items
  const succeeded = left.filter((f: any) => f.status?.phase === 'Succeeded')
  t.ok(succeeded.length <= 1, `${succeeded.length} succeeded runs kept (the limit is 1)`)
  t.ok(left.length < runs.length, `history trimmed: ${left.length} of ${runs.length} runs left`)
  const cron = await waitFor('the CronJobFlow\'s status', async () => {
    const object = await getJson(['get', 'cronjobflow', 'every-minute', '-n', ns])
    return typeof object.status?.lastScheduleTime === 'string' ? object : undefined
  }, 30_000, 1_000)
  const last = runs.at(-1)?.minuteMs ?? Infinity
  t.ok(Date.parse(cron.status.lastScheduleTime) >= last, 'lastScheduleTime: the last run\'s, or newer')
  t.ok(typeof cron.status.lastSuccessfulTime === 'string', 'a run succeeded')
  t.equal(cron.status.observedGeneration, cron.metadata.generation, 'Metacontroller wrote the status')
})

t.test('Replace: each run stops the one before by its deadline, through the service, records kept', async t => {
  const flows = (await getJson(['get', 'jobflows', '-n', replaceNs, '-l', 'jobhooks.io/cronjobflow=replacing'])).items
    .sort((a: any, b: any) => a.metadata.name.localeCompare(b.metadata.name))
  t.ok(flows.length >= 3, `${flows.length} runs in about five minutes`)
  const stopped = flows.filter((f: any) => f.metadata.annotations?.['jobhooks.io/replaced-by'] !== undefined)
  t.ok(stopped.length >= 2, `${stopped.length} runs stopped by the next one`)
  for (const flow of stopped) {
    const next = flows[flows.indexOf(flow) + 1]
    const by = flow.metadata.annotations['jobhooks.io/replaced-by']
    t.equal(by, next?.metadata.name, `${flow.metadata.name}: replaced by the next run`)
    t.ok(Number.isInteger(flow.spec.activeDeadlineSeconds), `${flow.metadata.name}: its deadline set`)
    const done = await waitFor(`${flow.metadata.name} ended`, async () => {
      const object = await getJson(['get', 'jobflow', flow.metadata.name, '-n', replaceNs])
      return finished(object) ? object : undefined
    }, 60_000, 1_000)
    t.equal(done.status.phase, 'Failed', `${flow.metadata.name}: Failed, as a replaced Job`)
    t.ok((done.status.jobs ?? []).some((r: any) => r.phase === 'Succeeded'), `${flow.metadata.name}: its records kept`)
  }
  const events = (await getJson(['get', 'events', '-n', replaceNs, '--field-selector', 'reason=StoppedRun'])).items
  t.ok(events.length >= 1, 'the Event StoppedRun on the CronJobFlow')
  t.match(events[0]?.message ?? '',
    /^Stopped JobFlow replacing-\d+: replaced by replacing-\d+ \(concurrencyPolicy Replace\)$/)
})
