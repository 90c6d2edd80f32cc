// A realistic CollaSet sync request for the benchmark, and the builder of the CollaSet unit-test
// fixtures: a CollaSet with `size` Pods as the API server returns them (managedFields,
// ownerReferences, defaulted spec, conditions and container statuses). Pods are named as the hook
// names them. In the bench request every Pod runs the updated template and is Ready, except that
// the last two have ready containers but no service-ready condition yet (two SetPodCondition
// effects owed) and the first one is labelled to-replace with its replacement still Pending.
// Deterministic: the same size gives byte-identical JSON. `verify` checks the hook's answer.
import { createHash } from 'node:crypto'
import { k8sTime, seededUid } from './fixture-common.js'
import type { KubeObject } from '../src/k8s/types.js'
import { PodNamer, REVISION_LABEL, templateRevision } from '../src/controllers/collaset/pods.js'
import { REPLACE_ORIGIN_LABEL, SERVICE_READY, TO_REPLACE_LABEL } from '../src/k8s/labels.js'

export const COLLASET_NAME = 'web'
const NAMESPACE = 'default'
const API_VERSION = 'jobhooks.io/v1alpha1'
const T0 = Date.parse('2026-01-02T01:00:00Z')

/** How one Pod looks: its kubelet state and its labels. */
export interface PodShape {
  /** `pending`: scheduled, containers not ready; `containers-ready`: no service-ready yet; `ready`: Ready. */
  state: 'pending' | 'containers-ready' | 'ready' | 'failed'
  toReplace?: boolean
  /** The name of the Pod it replaces. */
  origin?: string
  /** Its revision label; the parent's current one when unset. */
  revision?: string
  /** Terminating (deletionTimestamp set). */
  terminating?: boolean
}

export interface CollaSetShape {
  name?: string
  replicas: number
  image?: string
  /** Seconds after T0 the Pods were created, one per Pod (default: two seconds apart). */
  pods: PodShape[]
  /** The parent's previous status; the hook's steady status when unset. */
  status?: Record<string, unknown>
}

export function collaSetParent (name: string, replicas: number, image: string): KubeObject {
  return {
    apiVersion: API_VERSION,
    kind: 'CollaSet',
    metadata: {
      name,
      namespace: NAMESPACE,
      uid: seededUid(`collaset/${name}`),
      generation: 1,
      resourceVersion: '7001',
      creationTimestamp: k8sTime(T0 - 1000),
      annotations: {
        'kubectl.kubernetes.io/last-applied-configuration':
          `{"apiVersion":"${API_VERSION}","kind":"CollaSet",` +
          `"metadata":{"name":"${name}","namespace":"${NAMESPACE}"}}\n`,
      },
      managedFields: [
        {
          manager: 'kubectl-client-side-apply',
          operation: 'Update',
          apiVersion: API_VERSION,
          time: k8sTime(T0 - 1000),
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:spec': { '.': {}, 'f:replicas': {}, 'f:selector': {}, 'f:template': {} } },
        },
      ],
    },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'app', image, ports: [{ containerPort: 80, protocol: 'TCP' }] }] },
      },
    },
  }
}

/** The names the hook gives a CollaSet's first `count` Pods. */
export function collaSetPodNames (parent: KubeObject, count: number): string[] {
  const namer = new PodNamer(
    `${parent.metadata.namespace ?? ''}/${parent.metadata.name}/${parent.metadata.uid ?? ''}`,
    parent.metadata.name,
    []
  )
  return Array.from({ length: count }, () => namer.next())
}

function condition (
  type: string,
  status: 'True' | 'False',
  at: number,
  extra: Record<string, unknown> = {}
): Record<string, unknown> {
  return { type, status, lastProbeTime: null, lastTransitionTime: k8sTime(at), ...extra }
}

