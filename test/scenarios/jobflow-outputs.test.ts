// Outputs on the in-process Metacontroller: the simulated kubelet leaves a succeeded pod with its
// termination message, customize asks for the pods of the JobFlow's Jobs, and the next step's Job
// carries the output in its environment; `when` reads it.
import t from 'tap'
import type { KubeObject } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'
import { Simulator, type SimulatorOptions } from '../../src/simulator/simulator.js'
import { jobflowController, JOBHOOKS_API_VERSION } from '../../src/simulator/controllers.js'
import type { ObjectRef } from '../../src/simulator/objects.js'

const flowRef: ObjectRef = { apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow', namespace: 'default', name: 'release' }
const jobRef = (name: string): ObjectRef => ({ apiVersion: 'batch/v1', kind: 'Job', namespace: 'default', name })

function simulator (t: { teardown: (fn: () => unknown) => void }, options: Partial<SimulatorOptions> = {}): Simulator {
  const sim = new Simulator({ controllers: [jobflowController('v2')], ...options })
  t.teardown(async () => await sim.close())
  return sim
}

function step (name: string, command: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const containers = [{ name: 'main', image: 'busybox:1.36', command: ['sh', '-c', command] }]
  return { name, jobTemplate: { template: { spec: { containers } } }, ...extra }
}

function release (flows: Array<Record<string, unknown>>): KubeObject {
  return {
    apiVersion: JOBHOOKS_API_VERSION,
    kind: 'JobFlow',
    metadata: { name: 'release', namespace: 'default' },
    spec: { flows }
  }
}

function record (sim: Simulator, flow: string): Record<string, unknown> | undefined {
  const status = sim.get(flowRef)?.status
  const jobs = isRecord(status) && Array.isArray(status.jobs) ? status.jobs : []
  return jobs.filter(isRecord).find(j => j.name === flow)
}

function envOf (sim: Simulator, job: string): unknown {
  const spec = sim.get(jobRef(job))?.spec as { template: { spec: { containers: Array<{ env?: unknown }> } } }
  return spec.template.spec.containers[0]?.env
}

t.test('a step\'s termination message reaches the next step\'s environment and its record', async t => {
  const sim = simulator(t)
  sim.apply(release([
    step('build', 'make && echo v1.2.3 > /dev/termination-log'),
    step('deploy', 'deploy "$(JOBHOOKS_OUTPUT_BUILD)"', { dependencies: ['build'] })
  ]))
  await sim.runUntilQuiet()
  t.match(sim.get(flowRef)?.status, { phase: 'Succeeded' })
  t.equal(record(sim, 'build')?.output, 'v1.2.3')
  t.same(envOf(sim, 'release-deploy'), [{ name: 'JOBHOOKS_OUTPUT_BUILD', value: 'v1.2.3' }])
  t.equal(sim.seconds(), 20, 'no wait: the pod is there before the Job succeeds')
})

t.test('a script\'s output, and when over it: the other branch is skipped', async t => {
  const sim = simulator(t, { jobs: { outcomes: { check: { result: 'succeed', output: '{"healthy": false}' } } } })
  sim.apply(release([
    step('check', 'check'),
    step('promote', 'promote', { dependencies: ['check'], when: 'flows.check.outputJSON.healthy' }),
    step('rollback', 'rollback', { dependencies: ['check'], when: '!flows.check.outputJSON.healthy' })
  ]))
  await sim.runUntilQuiet()
  t.equal(record(sim, 'check')?.output, '{"healthy": false}')
  t.match(record(sim, 'promote'), { phase: 'Skipped', message: /^skipped: its when is false/ })
  t.match(record(sim, 'rollback'), { phase: 'Succeeded' })
})

t.test('an output with $( and $$: the next step\'s container sees and writes exactly those bytes', async t => {
  const written = '$(HOME) and $$(X)'
  const sim = simulator(t, { jobs: { outcomes: { build: { result: 'succeed', output: written } } } })
  const relay = step('relay', 'echo "$(JOBHOOKS_OUTPUT_BUILD)" > /dev/termination-log', { dependencies: ['build'] })
  const containers = (relay.jobTemplate as { template: { spec: { containers: Array<Record<string, unknown>> } } })
    .template.spec.containers
  // Defined before the output's variable: unescaped, the kubelet would put /root in its place.
  containers[0] = { ...containers[0], env: [{ name: 'HOME', value: '/root' }] }
  sim.apply(release([step('build', 'build'), relay]))
  await sim.runUntilQuiet()
  t.equal(record(sim, 'build')?.output, written)
  t.same(envOf(sim, 'release-relay'), [
    { name: 'HOME', value: '/root' },
    { name: 'JOBHOOKS_OUTPUT_BUILD', value: '$$(HOME) and $$$$(X)' }
  ], 'the Job carries the output escaped')
  t.equal(record(sim, 'relay')?.output, written, 'what the container wrote after the kubelet\'s expansion')
})
