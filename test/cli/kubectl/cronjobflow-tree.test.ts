// `kubectl jobhooks get cjf`: the list with the CRD's printer columns (LAST SCHEDULE as an age, as
// AGE), and one CronJobFlow with its runs — the JobFlows labelled with its name, oldest first by
// schedule time else creation, scheduled, started by hand and replaced ones — when it is active,
// suspended or invalid; and the object itself with -o json|yaml.
import t from 'tap'
import { parse } from 'yaml'
import type { KubeObject } from '../../../src/k8s/types.js'
import { cronJobFlowObjects, plugin, runNameAt } from '../../helpers/plugin.js'

const lines = (text: string): string[] => text.trimEnd().split('\n').map(l => l.trimEnd())
const squeezed = (text: string): string[] => lines(text).map(l => l.replace(/(\S) {2,}/g, '$1 | '))

/** A table's cells, cut where its header's columns start (empty cells stay empty). */
function cells (text: string, header: string[]): string[][] {
  const [head = '', ...rows] = lines(text)
  let from = 0
  const starts = header.map(name => {
    const start = head.indexOf(name, from)
    from = start + name.length
    return start
  })
  return [head, ...rows].map(row => starts.map((start, i) => row.slice(start, starts[i + 1]).trim()))
}

const RUNS_QUERY = '/apis/jobhooks.io/v1alpha1/namespaces/team-a/jobflows?labelSelector=' +
  encodeURIComponent('jobhooks.io/cronjobflow=nightly')

const at = (time: string): string => `2026-01-02T${time}Z`

function nightly (objects: KubeObject[]): KubeObject {
  return objects.find(o => o.kind === 'CronJobFlow') as KubeObject
}

t.test('get cjf <name>: the schedule, then its runs oldest first, scheduled, by hand and replaced', async t => {
  const { run, fake } = await plugin(t, cronJobFlowObjects())
  const { code, out, err } = await run(['get', 'cjf', 'nightly'])
  t.equal(err, '')
  t.equal(code, 0)
  t.same(squeezed(out), [
    'Name: | nightly',
    'Namespace: | team-a',
    'Status: | Active',
    'Schedule: | 0 * * * * (Europe/Berlin), concurrencyPolicy Replace, suspend false',
    'Last: | 2026-01-02T03:00:00Z (5m ago)',
    'Next: | 2026-01-02T04:00:00Z (in 55m)',
    '',
    'RUN | PHASE | JOBS | SCHEDULED | STARTED | FINISHED | MESSAGE',
    `${runNameAt('nightly', at('01:00:00'))} | Failed | 0/1 | ${at('01:00:00')} | 124m | 64m | ` +
      `replaced by ${runNameAt('nightly', at('02:00:00'))}`,
    `${runNameAt('nightly', at('02:00:00'))} | Succeeded | 1/1 | ${at('02:00:00')} | 64m | 45m`,
    'nightly-manual-1767321000 | Running | 0/1 | manual | 35m | -',
    `${runNameAt('nightly', at('03:00:00'))} | Running | 0/1 | ${at('03:00:00')} | 4m55s | -`
  ], 'Scheduled True and Valid True say nothing; the run without an annotation is timed by its name')
  t.same(fake.requests.map(r => `${r.method} ${r.url}`), [
    'GET /apis/jobhooks.io/v1alpha1/namespaces/team-a/cronjobflows/nightly',
    `GET ${RUNS_QUERY}`
  ], 'the CronJobFlow, then its runs by their label, in its namespace')
  t.equal(runNameAt('nightly', at('01:00:00')), 'nightly-29455260', 'runs are named by unix minutes')
})

