// The chart's signals (docs/operations.md, "Signals: kube-state-metrics, alerts, dashboard") read
// only what exists: every path of the kube-state-metrics configuration resolves on the statuses
// the hooks answer for the fixtures of its kind or that the examples end with in the simulator
// (which runs the same hooks, and runs flows to their end), and every metric the alerts and the dashboard
// query is one that configuration or the service's /metrics exports, with label values those
// name. A misspelt path or metric would otherwise show as a panel with no data, or an alert that
// never fires. (test/e2e/chart.e2e.ts renders the chart with each of them on and off;
// test/e2e/examples.e2e.ts resolves the paths on objects of a real API server.)
import t, { type Test } from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'
import { FIXTURES } from '../helpers/fixtures.js'
import { testApp } from '../helpers/app.js'
import {
  chartFile, ksmMetrics, ksmResources, schemaDeclares, unresolvedPaths, type ResourceConfig
} from '../helpers/signals.js'
import { namedValues, selectors } from '../helpers/promql.js'
import { examplePromises } from '../helpers/example-promises.js'
import { run } from '../helpers/simulate-cli.js'
import { ALL_KINDS } from '../../src/controllers/kinds.js'

const ROOT = join(import.meta.dirname, '..', '..')
const resources = ksmResources()
const values = parse(readFileSync(join(ROOT, 'charts', 'jobhooks', 'values.yaml'), 'utf8'))
const crd = (kind: string): any => parse(readFileSync(join(ROOT, 'manifests', 'crds', `${kind}.yaml`), 'utf8'))
const dir = (resource: ResourceConfig): string => resource.groupVersionKind.kind.toLowerCase()

/** The rules as the chart renders them with its default values (templates/prometheusrule.yaml). */
function renderedRules (): any[] {
  const text = chartFile('prometheus-rules.yaml').replace(/\$\{(\w+)\}/g, (_, name: string) => {
    if (!(name in values.prometheusRule)) throw new Error(`no value prometheusRule.${name} for \${${name}}`)
    return String(values.prometheusRule[name])
  })
  return parse(text).groups.flatMap((g: any) => g.rules)
}

/** The hooks' answers for every sync fixture of a kind, as the objects they would make of the parent. */
async function answeredObjects (t: Test, kind: string): Promise<any[]> {
  const app = await testApp(t)
  const files = readdirSync(join(FIXTURES, kind)).filter(f => f.startsWith('sync-') && f.endsWith('.json'))
  const objects: any[] = []
  for (const file of files) {
    const request = JSON.parse(readFileSync(join(FIXTURES, kind, file), 'utf8'))
    const response = await app.inject({ method: 'POST', url: `/hooks/${kind}/sync`, payload: request })
    t.equal(response.statusCode, 200, `${kind}/${file} is answered`)
    const { status } = response.json()
    if (status !== undefined && status !== null) objects.push({ ...request.parent, status })
  }
  return objects
}

/** The objects every example ends with in the simulator (its header's simulate line), by kind. */
async function simulatedObjects (t: Test): Promise<Map<string, unknown[]>> {
  const byKind = new Map<string, unknown[]>()
  for (const promise of examplePromises()) {
    const { code, out } = await run([...promise.simulate, '--output', 'json'])
    t.equal(code, 0, `${promise.file} simulates`)
    for (const { kind, name, namespace, spec, status } of JSON.parse(out.join('\n')).objects) {
      const object = { kind, metadata: { name, namespace }, spec, status }
      byKind.set(kind.toLowerCase(), [...byKind.get(kind.toLowerCase()) ?? [], object])
    }
  }
  return byKind
}

/** The service's metric series names, from what /metrics declares (`# TYPE`), as prom-client names them. */
async function serviceMetrics (t: Test): Promise<Set<string>> {
  const app = await testApp(t)
  const text = (await app.inject({ url: '/metrics' })).body
  const suffixes: Record<string, string[]> = {
    histogram: ['_bucket', '_sum', '_count'],
    summary: ['', '_sum', '_count']
  }
  const names = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)]
    .flatMap(([, name, type]) => (suffixes[String(type)] ?? ['']).map((suffix: string) => String(name) + suffix))
  return new Set(names)
}

/** The values of `outcome` the service counts calls by (src/protocol/hooks.ts, `Outcome`). */
function outcomes (): Set<string> {
  const source = readFileSync(join(ROOT, 'src', 'protocol', 'hooks.ts'), 'utf8')
  const union = /export type Outcome = ([^\n]+)/.exec(source)
  if (union?.[1] === undefined) throw new Error('src/protocol/hooks.ts declares no Outcome')
  return new Set([...union[1].matchAll(/'([a-z_]+)'/g)].map(m => String(m[1])))
}

t.test('the configuration covers every kind with hooks, as its CRD names it', async t => {
  t.same(resources.map(dir).sort(), ALL_KINDS.map(k => k.kind).sort())
  for (const resource of resources) {
    const definition = crd(dir(resource))
    const served = definition.spec.versions.filter((v: any) => v.served === true).map((v: any) => v.name)
    t.equal(resource.groupVersionKind.group, definition.spec.group, `${dir(resource)}: group`)
    t.equal(resource.groupVersionKind.kind, definition.spec.names.kind, `${dir(resource)}: kind`)
    t.ok(served.includes(resource.groupVersionKind.version), `${dir(resource)}: a served version`)
    t.match(resource.metricNamePrefix, new RegExp(`^jobhooks_${dir(resource)}$`), `${dir(resource)}: its prefix`)
  }
})