/** A CollaSet Pod as the API server returns it. */
export function collaSetPod (
  parent: KubeObject,
  name: string,
  index: number,
  shape: PodShape,
  revision: string
): KubeObject {
  const created = T0 + index * 2000
  const template = (parent.spec as any).template
  const labels: Record<string, string> = {
    ...template.metadata.labels,
    [REVISION_LABEL]: shape.revision ?? revision,
    'controller-uid': parent.metadata.uid as string,
  }
  if (shape.toReplace === true) labels[TO_REPLACE_LABEL] = 'true'
  if (shape.origin !== undefined) labels[REPLACE_ORIGIN_LABEL] = shape.origin
  const containers: Array<Record<string, unknown>> = (template.spec.containers as Array<Record<string, unknown>>).map(
    (c) => ({
      ...c,
      resources: {},
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
      imagePullPolicy: 'IfNotPresent',
      volumeMounts: [
        { name: 'kube-api-access-x7k2p', readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
      ],
    })
  )
  const running = shape.state !== 'pending'
  const containersReady = shape.state === 'containers-ready' || shape.state === 'ready'
  const conditions = [
    condition('PodReadyToStartContainers', running ? 'True' : 'False', created + 1000),
    condition('Initialized', 'True', created + 1000),
    condition(
      'Ready',
      shape.state === 'ready' ? 'True' : 'False',
      created + 3000,
      shape.state === 'ready'
        ? {}
        : {
            reason: 'ReadinessGatesNotReady',
            message: `corresponding condition of pod readiness gate "${SERVICE_READY}" does not exist.`,
          }
    ),
    condition('ContainersReady', containersReady ? 'True' : 'False', created + 2000),
    condition('PodScheduled', 'True', created),
  ]
  if (shape.state === 'ready') {
    conditions.push({
      type: SERVICE_READY,
      status: 'True',
      reason: 'ContainersReady',
      message: 'the containers of the Pod are ready',
    })
  }
  const pod: KubeObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: NAMESPACE,
      uid: seededUid(`pod/${name}`),
      resourceVersion: String(8000 + index),
      creationTimestamp: k8sTime(created),
      labels,
      annotations: {
        'metacontroller.k8s.io/last-applied-configuration': JSON.stringify({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name, namespace: NAMESPACE, labels },
        }),
      },
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: 'CollaSet',
          name: parent.metadata.name,
          uid: parent.metadata.uid as string,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      managedFields: [
        {
          manager: 'metacontroller',
          operation: 'Update',
          apiVersion: 'v1',
          time: k8sTime(created),
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:labels': {}, 'f:ownerReferences': {} },
            'f:spec': { 'f:containers': {}, 'f:readinessGates': {} },
          },
        },
        {
          manager: 'kubelet',
          operation: 'Update',
          apiVersion: 'v1',
          time: k8sTime(created + 3000),
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:status': { 'f:conditions': {}, 'f:containerStatuses': {}, 'f:phase': {} } },
          subresource: 'status',
        },
      ],
    },
    spec: {
      volumes: [
        {
          name: 'kube-api-access-x7k2p',
          projected: {
            sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }],
            defaultMode: 420,
          },
        },
      ],
      containers,
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      serviceAccount: 'default',
      nodeName: `node-${index % 3}`,
      securityContext: {},
      schedulerName: 'default-scheduler',
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
      readinessGates: [{ conditionType: SERVICE_READY }],
    },
    status: {
      phase: shape.state === 'failed' ? 'Failed' : running ? 'Running' : 'Pending',
      conditions,
      hostIP: `10.0.0.${(index % 3) + 1}`,
      podIP: `10.244.${Math.floor(index / 250)}.${(index % 250) + 2}`,
      startTime: k8sTime(created),
      containerStatuses: containers.map((c) => ({
        name: c.name,
        state: running
          ? { running: { startedAt: k8sTime(created + 2000) } }
          : { waiting: { reason: 'ContainerCreating' } },
        lastState: {},
        ready: containersReady,
        restartCount: 0,
        image: c.image,
        imageID: running
          ? `docker.io/library/nginx@sha256:${createHash('sha256').update(String(c.image)).digest('hex')}`
          : '',
        started: running,
      })),
      qosClass: 'BestEffort',
    },
  }
  if (shape.terminating === true) {
    pod.metadata.deletionTimestamp = k8sTime(created + 60_000)
    pod.metadata.deletionGracePeriodSeconds = 30
  }
  return pod
}

