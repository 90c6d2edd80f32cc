// EphemeralJob scenarios on the in-process Metacontroller: the hooks run through the real HTTP
// app (or in-process), their effects are applied to the simulated API server, and a scripted
// kubelet runs the injected ephemeral containers on a simulated clock. Every run must go quiet.
import t from 'tap'
import { fileURLToPath } from 'node:url'
import type { KubeObject } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'
import { Simulator, type HookVersion, type SimulatorOptions, type Transport } from '../../src/simulator/simulator.js'
import { JOBHOOKS_API_VERSION } from '../../src/simulator/controllers.js'
import {
  ephemeraljobController,
  jobContainers,
  runningPod,
  type EphemeralBehaviour
} from '../../src/simulator/ephemeraljob.js'
import { loadManifest } from '../../src/simulator/manifest.js'
import type { ObjectRef } from '../../src/simulator/objects.js'
import { condition } from '../helpers/conditions.js'
import { specOf } from '../helpers/objects.js'
import type { PodSpec } from 'kubernetes-types/core/v1.js'

const BATCH_MANIFEST = fileURLToPath(new URL('../../manifests/examples/ephemeraljob-batch.yaml', import.meta.url))
const DEBUG_MANIFEST = fileURLToPath(new URL('../../manifests/examples/ephemeraljob-debug.yaml', import.meta.url))
const STORY = 'hello-world-ephemeral-job'
const ejobRef = (name = STORY): ObjectRef => ({
  apiVersion: JOBHOOKS_API_VERSION,
  kind: 'EphemeralJob',
  namespace: 'default',
  name
})

interface Tap {
  teardown: (fn: () => unknown) => void
}

function simulator (
  t: Tap,
  ephemeral: EphemeralBehaviour = {},
  version: HookVersion = 'v2',
  options: Partial<SimulatorOptions> = {}
): Simulator {
  const sim = new Simulator({ controllers: [ephemeraljobController(version)], ephemeral, ...options })
  t.teardown(async () => await sim.close())
  return sim
}

function status (sim: Simulator, name = STORY): Record<string, any> {
  const object = sim.get(ejobRef(name))
  return isRecord(object?.status) ? object.status : {}
}

/** The first story's EphemeralJob from the example manifest, with `mutate` applied to its spec. */
function storyJob (mutate: (spec: any) => void = () => {}): KubeObject {
  const job = loadManifest(BATCH_MANIFEST).find(o => o.kind === 'EphemeralJob') as KubeObject
  mutate(job.spec)
  return job
}

/** The proposal's four Pods: two of helloworld (older), two of helloworld-no-work, one second apart. */
const STORY_PODS = [
  'helloworld-865cd8865b-nl8lq',
  'helloworld-865cd8865b-xmtrv',
  'helloworld-no-work-6cc445bc7-t286v',
  'helloworld-no-work-6cc445bc7-d967c'
]
const BROKEN = { 'helloworld-no-work-6cc445bc7-t286v': 1, 'helloworld-no-work-6cc445bc7-d967c': 1 }

async function createPods (
  sim: Simulator,
  names: string[],
  labels: Record<string, string> = { app: 'helloworld' },
  container = 'helloworld'
): Promise<void> {
  for (const name of names) {
    sim.apply(runningPod(name, labels, { containers: [container] }))
    await sim.advance(1)
  }
}

/** Runs until the job has a completionTime, checking `check` after every step. */
async function runToCompletion (sim: Simulator, check: () => void = () => {}, name = STORY): Promise<void> {
  await sim.runUntil(s => {
    check()
    return typeof status(s, name).completionTime === 'string'
  })
}

