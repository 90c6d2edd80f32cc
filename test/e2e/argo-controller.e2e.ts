// Argo Workflows' own controller in the tier (test/e2e/argo.ts): a Workflow of a two-step DAG of
// plain container templates, with Argo's default settings, runs to Succeeded on kwok. kwok finishes
// Argo's pods as it finishes a Job's (test/e2e/kwok-stages.yaml: Running at once, Succeeded 3 s
// later, the `wait` container too), and the tier's task-result writer plays the `wait` container's
// part: one WorkflowTaskResult per pod, marked complete. (With no outputs to wait for, the
// controller would finish this DAG without them as well; the writer is there for what a real
// cluster gives the controller.) Argo requeues a Workflow at most every 10 s by default
// (DEFAULT_REQUEUE_TIME), so the run takes about 20 s. Skipped, with the reason, when the tier could
// not build Argo.
import t from 'tap'
import { stringify } from 'yaml'
import { apply } from './cluster.js'
import { startScenarios, waitForStatusOf } from './scenario.js'

const { cluster, namespace, getJson } = await startScenarios(t, { argo: true })
const argo = cluster.argo
const skip = argo === undefined || 'skipped' in argo
  ? `needs Argo's workflow controller: ${argo !== undefined && 'skipped' in argo ? argo.skipped : 'not started'}`
  : false
if (argo !== undefined && 'description' in argo) t.comment(`with ${argo.description}`)

const WORKFLOW = {
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'Workflow',
  metadata: { name: 'two-steps' },
  spec: {
    entrypoint: 'main',
    templates: [
      {
        name: 'main',
        dag: {
          tasks: [
            { name: 'first', template: 'step' },
            { name: 'second', template: 'step', dependencies: ['first'] },
          ],
        },
      },
      { name: 'step', container: { image: 'busybox', command: ['sh', '-c', 'echo done'] } },
    ],
  },
}

t.test('a two-step DAG runs to Succeeded with Argo\'s controller on kwok', { skip }, async (t) => {
  const ns = await namespace('argo-dag')
  await apply(cluster.kubectl, stringify(WORKFLOW), ns)
  const workflow = await waitForStatusOf(getJson, 'workflows.argoproj.io', ns, 'two-steps', 'Succeeded',
    (status) => status.phase === 'Succeeded' || status.phase === 'Failed' || status.phase === 'Error', 120_000)
  t.equal(workflow.status.phase, 'Succeeded', `the Workflow's phase (message: ${workflow.status.message ?? ''})`)

  const nodes = Object.values<any>(workflow.status.nodes ?? {})
  const pods = nodes.filter((n) => n.type === 'Pod')
  t.same(pods.map((n) => n.displayName).sort(), ['first', 'second'], 'a pod node per task')
  for (const node of pods) {
    t.equal(node.phase, 'Succeeded', `${String(node.displayName)} Succeeded`)
    t.equal(node.taskResultSynced ?? true, true, `${String(node.displayName)}'s task result is synced`)
  }
  const [first, second] = ['first', 'second'].map((name) => pods.find((n) => n.displayName === name))
  t.ok(Date.parse(second.startedAt) >= Date.parse(first.finishedAt), 'the second step started after the first finished')

  const results = await getJson(['get', 'workflowtaskresults.argoproj.io', '-n', ns])
  const completed = 'workflows.argoproj.io/report-outputs-completed'
  t.same(
    results.items.map((r: any) => [r.metadata.name, r.metadata.labels[completed]]).sort(),
    pods.map((n) => [n.id, 'true']).sort(),
    'one WorkflowTaskResult per pod, named after its node, marked complete'
  )
  const podList = await getJson(['get', 'pods', '-n', ns, '-l', 'workflows.argoproj.io/workflow=two-steps'])
  t.same(podList.items.map((p: any) => p.status.phase), ['Succeeded', 'Succeeded'], 'kwok finished both pods')
})