t.test('get cjf <name>: a suspended one says why nothing starts, and has no next time', async t => {
  const objects = cronJobFlowObjects()
  const cronJobFlow = nightly(objects)
  ;(cronJobFlow.spec as Record<string, unknown>).suspend = true
  cronJobFlow.status = {
    phase: 'Suspended',
    lastScheduleTime: at('03:00:00'),
    conditions: [
      { type: 'Valid', status: 'True', reason: 'SpecValid', message: 'the spec is valid' },
      { type: 'Scheduled', status: 'False', reason: 'Suspended', message: 'spec.suspend is true' }
    ]
  }
  const { run } = await plugin(t, [cronJobFlow])
  const { code, out } = await run(['get', 'cronjobflow', 'nightly'])
  t.equal(code, 0)
  t.same(squeezed(out), [
    'Name: | nightly',
    'Namespace: | team-a',
    'Status: | Suspended',
    'Schedule: | 0 * * * * (Europe/Berlin), concurrencyPolicy Replace, suspend true',
    'Last: | 2026-01-02T03:00:00Z (5m ago)',
    'Next: | -',
    'Scheduled: | spec.suspend is true',
    '',
    'RUN | PHASE | JOBS | SCHEDULED | STARTED | FINISHED | MESSAGE'
  ], 'no runs: the table is its header')
})

/** A CronJobFlow whose schedule cannot be read: Invalid, with the Valid condition's words. */
function brokenCronJobFlow (): KubeObject {
  return {
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'CronJobFlow',
    metadata: { name: 'broken', namespace: 'team-a', uid: 'uid-broken', creationTimestamp: at('03:00:00') },
    spec: { schedule: 'every hour', jobFlowTemplate: { spec: { flows: [{ name: 'a' }] } } },
    status: {
      phase: 'Invalid',
      conditions: [
        { type: 'Valid', status: 'False', reason: 'InvalidSpec', message: 'spec.schedule: expected 5 fields, got 2' },
        { type: 'Scheduled', status: 'False', reason: 'AlreadyActive', message: 'skipped the run due at 03:00' }
      ]
    }
  }
}

t.test('get cjf <name>: an invalid one says what is wrong; zone and policy as their defaults', async t => {
  const { run } = await plugin(t, [brokenCronJobFlow()])
  const { code, out } = await run(['get', 'cjf', 'broken'])
  t.equal(code, 0)
  t.same(squeezed(out).slice(2, 9), [
    'Status: | Invalid',
    'Schedule: | every hour (UTC), concurrencyPolicy Allow, suspend false',
    'Last: | -',
    'Next: | -',
    'Valid: | spec.schedule: expected 5 fields, got 2',
    'Scheduled: | skipped the run due at 03:00',
    ''
  ])
})

t.test('get cjf: the printer columns, LAST SCHEDULE and AGE as ages, absent cells empty', async t => {
  const { run, fake } = await plugin(t, [...cronJobFlowObjects(), brokenCronJobFlow()])
  const header = ['NAME', 'SCHEDULE', 'TIMEZONE', 'SUSPEND', 'ACTIVE', 'LAST SCHEDULE', 'AGE']
  const { code, out } = await run(['get', 'cjf'])
  t.equal(code, 0)
  t.same(cells(out, header), [
    header,
    ['nightly', '0 * * * *', 'Europe/Berlin', 'false', '1', '5m', '27h'],
    ['broken', 'every hour', '', '', '', '', '5m']
  ])
  t.same(fake.requests.map(r => r.url), ['/apis/jobhooks.io/v1alpha1/namespaces/team-a/cronjobflows'],
    'one list, no runs read')
  t.same(cells((await run(['get', 'cronjobflows', '-A'])).out, ['NAMESPACE', ...header])[1],
    ['team-a', 'nightly', '0 * * * *', 'Europe/Berlin', 'false', '1', '5m', '27h'])
})

t.test('get cjf <name> -o json|yaml: the object as data, no runs read; -o html refused', async t => {
  const { run, fake } = await plugin(t, cronJobFlowObjects())
  const expected = nightly(cronJobFlowObjects())
  const yaml = await run(['get', 'cjf', 'nightly', '-o', 'yaml'])
  t.equal(yaml.code, 0, yaml.err)
  const { resourceVersion: _, ...metadata } = parse(yaml.out).metadata
  t.same({ ...parse(yaml.out), metadata }, expected)
  const json = await run(['get', 'cjf', 'nightly', '-o', 'json'])
  t.same(JSON.parse(json.out), parse(yaml.out))
  t.notOk(fake.requests.some(r => r.url.includes('/jobflows')), 'no runs read')
  t.same(await run(['get', 'cjf', 'nightly', '-o', 'html']),
    { code: 1, out: '', err: 'error: -o html draws JobFlows only\n' })
})
