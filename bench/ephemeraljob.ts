// A realistic EphemeralJob sync request for the benchmark: a job with parallelism 10 over `size`
// Pods its selector matches, the Pods as the API server returns them (managedFields, container
// and ephemeral-container statuses), half of them done (one in seven failed), six containers
// running, two waiting, and the rest not injected yet. Deterministic: the same size gives
// byte-identical JSON. `verify` checks the hook's answer before it is timed.
import { childlessStatus, k8sTime, podsRelatedRequest, seededUid } from './fixture-common.js'
import type { KubeObject } from '../src/k8s/types.js'

export const EPHEMERALJOB_NAME = 'pidof-check'
const NAMESPACE = 'default'
const API_VERSION = 'jobhooks.io/v1alpha1'
const T0 = Date.parse('2026-01-02T01:00:00Z')
const RUNNING = 6
const WAITING = 2
const PARALLELISM = 10

type PodState = 'succeeded' | 'failed' | 'running' | 'waiting' | 'new'

export interface EphemeralJobExpectation {
  match: number
  succeeded: number
  failed: number
  running: number
  /** Waiting containers already injected plus the Pods the hook injects now. */
  waiting: number
  /** Pods in `status.pods`. */
  chosen: number
  phase: 'Running'
}

export interface EphemeralJobFixture {
  /** The clock to give the hook: after every time in the request. */
  now: Date
  request: {
    controller: unknown
    parent: KubeObject
    children: Record<string, never>
    related: Record<string, Record<string, KubeObject>>
    finalizing: boolean
  }
  expected: EphemeralJobExpectation
  /** Throws, saying what is wrong, when `response` is not the answer this request must get. */
  verify: (response: unknown) => void
}

function stateOf (index: number, size: number): PodState {
  const done = Math.floor(size / 2)
  if (index < done) return index % 7 === 6 ? 'failed' : 'succeeded'
  if (index < done + RUNNING) return 'running'
  if (index < done + RUNNING + WAITING) return 'waiting'
  return 'new'
}

const TEMPLATE = {
  name: 'pidof-ec',
  image: 'busybox:1.36',
  imagePullPolicy: 'IfNotPresent',
  terminationMessagePolicy: 'File',
  targetContainerName: 'app',
  command: ['pidof', 'app'],
}

