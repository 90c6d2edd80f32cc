// A realistic OperationJob sync request for the benchmark: an Exec job over `size` target Pods,
// as the API server returns them (managedFields, container and ephemeral-container statuses).
// Half the targets are done (one in seven failed), fifty are processing (their containers run),
// the partition lets ten more start now, and the rest wait behind it. Deterministic: the same size
// gives byte-identical JSON. `verify` checks the hook's answer before it is timed.
import { childlessStatus, k8sTime, podsRelatedRequest, seededUid } from './fixture-common.js'
import type { KubeObject } from '../src/k8s/types.js'

export const OPERATIONJOB_NAME = 'pidof-ops'
const NAMESPACE = 'default'
const API_VERSION = 'jobhooks.io/v1alpha1'
const CONTAINER = 'opj-pidof-ops'
const T0 = Date.parse('2026-01-02T01:00:00Z')
const PROCESSING = 50
const STARTING = 10

type TargetState = 'succeeded' | 'failed' | 'processing' | 'starting' | 'pending'

export interface OperationJobExpectation {
  progress: 'Processing'
  totalPodCount: number
  succeededPodCount: number
  failedPodCount: number
  /** Targets Processing after this sync: the fifty running and the ten started now. */
  processing: number
  pending: number
}

export interface OperationJobFixture {
  /** The clock to give the hook: after every time in the request, before any deadline. */
  now: Date
  request: {
    controller: unknown
    parent: KubeObject
    children: Record<string, never>
    related: Record<string, Record<string, KubeObject>>
    finalizing: boolean
  }
  expected: OperationJobExpectation
  /** Throws, saying what is wrong, when `response` is not the answer this request must get. */
  verify: (response: unknown) => void
}

function stateOf (index: number, size: number): TargetState {
  const done = Math.floor(size / 2)
  if (index < done) return index % 7 === 6 ? 'failed' : 'succeeded'
  if (index < done + PROCESSING) return 'processing'
  if (index < done + PROCESSING + STARTING) return 'starting'
  return 'pending'
}

function podName (i: number): string {
  return `web-${String(i).padStart(5, '0')}`
}

function pod (i: number, size: number, jobUid: string): KubeObject {
  const name = podName(i)
  const state = stateOf(i, size)
  const created = k8sTime(T0 - 3_600_000)
  const started = k8sTime(T0 + i * 100)
  const injected = state === 'succeeded' || state === 'failed' || state === 'processing'
  const containerState =
    state === 'processing'
      ? { running: { startedAt: started } }
      : {
          terminated: {
            exitCode: state === 'failed' ? 1 : 0,
            reason: state === 'failed' ? 'Error' : 'Completed',
            startedAt: started,
            finishedAt: k8sTime(T0 + i * 100 + 4000),
            containerID: `containerd://${seededUid(`${name}-ec`).replace(/-/g, '')}`,
          },
        }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: NAMESPACE,
      uid: seededUid(`pod/${name}`),
      resourceVersion: String(10_000 + i),
      creationTimestamp: created,
      labels: { app: 'web', 'pod-template-hash': '7c9f8d6b5d' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: 'web-7c9f8d6b5d',
          uid: seededUid('replicaset/web'),
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      managedFields: [
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          apiVersion: 'v1',
          time: created,
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
            'f:spec': { 'f:containers': { 'k:{"name":"app"}': { '.': {}, 'f:image': {}, 'f:name': {} } } },
          },
        },
      ],
    },
    spec: {
      containers: [
        {
          name: 'app',
          image: 'registry.example.com/web:2.4.1',
          ports: [{ containerPort: 8080, protocol: 'TCP' }],
          resources: { requests: { cpu: '100m', memory: '128Mi' } },
        },
      ],
      nodeName: `node-${i % 50}`,
      ...(injected
        ? {
            ephemeralContainers: [
              {
                name: CONTAINER,
                image: 'busybox:1.36',
                command: ['sh', '-c', 'pidof app'],
                env: [
                  { name: 'OPERATIONJOB', value: OPERATIONJOB_NAME },
                  { name: 'OPERATIONJOB_UID', value: jobUid },
                ],
                targetContainerName: 'app',
                terminationMessagePolicy: 'FallbackToLogsOnError',
              },
            ],
          }
        : {}),
    },
    status: {
      phase: 'Running',
      podIP: `10.0.${Math.floor(i / 250)}.${i % 250}`,
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: created }],
      containerStatuses: [
        {
          name: 'app',
          image: 'registry.example.com/web:2.4.1',
          ready: true,
          started: true,
          restartCount: 0,
          state: { running: { startedAt: created } },
        },
      ],
      ...(injected
        ? {
            ephemeralContainerStatuses: [
              {
                name: CONTAINER,
                image: 'docker.io/library/busybox:1.36',
                imageID: '',
                lastState: {},
                ready: false,
                restartCount: 0,
                state: containerState,
              },
            ],
          }
        : {}),
    },
  }
}

