// flows[].approval on the in-process Metacontroller: a step that runs no Job waits, once its
// dependencies allow it, for the annotation jobhooks.io/approve to name it; steps that do not
// depend on it never wait; a timeout fails it, or approves it with onTimeout: Approve.
import t from 'tap'
import type { KubeObject } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'
import { Simulator } from '../../src/simulator/simulator.js'
import { jobflowController, JOBHOOKS_API_VERSION } from '../../src/simulator/controllers.js'
import type { ObjectRef } from '../../src/simulator/objects.js'
import { createdJobs, inlineStep, scenarioJobFlow } from '../helpers/scenarios.js'

const flowRef: ObjectRef = { apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow', namespace: 'default', name: 'release' }
const step = inlineStep

/** build → approve (a person) → deploy, and docs beside them. */
function release (approval: Record<string, unknown> = {}): KubeObject {
  return scenarioJobFlow('release', {
    flows: [
      step('build'),
      { name: 'approve', dependencies: ['build'], approval },
      step('deploy', { dependencies: ['approve'] }),
      step('docs')
    ]
  })
}

interface Row { name: string, phase: string, message?: string, startTime?: string, completionTime?: string }
function records (sim: Simulator): Row[] {
  const status = sim.get(flowRef)?.status
  return isRecord(status) && Array.isArray(status.jobs) ? status.jobs as Row[] : []
}
const phaseOf = (sim: Simulator): unknown => (sim.get(flowRef)?.status as { phase?: string } | undefined)?.phase
const approveRecord = (sim: Simulator): Row | undefined => records(sim).find(r => r.name === 'approve')

function simulator (t: { teardown: (fn: () => unknown) => void }): Simulator {
  const sim = new Simulator({ controllers: [jobflowController('v2')], jobs: { durationSeconds: 10 } })
  t.teardown(async () => await sim.close())
  return sim
}

/** The JobFlow as the simulator holds it, annotated `jobhooks.io/approve=<value>`. */
function approve (sim: Simulator, value: string): void {
  const flow = sim.get(flowRef) as KubeObject
  const annotations = { ...flow.metadata.annotations, 'jobhooks.io/approve': value }
  sim.apply({ ...flow, metadata: { ...flow.metadata, annotations }, status: undefined })
}

t.test('an approval step waits for a person; what does not depend on it goes on', async t => {
  const sim = simulator(t)
  sim.apply(release())
  await sim.runUntilQuiet()
  t.same(createdJobs(sim), ['release-build', 'release-docs'], 'no Job for the approval step, none for deploy yet')
  t.match(approveRecord(sim), {
    phase: 'Pending',
    startTime: '2026-01-01T00:00:10Z',
    message: 'waiting for approval since 2026-01-01T00:00:10Z: kubectl jobhooks approve jf release approve ' +
      '-n default (it takes the patch verb on jobflows.jobhooks.io in default)'
  })
  t.equal(phaseOf(sim), 'Running', 'the flow waits, running')
  approve(sim, 'other, approve')
  await sim.runUntilQuiet()
  t.same(createdJobs(sim), ['release-build', 'release-docs', 'release-deploy'])
  t.match(approveRecord(sim),
    { phase: 'Succeeded', message: 'approved (jobhooks.io/approve)', startTime: '2026-01-01T00:00:10Z' })
  t.match(sim.get(flowRef)?.status, { phase: 'Succeeded', jobsSucceeded: '4/4' })
})

t.test('nobody approving within timeoutSeconds fails the step and skips what needs it', async t => {
  const sim = simulator(t)
  sim.apply(release({ timeoutSeconds: 60 }))
  await sim.runUntilQuiet()
  t.match(approveRecord(sim), {
    phase: 'Failed', message: 'not approved: nobody approved it within 60 s', completionTime: '2026-01-01T00:01:10Z'
  })
  t.same(createdJobs(sim), ['release-build', 'release-docs'])
  t.match(records(sim).find(r => r.name === 'deploy'), { phase: 'Skipped' })
  t.equal(phaseOf(sim), 'Failed')
})

t.test('onTimeout: Approve goes on once the time is up, as Argo\'s suspend duration', async t => {
  const sim = simulator(t)
  sim.apply(release({ timeoutSeconds: 60, onTimeout: 'Approve' }))
  await sim.runUntilQuiet()
  t.match(approveRecord(sim), { phase: 'Succeeded', message: 'approved by its timeout: nobody answered within 60 s' })
  t.same(createdJobs(sim), ['release-build', 'release-docs', 'release-deploy'])
})
