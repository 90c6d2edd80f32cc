// What the CollaSet tests share: the example CollaSet `foo` brought up on the in-process
// Metacontroller (the scenario files), and the Pods of a hook request (the request-level files).
import { fileURLToPath } from 'node:url'
import type { KubeObject } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'
import type { SyncRequest } from '../../src/protocol/hooks.js'
import { Simulator } from '../../src/simulator/simulator.js'
import { JOBHOOKS_API_VERSION } from '../../src/simulator/controllers.js'
import { collasetController, PodKubelet } from '../../src/simulator/collaset.js'
import { loadManifest } from '../../src/simulator/manifest.js'
import type { ObjectRef } from '../../src/simulator/objects.js'
import { specOf } from './objects.js'
import { capacityGuard, livePods } from './scenarios.js'

const EXAMPLE = fileURLToPath(new URL('../../manifests/examples/collaset.yaml', import.meta.url))
export const fooRef: ObjectRef = {
  apiVersion: JOBHOOKS_API_VERSION, kind: 'CollaSet', namespace: 'default', name: 'foo'
}
export const podRef = (name: string): ObjectRef => ({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name })

type KubeletOptions = NonNullable<ConstructorParameters<typeof PodKubelet>[1]>

/**
 * foo of manifests/examples/collaset.yaml with 3 replicas and `spec` merged in, brought up and
 * Ready, its Pods started 3 s after they are created (or as `kubeletOptions` say).
 */
export async function bringUp (
  t: { teardown: (fn: () => unknown) => void },
  spec: Record<string, unknown> = {},
  kubeletOptions: Omit<KubeletOptions, 'startAfterSeconds'> = {}
): Promise<{ sim: Simulator, kubelet: PodKubelet }> {
  const sim = new Simulator({ controllers: [collasetController('v2')], transport: 'http' })
  t.teardown(async () => await sim.close())
  const kubelet = new PodKubelet(sim, { startAfterSeconds: 3, ...kubeletOptions })
  const object = loadManifest(EXAMPLE).find(o => o.kind === 'CollaSet') as KubeObject
  Object.assign(specOf(object), { replicas: 3 }, spec)
  sim.apply(object)
  await kubelet.run(10)
  return { sim, kubelet }
}

/** foo's status as the simulator holds it. */

export function fooStatus (sim: Simulator): Record<string, any> {
  const object = sim.get(fooRef)
  return isRecord(object?.status) ? object.status : {}
}

/** The Pods of a sync request. */
export function podsOf (request: SyncRequest): KubeObject[] {
  return Object.values(request.children['Pod.v1'] ?? {})
}

/** The Pod of a sync request named `name`. */
export function named (request: SyncRequest, name: string): KubeObject {
  const found = podsOf(request).find(p => p.metadata.name === name)
  if (found === undefined) throw new Error(`no Pod ${name} in the request`)
  return found
}

/**
 * Runs the kubelet `seconds` seconds, failing `t` once if fewer than `min` Pods are Ready at any
 * second; answers the most live Pods seen at once (a surge shows as one more than `replicas`).
 */
export async function runWatchingCapacity (
  t: { fail: (message: string) => void },
  sim: Simulator,
  kubelet: PodKubelet,
  seconds: number,
  min: number
): Promise<number> {
  let peak = 0
  const guard = capacityGuard(t, sim, min)
  await kubelet.run(seconds, () => {
    guard()
    peak = Math.max(peak, livePods(sim).length)
  })
  return peak
}