/** A sync request for a CollaSet of this shape, keyed as a v1 or v2 hook gets it. */
export function collaSetRequest (
  shape: CollaSetShape,
  version: 'v1' | 'v2' = 'v2'
): {
    controller: unknown
    parent: KubeObject
    children: Record<string, Record<string, KubeObject>>
    related: Record<string, never>
    finalizing: boolean
  } {
  const name = shape.name ?? COLLASET_NAME
  const parent = collaSetParent(name, shape.replicas, shape.image ?? 'nginx:1.27')
  const revision = templateRevision(name, (parent.spec as any).template)
  const names = collaSetPodNames(parent, shape.pods.length)
  const pods = shape.pods.map((p, i) =>
    collaSetPod(
      parent,
      names[i] as string,
      i,
      { ...p, ...(p.origin !== undefined ? { origin: resolve(p.origin, names) } : {}) },
      revision
    )
  )
  parent.status = shape.status ?? {
    replicas: shape.replicas,
    readyReplicas: shape.replicas,
    availableReplicas: shape.replicas,
    updatedReplicas: shape.replicas,
    updatedReadyReplicas: shape.replicas,
    updatedAvailableReplicas: shape.replicas,
    currentRevision: revision,
    updatedRevision: revision,
    selector: `app=${name}`,
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
  }
  const controller = {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind: 'CompositeController',
    metadata: { name: 'collaset-controller', uid: seededUid('collaset-controller'), generation: 1 },
    spec: {
      generateSelector: true,
      parentResource: { apiVersion: API_VERSION, resource: 'collasets' },
      childResources: [{ apiVersion: 'v1', resource: 'pods', updateStrategy: { method: 'OnDelete' } }],
      hooks: {
        sync: {
          version,
          webhook: {
            service: { name: 'jobhooks', namespace: 'jobhooks-system', port: 80 },
            path: '/hooks/collaset/sync',
            timeout: '10s',
          },
        },
      },
    },
  }
  const key = (p: KubeObject): string => (version === 'v2' ? `${NAMESPACE}/${p.metadata.name}` : p.metadata.name)
  return JSON.parse(
    JSON.stringify({
      controller,
      parent,
      children: { 'Pod.v1': Object.fromEntries(pods.map((p) => [key(p), p])) },
      related: {},
      finalizing: false,
    })
  )
}

/** `#3` in a shape's origin means the name of the shape's fourth Pod. */
function resolve (origin: string, names: string[]): string {
  return origin.startsWith('#') ? (names[Number(origin.slice(1))] as string) : origin
}

export interface CollaSetExpectation {
  children: string[]
  effects: string[]
  replicas: number
  readyReplicas: number
}

export interface CollaSetFixture {
  now: Date
  request: ReturnType<typeof collaSetRequest>
  expected: CollaSetExpectation
  /** Throws, saying what is wrong, when `response` is not the answer this request must get. */
  verify: (response: unknown) => void
}

export function collaSetFixture (size: number): CollaSetFixture {
  if (size < 4) throw new Error('the CollaSet bench fixture needs at least 4 Pods')
  const pods: PodShape[] = Array.from({ length: size }, (_, i) => ({
    state: i >= size - 2 ? ('containers-ready' as const) : ('ready' as const),
    ...(i === 0 ? { toReplace: true } : {}),
  }))
  pods.push({ state: 'pending', origin: '#0' })
  const request = collaSetRequest({ replicas: size, pods })
  const all = Object.values(request.children['Pod.v1'] ?? {})
  const expected: CollaSetExpectation = {
    children: all.map((p) => p.metadata.name).sort(),
    effects: all
      .slice(size - 2, size)
      .map((p) => p.metadata.name)
      .sort(),
    replicas: size + 1,
    readyReplicas: size - 2,
  }
  return {
    now: new Date(T0 + size * 2000 + 60_000),
    request,
    expected,
    verify: (response) => verify(response, expected),
  }
}

/** Checks a sync answer (the response Metacontroller gets) against the expectation. */
export function verify (response: unknown, expected: CollaSetExpectation): void {
  const answer = response as { status?: Record<string, unknown>; children?: Array<{ metadata?: { name?: string } }> }
  const status = answer?.status
  if (status === undefined || !Array.isArray(answer.children)) {
    throw new Error('not a sync answer: no status or children')
  }
  const names = answer.children.map((c) => c.metadata?.name ?? '').sort()
  if (names.length !== expected.children.length) {
    throw new Error(`${names.length} Pods, expected ${expected.children.length}`)
  }
  const missing = expected.children.find((n, i) => names[i] !== n)
  if (missing !== undefined) throw new Error(`Pod ${missing} is missing`)
  for (const key of ['replicas', 'readyReplicas'] as const) {
    if (status[key] !== expected[key]) {
      throw new Error(`status.${key} is ${JSON.stringify(status[key])}, expected ${expected[key]}`)
    }
  }
}
