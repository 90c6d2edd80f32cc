// OperationJob scenarios on the in-process Metacontroller: the Exec action's ephemeral containers
// are injected through the simulated API server and run by the scripted kubelet; partition is
// raised by hand; the TTL deletes the job. Every run must go quiet.
import t from 'tap'
import type { KubeObject } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'
import { Simulator, type HookVersion, type Transport } from '../../src/simulator/simulator.js'
import { JOBHOOKS_API_VERSION, controllerFromManifest } from '../../src/simulator/controllers.js'
import { runningPod } from '../../src/simulator/ephemeraljob.js'
import type { ObjectRef } from '../../src/simulator/objects.js'
import type { PodSpec } from 'kubernetes-types/core/v1.js'
import { specOf } from '../helpers/objects.js'

const REF: ObjectRef = { apiVersion: JOBHOOKS_API_VERSION, kind: 'OperationJob', namespace: 'default', name: 'check' }
const PODS = ['web-0', 'web-1', 'web-2']

function operationJob (partition: number): KubeObject {
  return {
    apiVersion: JOBHOOKS_API_VERSION,
    kind: 'OperationJob',
    metadata: { name: 'check' },
    spec: {
      action: 'Exec',
      partition,
      activeDeadlineSeconds: 600,
      TTLSecondsAfterFinished: 120,
      targets: PODS.map(name => ({ name })),
      exec: { image: 'busybox:1.36', script: { name: 'check.sh', args: ['app'] } },
      scripts: { 'check.sh': 'pidof "$1"' }
    }
  }
}

function status (sim: Simulator): Record<string, any> {
  const object = sim.get(REF)
  return isRecord(object?.status) ? object.status : {}
}

for (const [version, transport] of [
  ['v2', 'http'],
  ['v1', 'http'],
  ['v2', 'direct']
] as Array<[HookVersion, Transport]>) {
  t.test(
    `Exec over three Pods (${version}, ${transport}): exit codes 0, 1, 0, partition 2 then 3 → Failed, ` +
      'succeeded 2, failed 1; then the TTL deletes it',
    async t => {
      const sim = new Simulator({
        controllers: [controllerFromManifest('operationjobs', version)],
        ephemeral: { exits: { 'web-1': 1 } },
        transport
      })
      t.teardown(async () => await sim.close())
      for (const name of PODS) sim.apply(runningPod(name, { app: 'web' }))
      await sim.advance(1)
      sim.apply(operationJob(2))
      await sim.runUntil(s => status(s).succeededPodCount + status(s).failedPodCount === 2)
      t.match(status(sim), { progress: 'Processing', totalPodCount: 3, succeededPodCount: 1, failedPodCount: 1 })
      t.same(
        status(sim).targetDetails.map((d: any) => `${d.name}=${d.progress}`),
        ['web-0=Succeeded', 'web-1=Failed', 'web-2=Pending']
      )
      t.match(status(sim).targetDetails[1].error, { reason: 'ExitCode', message: /exited with code 1/ })
      t.equal(status(sim).targetDetails[1].extraInfo.Released, 'true')
      await sim.runUntilQuiet()
      t.equal(status(sim).progress, 'Processing', 'the third target waits for the partition')
      t.notOk(
        sim.timeline.some(e => e.type === 'injected' && e.object.name === 'web-2'),
        'nothing injected into web-2 yet'
      )

      // The injected container runs the inline script through sh -c, as this job's.
      const injected = specOf<PodSpec>(
        sim.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'web-0' })
      ).ephemeralContainers
      t.match(injected, [
        {
          name: 'opj-check',
          command: ['sh', '-c', 'pidof "$1"', 'check.sh', 'app'],
          targetContainerName: 'app',
          env: [{ name: 'OPERATIONJOB', value: 'check' }, { name: 'OPERATIONJOB_UID' }]
        }
      ])

      sim.edit(REF, o => {
        specOf(o).partition = 3
      })
      await sim.runUntil(s => s.get(REF) === undefined || status(s).progress === 'Failed')
      const finished = status(sim)
      t.match(finished, { progress: 'Failed', succeededPodCount: 2, failedPodCount: 1, totalPodCount: 3 })
      t.same(
        finished.targetDetails.map((d: any) => `${d.name}=${d.progress}`),
        ['web-0=Succeeded', 'web-1=Failed', 'web-2=Succeeded']
      )
      const endedAt = Date.parse(finished.endTime)

      await sim.runUntil(s => s.get(REF) === undefined)
      const terminating = sim.timeline.find(e => e.type === 'terminating' && e.object.kind === 'OperationJob')
      t.equal(terminating?.cause, 'effect', 'deleted by its own TTL effect')
      const deleted = sim.timeline.find(e => e.type === 'deleted' && e.object.kind === 'OperationJob')
      t.equal(deleted?.cause, 'finalized', 'gone once finalize had nothing left to release')
      t.ok(
        sim.now().getTime() >= endedAt + 120_000 && sim.now().getTime() < endedAt + 125_000,
        'deleted TTLSecondsAfterFinished after endTime, not later'
      )
      await sim.runUntilQuiet()
      t.equal(
        PODS.filter(name => sim.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name }) !== undefined)
          .length,
        3,
        'the Pods stay'
      )
    }
  )
}