/** Asserts at every step that at most `max` of the job's containers are running or waiting. */
function parallelismGuard (
  t: Tap & { fail: (m: string) => void },
  sim: Simulator,
  max: number,
  name = STORY
): { check: () => void; peak: () => number } {
  let peak = 0
  let failed = false
  return {
    check: () => {
      const active = jobContainers(sim.store, name).filter(c => c.state !== 'terminated')
      peak = Math.max(peak, active.length)
      if (active.length > max && !failed) {
        failed = true
        t.fail(
          `t=${sim.seconds()}s: ${active.length} containers active at once ` +
            `(${active.map(c => `${c.pod}/${c.name} ${c.state}`).join(', ')}), parallelism ${max}`
        )
      }
    },
    peak: () => peak
  }
}

for (const [version, transport] of [
  ['v2', 'http'],
  ['v1', 'http'],
  ['v2', 'direct']
] as Array<[HookVersion, Transport]>) {
  t.test(
    `story 1 (${version}, ${transport}): four Pods, two fail pidof: Failed with match 4, succeeded 2, failed 2; ` +
      'parallelism 1 holds at every step',
    async t => {
      const sim = simulator(t, { exits: BROKEN }, version, { transport })
      await createPods(sim, STORY_PODS)
      const created = sim.seconds()
      sim.apply(storyJob())
      const guard = parallelismGuard(t, sim, 1)
      await runToCompletion(sim, guard.check)
      t.equal(guard.peak(), 1, 'one container at a time, never more')
      t.match(status(sim), { phase: 'Failed', match: 4, succeeded: 2, failed: 2, running: 0, waiting: 0 })
      t.same(
        status(sim).pods.map((p: any) => `${p.name}=${p.phase}`),
        STORY_PODS.map(p => `${p}=${p.includes('no-work') ? 'Failed' : 'Succeeded'}`),
        'oldest first'
      )
      t.match(condition(status(sim), 'Failed'), { status: 'True', reason: 'PodsFailed', message: /2 of 4 Pods failed/ })
      const injected = sim.timeline.filter(e => e.type === 'injected').map(e => e.object.name)
      t.same(injected, STORY_PODS, 'each Pod injected once, in order')
      for (const container of jobContainers(sim.store, STORY)) {
        t.equal(container.state, 'terminated', `${container.pod}: the container ran`)
      }
      t.same(
        sim.effects.log.filter(e => e.result !== 'applied'),
        [],
        'every effect applied'
      )

      // ttlSecondsAfterCreated: 1800 after creation the job deletes itself, and not before.
      const last = sim.lastReconcile(ejobRef())
      t.equal(last?.response?.resyncAfterSeconds, created + 1800 - sim.seconds(), 'the resync points at the TTL')
      await sim.runUntilQuiet()
      t.equal(sim.get(ejobRef()), undefined, 'the EphemeralJob is gone')
      const deleted = sim.timeline.find(e => e.type === 'deleted' && e.object.kind === 'EphemeralJob')
      t.match(deleted, { seconds: created + 1800, cause: 'effect' })
      t.same(
        sim.effects.log.filter(e => e.effect.type === 'Delete').map(e => [e.seconds, e.result]),
        [[created + 1800, 'applied']]
      )
      t.equal(sim.list({ apiVersion: 'v1', kind: 'Pod' }).length, 4, 'the Pods stay')
    }
  )
}

t.test(
  'parallelism 2 over five Pods: never more than two containers running or waiting, and the slots refill',
  async t => {
    const sim = simulator(t, { startAfterSeconds: 2, runSeconds: 3 })
    await createPods(sim, ['p1', 'p2', 'p3', 'p4', 'p5'])
    sim.apply(
      storyJob(spec => {
        spec.parallelism = 2
        spec.replicas = undefined
      })
    )
    const guard = parallelismGuard(t, sim, 2)
    await runToCompletion(sim, guard.check)
    t.equal(guard.peak(), 2)
    t.match(status(sim), { phase: 'Succeeded', match: 5, succeeded: 5, failed: 0 })
    t.match(condition(status(sim), 'Complete'), { status: 'True', message: '5 of 5 Pods succeeded' })
  }
)

