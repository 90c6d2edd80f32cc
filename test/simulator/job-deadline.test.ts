// The simulated Job controller keeps a Job's own activeDeadlineSeconds as Kubernetes does: past
// it (counted from the Job's start) the Job fails, reason DeadlineExceeded, whatever its script
// would have done; under it the script's outcome stands.
import t from 'tap'
import { isRecord, type KubeObject } from '../../src/k8s/types.js'
import { Simulator } from '../../src/simulator/simulator.js'
import { jobflowController, JOBHOOKS_API_VERSION } from '../../src/simulator/controllers.js'

function flow (deadlines: Record<string, number | undefined>): KubeObject {
  const containers = [{ name: 'main', image: 'busybox:1.36', command: ['sh', '-c', 'work'] }]
  return {
    apiVersion: JOBHOOKS_API_VERSION,
    kind: 'JobFlow',
    metadata: { name: 'late', namespace: 'default' },
    spec: {
      failurePolicy: 'Continue',
      flows: Object.entries(deadlines).map(([name, seconds]) => ({
        name,
        jobTemplate: {
          ...(seconds !== undefined ? { activeDeadlineSeconds: seconds } : {}),
          template: { spec: { containers } }
        }
      }))
    }
  }
}

t.test('a Job past its activeDeadlineSeconds fails with DeadlineExceeded; one within it runs its course', async t => {
  const sim = new Simulator({
    controllers: [jobflowController('v2')],
    jobs: { outcomes: { 'late-stuck': 'hang' } }
  })
  t.teardown(async () => await sim.close())
  sim.apply(flow({ slow: 5, stuck: 30, roomy: 60, plain: undefined }))
  await sim.runUntilQuiet()
  const ref = { apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow', namespace: 'default', name: 'late' }
  const status = sim.get(ref)?.status
  const jobs = isRecord(status) ? status.jobs as Array<{ name: string, phase: string, message?: string }> : []
  t.same(jobs.map(j => [j.name, j.phase, j.message]), [
    ['slow', 'Failed', 'DeadlineExceeded: Job was active longer than specified deadline'],
    ['stuck', 'Failed', 'DeadlineExceeded: Job was active longer than specified deadline'],
    ['roomy', 'Succeeded', undefined],
    ['plain', 'Succeeded', undefined]
  ], 'the 10 s Job with 5 s fails; the hanging one at 30 s; the others succeed')
})