function pod (index: number, size: number, jobUid: string): KubeObject {
  const name = `web-7d9f8c6b5-${index.toString(36).padStart(5, '0')}`
  const created = k8sTime(T0 - 3_600_000 + index * 1000)
  const state = stateOf(index, size)
  const injectedAt = T0 + index * 2000
  const ephemeral =
    state === 'new'
      ? {}
      : {
          ephemeralContainers: [
            {
              ...TEMPLATE,
              env: [
                { name: 'ephemeraljob', value: EPHEMERALJOB_NAME },
                { name: 'EPHEMERALJOB_UID', value: jobUid },
              ],
              resources: {},
              terminationMessagePath: '/dev/termination-log',
            },
          ],
        }
  const containerState =
    state === 'succeeded' || state === 'failed'
      ? {
          terminated: {
            exitCode: state === 'failed' ? 1 : 0,
            reason: state === 'failed' ? 'Error' : 'Completed',
            startedAt: k8sTime(injectedAt + 1000),
            finishedAt: k8sTime(injectedAt + 4000),
            containerID: `containerd://${seededUid(`${name}-ec`).replace(/-/g, '')}`,
          },
        }
      : state === 'running'
        ? { running: { startedAt: k8sTime(injectedAt + 1000) } }
        : { waiting: { reason: 'ContainerCreating' } }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      generateName: 'web-7d9f8c6b5-',
      namespace: NAMESPACE,
      uid: seededUid(name),
      resourceVersion: String(10_000 + index),
      creationTimestamp: created,
      labels: { app: 'web', 'pod-template-hash': '7d9f8c6b5' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: 'web-7d9f8c6b5',
          uid: seededUid('web-7d9f8c6b5'),
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
            'f:metadata': {
              'f:generateName': {},
              'f:labels': { '.': {}, 'f:app': {}, 'f:pod-template-hash': {} },
              'f:ownerReferences': { '.': {}, [`k:{"uid":"${seededUid('web-7d9f8c6b5')}"}`]: {} },
            },
            'f:spec': {
              'f:containers': {
                'k:{"name":"app"}': {
                  '.': {},
                  'f:image': {},
                  'f:imagePullPolicy': {},
                  'f:name': {},
                  'f:ports': {},
                  'f:resources': {},
                },
              },
              'f:dnsPolicy': {},
              'f:restartPolicy': {},
            },
          },
        },
        {
          manager: 'kubelet',
          operation: 'Update',
          apiVersion: 'v1',
          time: created,
          subresource: 'status',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:status': {
              'f:conditions': {},
              'f:containerStatuses': {},
              'f:hostIP': {},
              'f:phase': {},
              'f:podIP': {},
              'f:podIPs': {},
              'f:startTime': {},
              ...(state === 'new' ? {} : { 'f:ephemeralContainerStatuses': {} }),
            },
          },
        },
        ...(state === 'new'
          ? []
          : [
              {
                manager: 'jobhooks',
                operation: 'Update',
                apiVersion: 'v1',
                time: k8sTime(injectedAt),
                subresource: 'ephemeralcontainers',
                fieldsType: 'FieldsV1',
                fieldsV1: {
                  'f:spec': {
                    'f:ephemeralContainers': {
                      '.': {},
                      'k:{"name":"pidof-ec"}': {
                        '.': {},
                        'f:command': {},
                        'f:env': {},
                        'f:image': {},
                        'f:name': {},
                        'f:targetContainerName': {},
                      },
                    },
                  },
                },
              },
            ]),
      ],
    },
    spec: {
      containers: [
        {
          name: 'app',
          image: 'registry.example.com/web:2.4.1',
          imagePullPolicy: 'IfNotPresent',
          ports: [{ containerPort: 8080, protocol: 'TCP' }],
          resources: { requests: { cpu: '100m', memory: '128Mi' } },
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
        },
      ],
      dnsPolicy: 'ClusterFirst',
      enableServiceLinks: true,
      nodeName: `node-${index % 20}`,
      restartPolicy: 'Always',
      schedulerName: 'default-scheduler',
      serviceAccountName: 'default',
      terminationGracePeriodSeconds: 30,
      ...ephemeral,
    },
    status: {
      phase: 'Running',
      hostIP: `10.0.0.${index % 20}`,
      podIP: `10.244.${Math.floor(index / 250)}.${index % 250}`,
      qosClass: 'Burstable',
      startTime: created,
      conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({
        type,
        status: 'True',
        lastProbeTime: null,
        lastTransitionTime: created,
      })),
      containerStatuses: [
        {
          name: 'app',
          image: 'registry.example.com/web:2.4.1',
          imageID: `registry.example.com/web@sha256:${seededUid('image').replace(/-/g, '')}`,
          containerID: `containerd://${seededUid(`${name}-app`).replace(/-/g, '')}`,
          ready: true,
          started: true,
          restartCount: 0,
          state: { running: { startedAt: created } },
        },
      ],
      ...(state === 'new'
        ? {}
        : {
            ephemeralContainerStatuses: [
              {
                name: 'pidof-ec',
                image: 'docker.io/library/busybox:1.36',
                imageID: '',
                lastState: {},
                ready: false,
                restartCount: 0,
                state: containerState,
              },
            ],
          }),
    },
  }
}