t.test('replicas limits the Pods injected, oldest first', async t => {
  const sim = simulator(t)
  await createPods(sim, ['p1', 'p2', 'p3', 'p4'])
  sim.apply(
    storyJob(spec => {
      spec.replicas = 2
      spec.parallelism = 4
    })
  )
  await runToCompletion(sim)
  t.match(status(sim), { phase: 'Succeeded', match: 4, succeeded: 2 })
  t.same(
    jobContainers(sim.store, STORY).map(c => c.pod),
    ['p1', 'p2']
  )
})

t.test('paused stops new injections; resuming continues', async t => {
  const sim = simulator(t)
  await createPods(sim, STORY_PODS)
  sim.apply(
    storyJob(spec => {
      spec.paused = true
    })
  )
  await sim.advance(60)
  t.match(status(sim), { phase: 'Paused', match: 4, waiting: 0, running: 0 })
  t.same(jobContainers(sim.store, STORY), [], 'nothing injected while paused')

  sim.edit(ejobRef(), o => {
    specOf(o).paused = false
  })
  await sim.runUntil(s => status(s).succeeded === 1)
  sim.edit(ejobRef(), o => {
    specOf(o).paused = true
  })
  const injectedBefore = jobContainers(sim.store, STORY).length
  await sim.advance(120)
  t.equal(status(sim).phase, 'Paused')
  t.equal(jobContainers(sim.store, STORY).length, injectedBefore, 'no Pod injected while paused again')
  t.ok(injectedBefore <= 2, 'the container already injected ran on')

  sim.edit(ejobRef(), o => {
    specOf(o).paused = false
  })
  await runToCompletion(sim)
  t.match(status(sim), { phase: 'Succeeded', succeeded: 4, match: 4 })
})

t.test('activeDeadlineSeconds fails the job with DeadlineExceeded and injects no more', async t => {
  const sim = simulator(t, { exits: { 'helloworld-865cd8865b-nl8lq': 'hang' } })
  await createPods(sim, STORY_PODS)
  sim.apply(
    storyJob(spec => {
      spec.activeDeadlineSeconds = 30
      delete spec.ttlSecondsAfterCreated
    })
  )
  const start = sim.seconds()
  t.equal((await sim.reconcile(ejobRef())).resyncAfterSeconds, 30, 'the first sync asks for a resync at the deadline')
  await runToCompletion(sim)
  t.equal(sim.seconds(), start + 30, 'failed at the deadline, not later')
  t.match(status(sim), { phase: 'Failed', running: 1, succeeded: 0 })
  t.match(condition(status(sim), 'Failed'), { status: 'True', reason: 'DeadlineExceeded' })
  await sim.runUntilQuiet()
  t.same(
    jobContainers(sim.store, STORY).map(c => `${c.pod} ${c.state}`),
    ['helloworld-865cd8865b-nl8lq running'],
    'only the first Pod ever got a container'
  )
  t.equal(status(sim).phase, 'Failed', 'still Failed')
})

t.test('ttlSecondsAfterFinished deletes the job that long after it finished', async t => {
  const sim = simulator(t)
  await createPods(sim, ['p1', 'p2'])
  sim.apply(
    storyJob(spec => {
      delete spec.ttlSecondsAfterCreated
      spec.ttlSecondsAfterFinished = 60
    })
  )
  await runToCompletion(sim)
  const finished = sim.secondsAt(status(sim).completionTime)
  t.equal(sim.lastReconcile(ejobRef())?.response?.resyncAfterSeconds, 60, 'the resync points at the TTL')
  await sim.advance(59)
  t.not(sim.get(ejobRef()), undefined, 'still there 59 s after')
  await sim.runUntilQuiet()
  t.equal(sim.get(ejobRef()), undefined, 'gone')
  t.match(
    sim.timeline.find(e => e.type === 'deleted' && e.object.kind === 'EphemeralJob'),
    { seconds: finished + 60, cause: 'effect' }
  )
})

