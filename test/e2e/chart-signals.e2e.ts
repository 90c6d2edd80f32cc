// The chart's signals rendered by helm, without a cluster: kube-state-metrics' configuration and
// its ClusterRole (kubeStateMetrics.enabled), the PrometheusRule (prometheusRule.enabled) and the
// Grafana dashboard's ConfigMap (grafanaDashboard.enabled) are each off by default and, on, hold
// the chart's files (charts/jobhooks/files/) as test/charts/signals.test.ts checks them, with the
// thresholds of the values put in.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'
import { ROOT } from './cluster.js'
import { NAMESPACE, helm, CHART, renderChart } from './chart.js'
import { chartFile, ksmResources } from '../helpers/signals.js'

const find = (objects: any[], kind: string, name: string): any =>
  objects.find((o) => o.kind === kind && o.metadata.name === name)
const SIGNALS = [
  ['kubeStateMetrics', 'ConfigMap', 'jobhooks-kube-state-metrics'],
  ['kubeStateMetrics', 'ClusterRole', 'jobhooks-kube-state-metrics'],
  ['prometheusRule', 'PrometheusRule', 'jobhooks'],
  ['grafanaDashboard', 'ConfigMap', 'jobhooks-grafana-dashboard'],
] as const
const defaults = await renderChart()

t.test('each signal is off by default, and each flag turns on its own objects only', async (t) => {
  for (const [, kind, name] of SIGNALS) t.equal(find(defaults, kind, name), undefined, `no ${kind} ${name} by default`)
  for (const flag of new Set(SIGNALS.map(([f]) => f))) {
    const chart = await renderChart(['--set', `${flag}.enabled=true`])
    for (const [owner, kind, name] of SIGNALS) {
      t.equal(find(chart, kind, name) !== undefined, owner === flag, `${flag}.enabled=true: ${kind} ${name}`)
    }
    t.equal(chart.length - defaults.length, SIGNALS.filter(([f]) => f === flag).length, `${flag}: nothing else`)
  }
})

t.test("kube-state-metrics' configuration, and the ClusterRole that lets it list the kinds", async (t) => {
  const chart = await renderChart([
    '--set',
    'kubeStateMetrics.enabled=true,kubeStateMetrics.namespace=monitoring,' +
      'kubeStateMetrics.serviceAccount.name=kube-state-metrics,kubeStateMetrics.serviceAccount.namespace=monitoring',
  ])
  const config = find(chart, 'ConfigMap', 'jobhooks-kube-state-metrics')
  t.equal(config.metadata.namespace, 'monitoring', "in kube-state-metrics' namespace")
  t.same(parse(config.data['config.yaml']), parse(chartFile('kube-state-metrics.yaml')), 'the configuration of files/')
  const crds = ksmResources().map(
    (r) => parse(readFileSync(join(ROOT, 'manifests', 'crds', `${r.groupVersionKind.kind.toLowerCase()}.yaml`), 'utf8'))
  )
  const role = find(chart, 'ClusterRole', 'jobhooks-kube-state-metrics')
  t.same(role.rules, [
    { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: ['list', 'watch'] },
    { apiGroups: ['jobhooks.io'], resources: crds.map((c) => c.spec.names.plural), verbs: ['list', 'watch'] },
  ], "the CRDs and each configured kind's resource, read only")
  const binding = find(chart, 'ClusterRoleBinding', 'jobhooks-kube-state-metrics')
  t.same(binding.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role.metadata.name })
  t.same(binding.subjects, [{ kind: 'ServiceAccount', name: 'kube-state-metrics', namespace: 'monitoring' }])
  const unbound = await renderChart(['--set', 'kubeStateMetrics.enabled=true'])
  t.equal(find(unbound, 'ClusterRoleBinding', 'jobhooks-kube-state-metrics'), undefined, 'no binding without a name')
})

t.test('the PrometheusRule holds the rules of files/ with the thresholds of the values', async (t) => {
  const values = { stepQueuedFor: '45m', hookErrorsFor: '2m', hookLatencySeconds: 7.5, shedRatio: 0.25 }
  const chart = await renderChart([
    '--set',
    'prometheusRule.enabled=true,prometheusRule.labels.release=prometheus,' +
      Object.entries(values).map(([k, v]) => `prometheusRule.${k}=${v}`).join(','),
  ])
  const rule = find(chart, 'PrometheusRule', 'jobhooks')
  t.equal(rule.apiVersion, 'monitoring.coreos.com/v1')
  t.equal(rule.metadata.namespace, NAMESPACE)
  t.equal(rule.metadata.labels.release, 'prometheus', 'with the labels Prometheus selects by')
  const expected = chartFile('prometheus-rules.yaml')
    .replace(/\$\{(\w+)\}/g, (_, k: keyof typeof values) => String(values[k]))
  t.same(rule.spec, parse(expected), 'the rules of files/, every threshold put in')
  const rules = rule.spec.groups.flatMap((g: any) => g.rules)
  t.match(rules.find((r: any) => r.alert === 'JobhooksJobFlowStepQueued'), { for: '45m' })
  t.match(rules.find((r: any) => r.alert === 'JobhooksHookLatencyNearTimeout'), { expr: /> 7\.5$/ })
  t.match(rules.find((r: any) => r.alert === 'JobhooksHookCallsShed'), { expr: /> 0\.25$/ })
})

t.test("the dashboard's ConfigMap holds files/dashboard.json with the sidecar's label", async (t) => {
  const chart = await renderChart(['--set', 'grafanaDashboard.enabled=true'])
  const map = find(chart, 'ConfigMap', 'jobhooks-grafana-dashboard')
  t.equal(map.metadata.labels.grafana_dashboard, '1')
  t.same(JSON.parse(map.data['jobhooks.json']), JSON.parse(chartFile('dashboard.json')))
})

t.test('helm lint --strict passes with every signal on; a misspelt value or threshold is refused', async (t) => {
  const on = 'kubeStateMetrics.enabled=true,prometheusRule.enabled=true,grafanaDashboard.enabled=true'
  const lint = await helm(['lint', '--strict', CHART, '--namespace', NAMESPACE, '--set', on])
  t.equal(lint.code, 0, lint.stdout + lint.stderr)
  const wrongs = [
    'stepQueuedfor=10m', 'stepQueuedFor=ten', 'shedRatio=2', 'shedRatio=1.5', 'hookLatencySeconds=8s',
    'hookLatencySeconds=12.5'
  ]
  for (const wrong of wrongs.map((w) => `prometheusRule.${w}`)) {
    await t.rejects(renderChart(['--set', `${on},${wrong}`]), /values don't meet the specifications|schema/, wrong)
  }
})
