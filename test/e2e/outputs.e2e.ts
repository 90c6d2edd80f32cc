// Outputs on the real thing: a step's termination message reaches the next step's environment,
// its record, and the `when` of the steps after it. kwok runs no command: a pod annotation gives
// the message its command would write (test/e2e/kwok-stages.yaml).
import t from 'tap'
import { apply } from './cluster.js'
import { jobFlowExample, startScenarios, waitForStatusOf } from './scenario.js'

const { cluster, namespace, getJson } = await startScenarios(t)
const MESSAGE = 'e2e.jobhooks.io/termination-message'

/** A release: build (its output a JSON object), then deploy and rollback, each with a `when` over it. */
function release (): any {
  return jobFlowExample(cluster, spec => {
    const template = structuredClone(spec.flows[0].jobTemplate)
    const step = (name: string, extra: Record<string, unknown> = {}): any => ({
      name,
      jobTemplate: structuredClone(template),
      ...extra
    })
    const build = step('build')
    build.jobTemplate.template.metadata = { annotations: { [MESSAGE]: '{"version": "v1.2.3", "healthy": true}' } }
    const deploy = step('deploy', { dependencies: ['build'], when: 'flows.build.outputJSON.healthy' })
    deploy.jobTemplate.template.spec.containers[0].args = ['deploy', '$(JOBHOOKS_OUTPUT_BUILD)']
    const rollback = step('rollback', { dependencies: ['build'], when: '!flows.build.outputJSON.healthy' })
    const announce = step('announce', { dependencies: ['deploy'] })
    spec.flows = [build, deploy, rollback, announce]
  })
}

t.test('a termination message is the output: recorded, in the dependant\'s env, read by when', async t => {
  const ns = await namespace('outputs')
  const flow = release()
  await apply(cluster.kubectl, JSON.stringify(flow), ns)
  const done = await waitForStatusOf(getJson, 'jobflow', ns, flow.metadata.name, 'Succeeded',
    s => s.phase === 'Succeeded', 180_000)
  const records = new Map<string, any>(done.status.jobs.map((r: any) => [r.name, r]))
  t.equal(records.get('build')?.output, '{"version": "v1.2.3", "healthy": true}', 'the build\'s output, recorded')
  t.match(records.get('rollback'), { phase: 'Skipped', message: /^skipped: its when is false/ })
  t.match(records.get('deploy'), { phase: 'Succeeded', output: '' }, 'a step without a message: an empty output')
  const deploy = await getJson(['get', 'job', `${String(flow.metadata.name)}-deploy`, '-n', ns])
  const container = deploy.spec.template.spec.containers[0]
  t.same(container.env.filter((e: any) => e.name.startsWith('JOBHOOKS_OUTPUT_')),
    [{ name: 'JOBHOOKS_OUTPUT_BUILD', value: '{"version": "v1.2.3", "healthy": true}' }])
  t.same(container.args, ['deploy', '$(JOBHOOKS_OUTPUT_BUILD)'], 'Kubernetes expands it in the container, not us')
  const announce = await getJson(['get', 'job', `${String(flow.metadata.name)}-announce`, '-n', ns])
  t.same(announce.spec.template.spec.containers[0].env.filter((e: any) => e.name.startsWith('JOBHOOKS_OUTPUT_')),
    // The API server stores an empty value as none: the variable is there, and expands to ''.
    [{ name: 'JOBHOOKS_OUTPUT_DEPLOY' }], 'only its own dependencies\' outputs, an empty one included')
})