t.test('a job re-created under the same name skips the Pods the old one injected', async t => {
  const sim = simulator(t)
  await createPods(sim, ['p1', 'p2'])
  sim.apply(
    storyJob(spec => {
      spec.replicas = 1
      delete spec.ttlSecondsAfterCreated
    })
  )
  await runToCompletion(sim)
  sim.delete(ejobRef())
  sim.apply(
    storyJob(spec => {
      spec.replicas = 2
      delete spec.ttlSecondsAfterCreated
    })
  )
  await runToCompletion(sim)
  t.match(status(sim), { phase: 'Succeeded', match: 2, succeeded: 1 })
  t.same(
    status(sim).pods.map((p: any) => p.name),
    ['p2'],
    "p1 has the old job's container: skipped"
  )
})

t.test('a finished Pod that disappears still counts (law 6)', async t => {
  const sim = simulator(t)
  await createPods(sim, ['p1', 'p2', 'p3'])
  sim.apply(
    storyJob(spec => {
      spec.replicas = undefined
      delete spec.ttlSecondsAfterCreated
    })
  )
  await sim.runUntil(s => status(s).succeeded === 1)
  sim.delete({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'p1' })
  await runToCompletion(sim)
  t.match(status(sim), { phase: 'Succeeded', match: 2, succeeded: 3 })
  await sim.runUntilQuiet()
  t.equal(jobContainers(sim.store, STORY).length, 2, 'p1 was not replaced by an extra injection')
})

t.test('story 2: a long-running debug container keeps the job Running, and the system goes quiet', async t => {
  const sim = simulator(t, { exits: { nginx: 'hang' } })
  for (const object of loadManifest(DEBUG_MANIFEST)) {
    if (object.kind === 'Pod') {
      sim.apply({ ...object, status: { phase: 'Running' } })
      await sim.advance(1)
    } else sim.apply(object)
  }
  await sim.advance(10)
  t.match(status(sim, 'nginx-ephemeral-job'), {
    phase: 'Running',
    match: 1,
    succeeded: 0,
    failed: 0,
    running: 1,
    waiting: 0
  })
  const pod = sim.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'nginx' })
  const injected = specOf<PodSpec>(pod).ephemeralContainers
  t.match(injected, [
    {
      name: 'nginx-ec',
      targetContainerName: 'nginx',
      command: ['sleep', '99999'],
      tty: true,
      stdin: true,
      env: [{ name: 'ephemeraljob', value: 'nginx-ephemeral-job' }, { name: 'EPHEMERALJOB_UID' }]
    }
  ])
  const writes = sim.statusWrites.get('default/nginx-ephemeral-job')
  await sim.advance(600)
  t.equal(sim.statusWrites.get('default/nginx-ephemeral-job'), writes, 'no status write while nothing changes')
})

t.test(
  "the request carries only the job's namespace's Pods: under v2 Metacontroller lists a label rule without a " +
    'namespace in every namespace, so the rule names it',
  async t => {
    for (const version of ['v2', 'v1'] as HookVersion[]) {
      const sim = simulator(t, {}, version)
      sim.apply({
        ...runningPod('elsewhere', { app: 'helloworld' }, { containers: ['helloworld'], namespace: 'other' })
      })
      await createPods(sim, STORY_PODS.slice(0, 2))
      sim.apply(storyJob())
      await sim.runUntilQuiet()
      const related = sim.lastReconcile(ejobRef())?.request?.related?.['Pod.v1'] ?? {}
      t.same(
        Object.values(related)
          .map((p: any) => `${String(p.metadata.namespace)}/${String(p.metadata.name)}`)
          .sort(),
        STORY_PODS.slice(0, 2).map(n => `default/${n}`),
        `${version}: none from namespace other`
      )
      t.same(jobContainers(sim.store, STORY, 'other'), [], `${version}: nothing injected there`)
    }
  }
)