/** The sync request Metacontroller v2 sends for an Exec OperationJob over `size` targets (size ≥ 100). */
export function operationJobFixture (size: number): OperationJobFixture {
  if (size < 100) throw new Error('the OperationJob bench fixture needs at least 100 targets')
  const jobUid = seededUid(`operationjob/${OPERATIONJOB_NAME}`)
  const pods = Array.from({ length: size }, (_, i) => pod(i, size, jobUid))
  const details = pods.map((p, i) => {
    const state = stateOf(i, size)
    const name = p.metadata.name
    if (state === 'pending' || state === 'starting') return { name, progress: 'Pending' }
    const extraInfo: Record<string, string> = { ContainerName: CONTAINER, PodUID: p.metadata.uid as string }
    const startTime = k8sTime(T0 + i * 100)
    if (state === 'processing') return { name, progress: 'Processing', startTime, extraInfo }
    if (state === 'succeeded') {
      return { name, progress: 'Succeeded', startTime, endTime: k8sTime(T0 + i * 100 + 5000), extraInfo }
    }
    return {
      name,
      progress: 'Failed',
      startTime,
      endTime: k8sTime(T0 + i * 100 + 5000),
      extraInfo: { ...extraInfo, Released: 'true' },
      error: { reason: 'ExitCode', message: `${CONTAINER} exited with code 1 (Error)` },
    }
  })
  const count = (s: TargetState): number => pods.filter((_, i) => stateOf(i, size) === s).length
  const partition = Math.floor(size / 2) + PROCESSING + STARTING
  const parent: KubeObject = {
    apiVersion: API_VERSION,
    kind: 'OperationJob',
    metadata: {
      name: OPERATIONJOB_NAME,
      namespace: NAMESPACE,
      uid: jobUid,
      generation: 2,
      resourceVersion: '9001',
      creationTimestamp: k8sTime(T0 - 1000),
      finalizers: ['metacontroller.io/compositecontroller-operationjob-controller'],
      managedFields: [
        {
          manager: 'kubectl-client-side-apply',
          operation: 'Update',
          apiVersion: API_VERSION,
          time: k8sTime(T0 - 1000),
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:spec': { '.': {}, 'f:action': {}, 'f:exec': {}, 'f:partition': {}, 'f:targets': {} } },
        },
      ],
    },
    spec: {
      action: 'Exec',
      partition,
      activeDeadlineSeconds: 10800,
      TTLSecondsAfterFinished: 1800,
      targets: pods.map((p) => ({ name: p.metadata.name })),
      exec: { image: 'busybox:1.36', command: ['sh', '-c', 'pidof app'] },
    },
    status: {
      observedGeneration: 1,
      progress: 'Processing',
      startTime: k8sTime(T0),
      totalPodCount: size,
      succeededPodCount: count('succeeded'),
      failedPodCount: count('failed'),
      targetDetails: details,
      conditions: [
        {
          type: 'Valid',
          status: 'True',
          reason: 'SpecValid',
          message: 'the spec is valid',
          lastTransitionTime: k8sTime(T0),
        },
      ],
    },
  }
  const controller = {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind: 'CompositeController',
    metadata: { name: 'operationjob-controller', uid: seededUid('operationjob-controller'), generation: 1 },
    spec: {
      generateSelector: true,
      parentResource: { apiVersion: API_VERSION, resource: 'operationjobs' },
      childResources: [],
      hooks: {
        sync: {
          version: 'v2',
          webhook: {
            service: { name: 'jobhooks', namespace: 'jobhooks-system', port: 80 },
            path: '/hooks/operationjob/sync',
            timeout: '10s',
          },
        },
      },
    },
  }
  const expected: OperationJobExpectation = {
    progress: 'Processing',
    totalPodCount: size,
    succeededPodCount: count('succeeded'),
    failedPodCount: count('failed'),
    processing: PROCESSING + STARTING,
    pending: count('pending'),
  }
  const request = podsRelatedRequest(controller, parent, pods)
  return {
    now: new Date(T0 + size * 100 + 60_000),
    request,
    expected,
    verify: (response) => verify(response, expected),
  }
}

/** Checks a sync answer against what the fixture expects; throws with the first difference. */
export function verify (response: unknown, expected: OperationJobExpectation): void {
  const status = childlessStatus(response, 'OperationJob', expected, [
    'progress',
    'totalPodCount',
    'succeededPodCount',
    'failedPodCount',
  ] as const)
  const details = Array.isArray(status.targetDetails) ? (status.targetDetails as Array<{ progress?: string }>) : []
  if (details.length !== expected.totalPodCount) {
    throw new Error(`status.targetDetails has ${details.length} entries, expected ${expected.totalPodCount}`)
  }
  const processing = details.filter((d) => d.progress === 'Processing').length
  const pending = details.filter((d) => d.progress === 'Pending').length
  if (processing !== expected.processing) {
    throw new Error(`${processing} targets are Processing, expected ${expected.processing}`)
  }
  if (pending !== expected.pending) throw new Error(`${pending} targets are Pending, expected ${expected.pending}`)
}
