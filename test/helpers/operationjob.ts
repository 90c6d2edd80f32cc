// Building OperationJob hook requests in tests: a job, its Pods, and a test action whose outcome
// each Pod's annotations script, so that the core's rules can be checked apart from Exec.
import type { KubeObject, OwnerReference } from '../../src/k8s/types.js'
import { SERVICE_READY } from '../../src/k8s/labels.js'
import type { SyncAnswer, SyncRequest } from '../../src/protocol/hooks.js'
import { ActionRegistry, type ActionHandler } from '../../src/actions/registry.js'
import type { TargetDetail } from '../../src/actions/types.js'
import { execAction } from '../../src/actions/exec.js'
import { operationJobSyncHooks } from '../../src/controllers/operationjob/sync.js'
import { context } from './fixtures.js'

/** Annotation a test Pod carries to script the `Probe` action: `Succeeded`, `Failed` or absent (Processing). */
export const OUTCOME = 'test/outcome'
/** Label whose presence means the `Probe` action still has something to undo on the Pod. */
export const HELD = 'test/held'

/** A test action: operating labels the Pod (an effect-free stand-in), progress reads an annotation. */
export const probeAction: ActionHandler = {
  relatedResources: job => [
    {
      apiVersion: 'v1',
      resource: 'configmaps',
      ...(job.namespace !== undefined ? { namespace: job.namespace } : {}),
      names: [`${job.name}-probe`]
    }
  ],
  operate: target => ({ effects: [], extraInfo: { Operated: 'true' } }),
  progress: target => {
    const outcome = target.pod?.metadata.annotations?.[OUTCOME]
    if (target.pod === undefined) return { progress: 'Failed', error: { reason: 'PodNotFound', message: 'gone' } }
    if (outcome === 'Succeeded') return { progress: 'Succeeded' }
    if (outcome === 'Failed') {
      return { progress: 'Failed', error: { reason: 'ProbeFailed', message: 'the probe failed' } }
    }
    return { progress: 'Processing' }
  },
  release: target =>
    target.pod?.metadata.labels?.[HELD] === 'true'
      ? {
          effects: [
            {
              type: 'Delete',
              target: {
                apiVersion: 'v1',
                kind: 'Pod',
                namespace: 'default',
                name: target.name,
                uid: target.pod.metadata.uid as string
              }
            }
          ]
        }
      : { effects: [] }
}

export function testRegistry (): ActionRegistry {
  return new ActionRegistry([execAction, { name: 'Probe', handler: probeAction }])
}

export const REGISTRY = testRegistry()
/** The OperationJob sync and finalize hooks over REGISTRY. */
export const TEST_HOOKS = operationJobSyncHooks(REGISTRY)

export function job (
  spec: Record<string, unknown>,
  status?: Record<string, unknown>,
  uid: string | undefined = 'opj-uid-1'
): KubeObject {
  return {
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'OperationJob',
    metadata: {
      name: 'ops',
      namespace: 'default',
      ...(uid !== undefined ? { uid } : {}),
      generation: 1,
      creationTimestamp: '2026-01-02T00:00:00Z'
    },
    spec: { action: 'Probe', ...spec },
    ...(status !== undefined ? { status } : {})
  }
}

export function pod (
  name: string,
  options: { outcome?: 'Succeeded' | 'Failed'; held?: boolean; uid?: string } = {}
): KubeObject {
  const base = workloadPod(name, {
    ...(options.uid !== undefined ? { uid: options.uid } : {}),
    ...(options.held === true ? { labels: { [HELD]: 'true' } } : {})
  })
  return options.outcome === undefined
    ? base
    : { ...base, metadata: { ...base.metadata, annotations: { [OUTCOME]: options.outcome } } }
}

export function request (parent: KubeObject, pods: KubeObject[]): SyncRequest {
  return {
    parent,
    children: {},
    related: { 'Pod.v1': Object.fromEntries(pods.map(p => [`default/${p.metadata.name}`, p])) },
    finalizing: false
  }
}

export const T0 = new Date('2026-01-02T03:00:00Z')
export const at = (seconds: number): Date => new Date(T0.getTime() + seconds * 1000)

export function sync (parent: KubeObject, pods: KubeObject[], now: Date): SyncAnswer {
  return TEST_HOOKS.sync(request(parent, pods), context(now))
}

export function finalize (parent: KubeObject, pods: KubeObject[], now: Date): SyncAnswer {
  return TEST_HOOKS.finalize({ ...request(parent, pods), finalizing: true }, context(now))
}

/** The job with the status an answer returned, as Metacontroller would write it back. */
export function next (parent: KubeObject, answer: SyncAnswer, spec: Record<string, unknown> = {}): KubeObject {
  return { ...parent, spec: { ...(parent.spec as Record<string, unknown>), ...spec }, status: answer.response.status }
}

/** Entry `index` of an answer's `status.targetDetails`; throws when there is none. */
export function detailOf (answer: SyncAnswer, index = 0): TargetDetail {
  const detail = (answer.response.status.targetDetails as TargetDetail[] | undefined)?.[index]
  if (detail === undefined) throw new Error(`the answer has no targetDetails[${index}]`)
  return detail
}

export function progresses (answer: SyncAnswer): string[] {
  return (answer.response.status.targetDetails as Array<{ name: string; progress: string }>).map(
    d => `${d.name}=${d.progress}`
  )
}

export interface WorkloadPodOptions {
  uid?: string
  created?: string
  labels?: Record<string, string>
  /** The controller's ownerReference; none for a bare Pod. */
  owner?: OwnerReference
  /** The Ready condition; default True. */
  ready?: boolean
  /** Carries the jobhooks.io/service-ready readiness gate. */
  gated?: boolean
  /** The service-ready condition's status, when the Pod has one. */
  serviceReady?: 'True' | 'False'
  terminating?: boolean
}

/** A running Pod of a workload, as Replace and Recreate read them: owner, labels, Ready, the readiness gate. */
export function workloadPod (name: string, options: WorkloadPodOptions = {}): KubeObject {
  const conditions: Array<Record<string, string>> = [
    { type: 'Ready', status: options.ready === false ? 'False' : 'True' }
  ]
  if (options.serviceReady !== undefined) conditions.push({ type: SERVICE_READY, status: options.serviceReady })
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'default',
      uid: options.uid ?? `uid-${name}`,
      creationTimestamp: options.created ?? '2026-01-02T00:00:00Z',
      labels: { ...options.labels },
      ...(options.owner !== undefined ? { ownerReferences: [options.owner] } : {}),
      ...(options.terminating === true ? { deletionTimestamp: '2026-01-02T03:00:00Z' } : {})
    },
    spec: {
      containers: [{ name: 'app', image: 'nginx' }],
      ...(options.gated === true ? { readinessGates: [{ conditionType: SERVICE_READY }] } : {})
    },
    status: { phase: 'Running', conditions }
  }
}