/** The sync request Metacontroller v2 sends for an EphemeralJob over `size` matched Pods (size ≥ 20). */
export function ephemeralJobFixture (size: number): EphemeralJobFixture {
  if (size < 20) throw new Error('the EphemeralJob bench fixture needs at least 20 Pods')
  const jobUid = seededUid(`ephemeraljob/${EPHEMERALJOB_NAME}`)
  const pods = Array.from({ length: size }, (_, i) => pod(i, size, jobUid))
  const records = pods.flatMap((p, i) => {
    const state = stateOf(i, size)
    if (state === 'new') return []
    const phase =
      state === 'succeeded' ? 'Succeeded' : state === 'failed' ? 'Failed' : state === 'running' ? 'Running' : 'Waiting'
    return [
      {
        name: p.metadata.name,
        uid: p.metadata.uid,
        phase,
        ...(state === 'succeeded' || state === 'failed' ? { completionTime: k8sTime(T0 + i * 2000 + 4000) } : {}),
        ...(state === 'failed' ? { message: 'pidof-ec exited with code 1 (Error)' } : {}),
      },
    ]
  })
  const count = (s: PodState): number => pods.filter((_, i) => stateOf(i, size) === s).length
  const parent: KubeObject = {
    apiVersion: API_VERSION,
    kind: 'EphemeralJob',
    metadata: {
      name: EPHEMERALJOB_NAME,
      namespace: NAMESPACE,
      uid: jobUid,
      generation: 1,
      resourceVersion: '9001',
      creationTimestamp: k8sTime(T0 - 1000),
      managedFields: [
        {
          manager: 'kubectl-client-side-apply',
          operation: 'Update',
          apiVersion: API_VERSION,
          time: k8sTime(T0 - 1000),
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:spec': { '.': {}, 'f:parallelism': {}, 'f:selector': {}, 'f:template': {} } },
        },
      ],
    },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      parallelism: PARALLELISM,
      template: { ephemeralContainers: [TEMPLATE] },
    },
    status: {
      phase: 'Running',
      match: size,
      succeeded: count('succeeded'),
      failed: count('failed'),
      running: RUNNING,
      waiting: WAITING,
      startTime: k8sTime(T0),
      pods: records,
      conditions: [
        {
          type: 'Valid',
          status: 'True',
          reason: 'SpecValid',
          message: 'the spec is valid',
          lastTransitionTime: k8sTime(T0),
        },
      ],
      observedGeneration: 1,
    },
  }
  const controller = {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind: 'CompositeController',
    metadata: { name: 'ephemeraljob-controller', uid: seededUid('ephemeraljob-controller'), generation: 1 },
    spec: {
      generateSelector: true,
      parentResource: { apiVersion: API_VERSION, resource: 'ephemeraljobs' },
      childResources: [],
      hooks: {
        sync: {
          version: 'v2',
          webhook: {
            service: { name: 'jobhooks', namespace: 'jobhooks-system', port: 80 },
            path: '/hooks/ephemeraljob/sync',
            timeout: '10s',
          },
        },
      },
    },
  }
  const newSlots = PARALLELISM - RUNNING - WAITING
  const expected: EphemeralJobExpectation = {
    match: size,
    succeeded: count('succeeded'),
    failed: count('failed'),
    running: RUNNING,
    waiting: WAITING + newSlots,
    chosen: records.length + newSlots,
    phase: 'Running',
  }
  const request = podsRelatedRequest(controller, parent, pods)
  return {
    now: new Date(T0 + size * 2000 + 60_000),
    request,
    expected,
    verify: (response) => verify(response, expected),
  }
}

/** Checks a sync answer against what the fixture expects; throws with the first difference. */
export function verify (response: unknown, expected: EphemeralJobExpectation): void {
  const status = childlessStatus(response, 'EphemeralJob', expected, [
    'phase',
    'match',
    'succeeded',
    'failed',
    'running',
    'waiting',
  ] as const)
  const chosen = Array.isArray(status.pods) ? status.pods.length : -1
  if (chosen !== expected.chosen) throw new Error(`status.pods has ${chosen} Pods, expected ${expected.chosen}`)
}