t.test("a phase's states are those its CRD allows, every one", async t => {
  for (const resource of resources) {
    const status = crd(dir(resource)).spec.versions[0].schema.openAPIV3Schema.properties.status.properties
    for (const metric of resource.metrics.filter(m => m.each.type === 'StateSet')) {
      const field = String(metric.each.stateSet?.path?.at(-1))
      const allowed = status[field]?.enum
      if (allowed === undefined) continue
      t.same([...metric.each.stateSet?.list ?? []].sort(), [...allowed].sort(), `${dir(resource)} ${field}`)
    }
  }
})

t.test("every path resolves on the hooks' answers for the fixtures and the simulated examples", async t => {
  const simulated = await simulatedObjects(t)
  for (const resource of resources) {
    const answered = await answeredObjects(t, dir(resource))
    t.ok(answered.length > 0, `${dir(resource)}: the fixtures are answered with statuses`)
    const objects = [...answered, ...simulated.get(dir(resource)) ?? []]
    t.same(unresolvedPaths(resource, objects), [], `${dir(resource)}: ${objects.length} objects`)
  }
})

t.test('a misspelt path, or a phase missing from a list, is reported', async t => {
  const jobflow = resources.find(r => dir(r) === 'jobflow')
  if (jobflow === undefined) throw new Error('no JobFlow resource')
  const objects = await answeredObjects(t, 'jobflow')
  const misspelt = structuredClone(jobflow)
  misspelt.metrics[0]!.each.stateSet!.path = ['status', 'phases']
  t.ok(unresolvedPaths(misspelt, objects).includes('jobhooks_jobflow_status_phase: status.phases: never resolves'))
  // A count read as 0 when absent passes where its CRD declares it (the real tier's leniency), not elsewhere.
  const queued = { ...structuredClone(jobflow), metrics: jobflow.metrics.filter(m => m.name === 'jobs_queued') }
  const absent = structuredClone(queued.metrics[0]!.each.gauge!)
  queued.metrics = [{ ...queued.metrics[0]!, each: { type: 'Gauge', gauge: absent } }]
  const withoutQueued = objects.map(o => ({ ...o, status: { ...o.status, jobsQueued: undefined } }))
  const declared = (path: Array<string | number>): boolean => schemaDeclares(crd('jobflow'), path)
  t.same(unresolvedPaths(queued, withoutQueued, declared), [], 'status.jobsQueued: declared')
  absent.path = ['status', 'jobQueued']
  t.same(unresolvedPaths(queued, objects, declared), [
    'jobhooks_jobflow_jobs_queued: status.jobQueued: never resolves'
  ])
  const short = structuredClone(jobflow)
  short.metrics[0]!.each.stateSet!.list = ['Invalid']
  t.ok(unresolvedPaths(short, objects).some(p => /status\.phase: "\w+" is not in its list/.test(p)))
})

t.test('every rule has a duration, a severity, a summary and a description; every threshold a value', async t => {
  const rules = renderedRules()
  t.ok(rules.length >= 5)
  for (const rule of rules) {
    const severity = /^(warning|critical)$/
    t.match(rule, { alert: /^Jobhooks/, expr: String, for: /^\d+[smh]$/, labels: { severity } }, rule.alert)
    t.match(rule.annotations, { summary: String, description: String }, rule.alert)
  }
  const placeholders = [...chartFile('prometheus-rules.yaml').matchAll(/\$\{(\w+)\}/g)].map(m => m[1])
  const template = readFileSync(join(ROOT, 'charts', 'jobhooks', 'templates', 'prometheusrule.yaml'), 'utf8')
  for (const name of new Set(placeholders)) t.match(template, `"${name}"`, `the template replaces \${${name}}`)
})

t.test('the alerts and the dashboard query only metrics that exist, by labels and values they have', async t => {
  const exported = ksmMetrics()
  const service = await serviceMetrics(t)
  t.ok(service.has('jobhooks_hook_duration_seconds_bucket'), "the service's metrics are read from /metrics")
  const outcome = outcomes()
  const dashboard = JSON.parse(chartFile('dashboard.json'))
  const queries = [
    ...renderedRules().map(r => ({ at: `rule ${String(r.alert)}`, expr: String(r.expr) })),
    ...dashboard.panels.flatMap((p: any) =>
      p.targets.map((q: any) => ({ at: `panel ${String(p.title)}`, expr: String(q.expr) })))
  ]
  t.ok(queries.length > 20, 'the rules and the panels are read')
  for (const { at, expr } of queries) {
    const found = selectors(expr)
    t.ok(found.length > 0, `${at}: queries a metric`)
    for (const { metric, matchers } of found) {
      const labels = exported.get(metric)
      t.ok(labels !== undefined || service.has(metric), `${at}: ${metric} is exported`)
      for (const matcher of matchers) {
        // The service's labels whose values the code fixes: outcome (the others are open).
        const fixed = matcher.label === 'outcome' ? outcome : undefined
        const known = labels !== undefined ? labels.get(matcher.label) : fixed
        if (labels !== undefined) t.ok(labels.has(matcher.label), `${at}: ${metric} has label ${matcher.label}`)
        for (const value of known === undefined ? [] : namedValues(matcher)) {
          t.ok(known?.has(value), `${at}: ${metric}{${matcher.label}} takes ${value}`)
        }
      }
    }
  }
})

t.test('the query reader finds names, leaves functions and grouping out, and reads matchers', async t => {
  t.same(selectors('histogram_quantile(0.99, sum by (le, kind) (rate(a_bucket{outcome!="shed"}[5m]))) > 8'), [
    { metric: 'a_bucket', matchers: [{ label: 'outcome', op: '!=', value: 'shed' }] }
  ])
  t.same(selectors('time() - b_time').map(s => s.metric), ['b_time'])
  t.same(selectors('sum(c) / on (x) group_left count without (y) (d{p=~"A|B"})').map(s => s.metric), ['c', 'd'])
})
