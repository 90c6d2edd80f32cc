// Fan-out on the real thing: a step's output, a JSON array, becomes one Job per item, at most
// `parallelism` at once. Asserted from a watch of the Jobs (no version of a Job slips by between
// two reads), the flow's phase and its counters: the records in status.jobs may take another
// shape for finished items, the Jobs may not.
import t from 'tap'
import { stringify } from 'yaml'
import { apply } from './cluster.js'
import { jobFlowExample, startScenarios, waitForStatusOf, watchObjects, type WatchEvent } from './scenario.js'

const { cluster, namespace, getJson } = await startScenarios(t)

const ITEMS = ['eu-1', 'eu-2', 'us-1', 'us-2', 'ap-1']
const FLOW = 'jobflow-example'
const itemJob = (index: number): string => `${FLOW}-shard-item-${index}`
/** The conditions that give a Job's verdict: from the first of them on, it is no longer running. */
const VERDICTS = ['SuccessCriteriaMet', 'Complete', 'FailureTarget', 'Failed']

/** list (its output the items), shard over them two at a time, then merge. */
function fanOut (): any {
  return jobFlowExample(cluster, spec => {
    const template = spec.flows[0].jobTemplate
    const step = (name: string, command: string, extra: Record<string, unknown> = {}): any => {
      const jobTemplate = structuredClone(template)
      jobTemplate.template.spec.containers[0].command = ['sh', '-c', command]
      return { name, jobTemplate, ...extra }
    }
    spec.flows = [
      // kwok runs no command: it reads this plain echo as the message, as a container would write it.
      step('list', `echo '${JSON.stringify(ITEMS)}' > /dev/termination-log`),
      step('shard', 'sleep 3; echo "$JOBHOOKS_INDEX $JOBHOOKS_ITEM"',
        { dependencies: ['list'], forEachFrom: 'list', parallelism: 2 }),
      step('merge', 'sleep 3', { dependencies: ['shard'] })
    ]
  })
}

function hasVerdict (event: WatchEvent): boolean {
  return (event.fields[1] ?? '').split(/\s+/).some(type => VERDICTS.includes(type))
}

/** The most item Jobs that existed without a verdict at once, replaying the watch's events in order. */
function mostRunning (events: WatchEvent[]): number {
  const running = new Set<string>()
  let most = 0
  for (const event of events) {
    const name = event.fields[0] ?? ''
    if (!name.startsWith(`${FLOW}-shard-item-`)) continue
    if (event.type === 'DELETED' || hasVerdict(event)) running.delete(name)
    else running.add(name)
    most = Math.max(most, running.size)
  }
  return most
}

t.test('forEachFrom over 5 items with parallelism 2: never more than 2 running, each Job created once', async t => {
  const ns = await namespace('fanout')
  const watch = watchObjects(cluster, ['jobs', '-n', ns],
    ['.metadata.name', '.status.conditions[?(@.status=="True")].type'])
  t.teardown(async () => { await watch.stop().catch(() => {}) })
  // The watch needs something to start on: a Job of no flow, which nothing else touches.
  await apply(cluster.kubectl, stringify({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'bystander' },
    spec: {
      suspend: true,
      template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox:1.36' }] } }
    }
  }), ns)
  await watch.started
  await apply(cluster.kubectl, stringify(fanOut()), ns)
  const done = await waitForStatusOf(getJson, 'jobflow', ns, FLOW, 'Succeeded', s => s.phase === 'Succeeded', 240_000)
  t.equal(done.status.jobsSucceeded, '7/7', 'JOBS counts every item: list, 5 shards, merge')

  const events = (await watch.stop()).filter(e => e.fields[0] !== 'bystander')
  const added = events.filter(e => e.type === 'ADDED').map(e => e.fields[0] ?? '')
  const expected = [`${FLOW}-list`, ...ITEMS.map((_, i) => itemJob(i)), `${FLOW}-merge`]
  t.same([...added].sort(), [...expected].sort(), 'every Job ADDED exactly once')
  t.same(events.filter(e => e.type === 'DELETED'), [], 'none deleted')
  const most = mostRunning(events)
  t.ok(most <= 2, `at most 2 item Jobs without a verdict at once (${most})`)
  t.equal(most, 2, 'the two allowed ran together')
  const verdictAt = (name: string): number => events.findIndex(e => e.fields[0] === name && hasVerdict(e))
  const mergeAdded = events.findIndex(e => e.type === 'ADDED' && e.fields[0] === `${FLOW}-merge`)
  t.ok(ITEMS.every((_, i) => verdictAt(itemJob(i)) >= 0 && verdictAt(itemJob(i)) < mergeAdded),
    'merge is created after every shard has its verdict')

  for (const [index, item] of ITEMS.entries()) {
    const job = await getJson(['get', 'job', itemJob(index), '-n', ns])
    t.equal(job.metadata.labels['jobhooks.io/flow'], 'shard', `${itemJob(index)}: labelled with its step`)
    t.equal(job.metadata.labels['jobhooks.io/item-index'], String(index), `${itemJob(index)}: and its index`)
    const env = job.spec.template.spec.containers[0].env ?? []
    t.same(env.filter((e: any) => e.name === 'JOBHOOKS_ITEM' || e.name === 'JOBHOOKS_INDEX'),
      [{ name: 'JOBHOOKS_ITEM', value: item }, { name: 'JOBHOOKS_INDEX', value: String(index) }],
      `${itemJob(index)}: its item and index in the environment`)
  }
})
