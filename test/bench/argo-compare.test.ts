// The arithmetic of test/e2e/compare/argo.bench.ts, off the tier: which stage a pod is, the gaps
// and makespan from watch events, the API server's counter read by verb and resource, and the
// table's net of the tier's own requests. The figures themselves come only from a real run.
import t from 'tap'
import { countsSince, middle, podTimes, requestCounts, timeline } from '../e2e/compare/measure.js'
import { markdownTable, netRequests } from '../e2e/compare/report.js'
import { asJobFlow, asWorkflow, diamond, stageOf } from '../e2e/compare/workloads.js'

t.test('a pod\'s stage: from its Job\'s name for a JobFlow, from its node\'s name for Argo', async (t) => {
  t.equal(stageOf('chain', 'chain-step-12', ''), 'step-12')
  t.equal(stageOf('diamond', 'diamond-fan-item-41', ''), 'fan')
  t.equal(stageOf('diamond', '', 'diamond.fan(41:41)'), 'fan')
  t.equal(stageOf('diamond', '', 'diamond.merge'), 'merge')
  t.equal(stageOf('diamond', 'other-job', ''), undefined, 'a pod of neither is left out')
})

t.test('both forms of the diamond have the same stages', async (t) => {
  const flow = asJobFlow(diamond(3), 'd') as { spec: { flows: any[] } }
  const workflow = asWorkflow(diamond(3), 'd') as { spec: { templates: any[] } }
  const tasks = workflow.spec.templates[0].dag.tasks
  t.same(flow.spec.flows.map((f) => [f.name, f.dependencies, f.forEach]),
    tasks.map((task: any) => [task.name, task.dependencies, task.withItems]))
})

t.test('gaps run from the last pod of a stage Succeeded to the first pod of the next ADDED', async (t) => {
  const event = (type: string, name: string, phase: string, at: number): any =>
    ({ type, fields: [name, name, '', phase], at })
  const events = [
    event('ADDED', 'w-a', 'Pending', 1000), event('MODIFIED', 'w-a', 'Running', 1100),
    event('MODIFIED', 'w-a', 'Succeeded', 4100),
    event('ADDED', 'w-b-item-0', 'Pending', 4300), event('ADDED', 'w-b-item-1', 'Pending', 4500),
    event('MODIFIED', 'w-b-item-0', 'Running', 4400), event('MODIFIED', 'w-b-item-1', 'Running', 4600),
    event('MODIFIED', 'w-b-item-0', 'Succeeded', 7400), event('MODIFIED', 'w-b-item-1', 'Succeeded', 7600),
    event('ADDED', 'w-c', 'Pending', 8000), event('MODIFIED', 'w-c', 'Running', 8000),
    event('MODIFIED', 'w-c', 'Succeeded', 11000),
  ]
  const pods = podTimes(events, (f) => stageOf('w', f[1] ?? '', f[2] ?? ''))
  const line = timeline([...pods.values()], ['a', 'b', 'c'])
  t.same(line.gaps.map((g) => Math.round(g * 1000)), [200, 400])
  t.equal(line.makespan, 10)
  t.same([...line.podsPerStage], [['a', 1], ['b', 2], ['c', 1]])
  t.equal(middle(line.podRuns), 3)
})

t.test('apiserver_request_total by verb and resource, and its growth', async (t) => {
  const text = (watches: number): string => [
    '# TYPE apiserver_request_total counter',
    'apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="cluster",' +
      'subresource="",verb="LIST",version="v1"} 10',
    'apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",' +
      'subresource="",verb="LIST",version="v1"} 2',
    'apiserver_request_total{code="200",component="apiserver",group="",resource="pods",scope="namespace",' +
      `subresource="status",verb="PATCH",version="v1"} ${watches}`,
  ].join('\n')
  const before = requestCounts(text(1))
  t.same([...before], [['LIST pods', 12], ['PATCH pods/status', 1]])
  t.same([...countsSince(before, requestCounts(text(5)))], [['PATCH pods/status', 4]])
})

t.test('the table takes the tier\'s own requests off the net', async (t) => {
  const run = {
    system: 'Argo',
    timeline: { gaps: [1, 3], makespan: 20, podRuns: [3], podsPerStage: new Map() },
    usage: { cpu: { controller: 1.25 }, peakRssMiB: { controller: 40 } },
    requests: new Map([['LIST pods', 30], ['CREATE pods', 3], ['GET workflows', 10], ['GET /api', 7]]),
    tierOwn: new Map([['LIST pods', 28], ['GET workflows', 10]]),
  }
  t.same([...netRequests(run)], [['LIST pods', 2], ['CREATE pods', 3]])
  const [, , row] = markdownTable([run])
  t.equal(row, '| Argo | 20.0 | 2.00 | 3.00 | 3.00 | 1.3 | 40 | ? | ? | 50 / 5 | 7 | CREATE pods 3, LIST pods 2 |')
})
