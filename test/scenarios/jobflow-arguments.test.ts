// spec.arguments on the in-process Metacontroller: every container of every step gets them as
// JOBHOOKS_ARG_<NAME>, a `when` reads them (Argo's conditionals example, with the flow's
// parameter), and a `when` that reads one the spec does not give makes the spec Invalid.
import t from 'tap'
import type { KubeObject } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'
import { Simulator } from '../../src/simulator/simulator.js'
import { jobflowController, JOBHOOKS_API_VERSION } from '../../src/simulator/controllers.js'
import type { ObjectRef } from '../../src/simulator/objects.js'
import { containerEnvironment } from '../../src/k8s/expansion.js'
import { createdJobs } from '../helpers/scenarios.js'

const flowRef: ObjectRef = { apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow', namespace: 'default', name: 'release' }

function release (args: unknown, flows: Array<Record<string, unknown>>): KubeObject {
  const containers = [{ name: 'main', image: 'busybox:1.36', command: ['sh', '-c', 'echo $(JOBHOOKS_ARG_TAG)'] }]
  return {
    apiVersion: JOBHOOKS_API_VERSION,
    kind: 'JobFlow',
    metadata: { name: 'release', namespace: 'default' },
    spec: {
      arguments: args,
      flows: flows.map(f => ({ jobTemplate: { template: { spec: { containers } } }, ...f }))
    }
  }
}

function status (sim: Simulator): { phase?: string, jobs: Array<{ name: string, phase: string, message?: string }> } {
  const value = sim.get(flowRef)?.status
  return isRecord(value) ? value as { jobs: Array<{ name: string, phase: string }> } : { jobs: [] }
}

async function played (t: { teardown: (fn: () => unknown) => void }, flow: KubeObject): Promise<Simulator> {
  const sim = new Simulator({ controllers: [jobflowController('v2')] })
  t.teardown(async () => await sim.close())
  sim.apply(flow)
  await sim.runUntilQuiet()
  return sim
}

t.test('every container gets the arguments; a when reads them', async t => {
  const sim = await played(t, release([{ name: 'tag', value: 'v1.2 $(not-expanded)' }, { name: 'env', value: 'dev' }], [
    { name: 'build' },
    { name: 'deploy', dependencies: ['build'], when: "args.env == 'prod'" },
    { name: 'preview', dependencies: ['build'], when: "args.env != 'prod'" }
  ]))
  t.equal(status(sim).phase, 'Succeeded')
  t.same(createdJobs(sim), ['release-build', 'release-preview'], 'deploy skipped: env is dev')
  t.match(status(sim).jobs.find(j => j.name === 'deploy'),
    { phase: 'Skipped', message: "skipped: its when is false: args.env == 'prod'" })
  const build = sim.listJobs().find(j => j.metadata.name === 'release-build') as KubeObject
  const pod = (build.spec as { template: { spec: { containers: Array<{ env?: [] }> } } }).template.spec
  const env = containerEnvironment(pod.containers[0] as never)
  t.equal(env.get('JOBHOOKS_ARG_TAG'), 'v1.2 $(not-expanded)', 'the container sees the value as written')
  t.equal(env.get('JOBHOOKS_ARG_ENV'), 'dev')
})

t.test('a when that reads an argument the spec does not give: Invalid, nothing runs', async t => {
  const sim = await played(t, release([], [{ name: 'deploy', when: "args.env == 'prod'" }]))
  t.equal(status(sim).phase, 'Invalid')
  t.same(createdJobs(sim), [])
  const valid = (sim.get(flowRef)?.status as { conditions: Array<{ type: string, message: string }> }).conditions
    .find(c => c.type === 'Valid')
  t.match(valid?.message, 'flow "deploy": when reads args.env, which spec.arguments does not give')
})
