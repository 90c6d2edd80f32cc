// Kubernetes decides a step's outcome, on the in-process Metacontroller: the simulated Job
// controller writes SuccessCriteriaMet / FailureTarget before Complete / Failed, as Kubernetes
// ≥ 1.31 does, and a dependant starts at the verdict; a failure by a FailJob rule of the Job's
// podFailurePolicy is final, whatever `retry` allows.
import t from 'tap'
import type { KubeObject } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'
import { Simulator, type SimulatorOptions } from '../../src/simulator/simulator.js'
import { jobflowController, JOBHOOKS_API_VERSION } from '../../src/simulator/controllers.js'
import type { ObjectRef } from '../../src/simulator/objects.js'
import { exampleJobFlow } from '../helpers/examples.js'

const FLOW = 'jobflow-example'
const flowRef: ObjectRef = { apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow', namespace: 'default', name: FLOW }
const jobRef = (name: string): ObjectRef => ({ apiVersion: 'batch/v1', kind: 'Job', namespace: 'default', name })

function simulator (t: { teardown: (fn: () => unknown) => void }, options: Partial<SimulatorOptions>): Simulator {
  const sim = new Simulator({ controllers: [jobflowController('v2')], ...options })
  t.teardown(async () => await sim.close())
  return sim
}

/** The example flow with `edits` merged into the flows they name. */
function exampleWith (edits: Record<string, Record<string, unknown>>): KubeObject {
  const flow = exampleJobFlow()
  const spec = flow.spec as { flows: Array<Record<string, unknown>> }
  spec.flows = spec.flows.map(f => ({ ...f, ...edits[f.name as string] }))
  return flow
}

function conditionTypes (sim: Simulator, name: string): string[] {
  const job = sim.get(jobRef(name))
  const list = isRecord(job?.status) && Array.isArray(job.status.conditions) ? job.status.conditions : []
  return list.filter(c => isRecord(c) && c.status === 'True').map(c => (c as { type: string }).type)
}

function records (sim: Simulator, flow: string): Array<Record<string, unknown>> {
  const status = sim.get(flowRef)?.status
  const jobs = isRecord(status) && Array.isArray(status.jobs) ? status.jobs : []
  return jobs.filter(isRecord).filter(j => j.name === flow)
}

function createdJobs (sim: Simulator): string[] {
  return sim.timeline.filter(e => e.type === 'created' && e.object.kind === 'Job').map(e => e.object.name)
}

t.test('a dependant starts once its dependency has SuccessCriteriaMet, before Complete', async t => {
  const sim = simulator(t, { jobs: { durationSeconds: 10 } })
  sim.apply(exampleJobFlow())
  await sim.runUntil(s => s.get(jobRef(`${FLOW}-job2`)) !== undefined)
  t.equal(sim.seconds(), 10)
  t.same(conditionTypes(sim, `${FLOW}-job1`), ['SuccessCriteriaMet'], 'job1 is not Complete yet')
  t.match(records(sim, 'job1'), [{ phase: 'Succeeded' }])
  await sim.runUntilQuiet()
  t.same(conditionTypes(sim, `${FLOW}-job1`), ['SuccessCriteriaMet', 'Complete'], 'Complete follows')
  t.match(sim.get(flowRef)?.status, { phase: 'Succeeded', jobsSucceeded: '5/5' })
})

t.test('a failure by the podFailurePolicy with retry set: no second attempt; the record says why', async t => {
  const sim = simulator(t, {
    jobs: { durationSeconds: 10, outcomes: { job2: { result: 'fail', reason: 'PodFailurePolicy' } } }
  })
  sim.apply(exampleWith({ job2: { retry: { limit: 2, backoffSeconds: 5 } } }))
  await sim.runUntilQuiet()
  t.same(createdJobs(sim).filter(name => name.startsWith(`${FLOW}-job2`)), [`${FLOW}-job2`], 'one attempt only')
  t.same(conditionTypes(sim, `${FLOW}-job2`), ['FailureTarget', 'Failed'])
  t.match(records(sim, 'job2'), [{ phase: 'Failed' }])
  t.equal(
    records(sim, 'job2')[0]?.message,
    'PodFailurePolicy: Container main failed with exit code 1 matching FailJob rule at index 0 ' +
      "(final: the Job's podFailurePolicy marked it; no retry)"
  )
  t.match(sim.get(flowRef)?.status, { phase: 'Failed' })

  const retried = simulator(t, { jobs: { durationSeconds: 10, outcomes: { job2: 'fail' } } })
  retried.apply(exampleWith({ job2: { retry: { limit: 1, backoffSeconds: 5 } } }))
  await retried.runUntilQuiet()
  t.same(
    createdJobs(retried).filter(name => name.startsWith(`${FLOW}-job2`)),
    [`${FLOW}-job2`, `${FLOW}-job2-2`],
    'the same failure by its backoff limit is retried'
  )
})
