// A realistic DaemonJob sync request for the benchmark: a cluster of N Nodes as the API server
// returns them (labels, taints, status with conditions and images, managedFields), a DaemonJob
// midway through its run, and its observed Jobs with defaulted specs, Metacontroller's
// last-applied annotation and Job controller status. Deterministic: the same N gives
// byte-identical JSON. `verify` checks an answer before it is timed.
//
// Of the nodes: every 10th is excluded, every 20th (from 5) cordoned, every 20th (from 15)
// tainted with an untolerated NoSchedule taint; every 7th carries a taint the template tolerates.
// Of the eligible ones, by position: 1 in 25 failed, about 1 in 6 joined since the last sync and
// gets its Job now, about half succeeded (a few had their Job deleted by its TTL and are known only
// from the status), and the rest run.
import type { KubeObject } from '../src/k8s/types.js'
import type { SyncResponse } from '../src/protocol/hooks.js'
import { buildNodeJob } from '../src/controllers/daemonjob/job.js'
import { parseDaemonJobSpec } from '../src/controllers/daemonjob/spec.js'
import { fixtureUid, k8sTime } from './fixture-common.js'
import { T0, node, nodeName, stateOf, type NodeState } from './daemonjob-nodes.js'

export const DAEMONJOB_NAME = 'node-audit'
export const DAEMONJOB_NAMESPACE = 'ops'
const API_VERSION = 'jobhooks.io/v1alpha1'

export interface DaemonJobExpectation {
  nodes: number
  /** Jobs in the request: every one must come back as it is. */
  observedJobs: number
  /** Nodes without a Job that get one now. */
  toCreate: string[]
  desired: number
  active: number
  succeeded: number
  failed: number
  phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed'
}

export interface DaemonJobFixture {
  /** The clock to give the hook: after every time in the request. */
  now: Date
  states: Map<string, NodeState>
  request: {
    controller: Record<string, unknown>
    parent: KubeObject
    children: Record<string, Record<string, KubeObject>>
    related: Record<string, Record<string, KubeObject>>
    finalizing: boolean
  }
  expected: DaemonJobExpectation
  /** Throws, saying what is wrong, unless `response` is the answer this request must get. */
  verify: (response: unknown) => void
}

function daemonJobSpec (excluded: string[]): Record<string, unknown> {
  return {
    backoffLimit: 1,
    activeDeadlineSeconds: 1800,
    ttlSecondsAfterFinished: 86400,
    excludeNodeList: excluded.join(', '),
    globalParams: {
      labels: { team: 'sre', 'audit.example.com/run': '2026-01-02' },
      annotations: { 'audit.example.com/ticket': 'OPS-4711' },
      env: [
        { name: 'AUDIT_RUN', value: '2026-01-02' },
        { name: 'REPORT_URL', value: 'https://audit.example.com/api/v1/reports' },
      ],
    },
    template: {
      metadata: { labels: { 'app.kubernetes.io/name': 'node-audit' } },
      spec: {
        tolerations: [{ key: 'workload', operator: 'Equal', value: 'batch', effect: 'NoSchedule' }],
        containers: [
          {
            name: 'audit',
            image: 'registry.example.com/sre/node-audit:3.2.1',
            args: ['--report', '$(REPORT_URL)', '--run', '$(AUDIT_RUN)'],
            resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
            volumeMounts: [{ name: 'host-root', mountPath: '/host', readOnly: true }],
          },
        ],
        volumes: [{ name: 'host-root', hostPath: { path: '/' } }],
      },
    },
  }
}

/** A node's Job as the API server returns it: what the hook asked for, defaulted, with status. */
function observedJob (desired: KubeObject, i: number, state: NodeState, parentUid: string): KubeObject {
  const job = JSON.parse(JSON.stringify(desired)) as KubeObject & { spec: any }
  const uid = fixtureUid(`job/${DAEMONJOB_NAMESPACE}/${job.metadata.name}`)
  const created = T0 + (i % 60) * 1000
  const started = created + 1000
  const finished = started + (45 + (i % 30)) * 1000
  job.metadata = {
    ...job.metadata,
    uid,
    resourceVersion: String(2_000_000 + i * 7),
    generation: 1,
    creationTimestamp: k8sTime(created),
    labels: { ...job.metadata.labels, 'controller-uid': parentUid },
    annotations: {
      ...job.metadata.annotations,
      'metacontroller.k8s.io/last-applied-configuration': JSON.stringify(desired),
    },
    ownerReferences: [
      {
        apiVersion: API_VERSION,
        kind: 'DaemonJob',
        name: DAEMONJOB_NAME,
        uid: parentUid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ],
    managedFields: [
      {
        manager: 'metacontroller',
        operation: 'Update',
        apiVersion: 'batch/v1',
        time: k8sTime(created),
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:annotations': {}, 'f:labels': {}, 'f:ownerReferences': {} },
          'f:spec': {
            'f:activeDeadlineSeconds': {},
            'f:backoffLimit': {},
            'f:template': {},
            'f:ttlSecondsAfterFinished': {},
          },
        },
      },
      {
        manager: 'kube-controller-manager',
        operation: 'Update',
        apiVersion: 'batch/v1',
        time: k8sTime(state === 'running' ? started : finished),
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:status': { 'f:conditions': {}, 'f:startTime': {}, 'f:terminating': {} } },
        subresource: 'status',
      },
    ],
  }
  const spec = job.spec
  Object.assign(spec, {
    parallelism: 1,
    completions: 1,
    completionMode: 'NonIndexed',
    suspend: false,
    podReplacementPolicy: 'TerminatingOrFailed',
    selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } },
  })
  spec.template.metadata.labels = {
    ...spec.template.metadata.labels,
    'batch.kubernetes.io/controller-uid': uid,
    'batch.kubernetes.io/job-name': job.metadata.name,
    'controller-uid': uid,
    'job-name': job.metadata.name,
  }
  Object.assign(spec.template.spec, {
    terminationGracePeriodSeconds: 30,
    dnsPolicy: 'ClusterFirst',
    securityContext: {},
    schedulerName: 'default-scheduler',
  })
  for (const c of spec.template.spec.containers) {
    Object.assign(c, {
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
      imagePullPolicy: 'IfNotPresent',
    })
  }
  const status: Record<string, unknown> = { startTime: k8sTime(started), terminating: 0, uncountedTerminatedPods: {} }
  const end = k8sTime(finished)
  if (state === 'running') Object.assign(status, { active: 1, ready: 1 })
  if (state === 'succeeded') {
    const message = 'Reached expected number of succeeded pods'
    Object.assign(status, {
      ready: 0,
      succeeded: 1,
      completionTime: end,
      conditions: [
        {
          type: 'SuccessCriteriaMet',
          status: 'True',
          lastProbeTime: end,
          lastTransitionTime: end,
          reason: 'CompletionsReached',
          message,
        },
        {
          type: 'Complete',
          status: 'True',
          lastProbeTime: end,
          lastTransitionTime: end,
          reason: 'CompletionsReached',
          message,
        },
      ],
    })
  }
  if (state === 'failed') {
    const message = 'Job has reached the specified backoff limit'
    Object.assign(status, {
      ready: 0,
      failed: 2,
      conditions: [
        {
          type: 'FailureTarget',
          status: 'True',
          lastProbeTime: end,
          lastTransitionTime: end,
          reason: 'BackoffLimitExceeded',
          message,
        },
        {
          type: 'Failed',
          status: 'True',
          lastProbeTime: end,
          lastTransitionTime: end,
          reason: 'BackoffLimitExceeded',
          message,
        },
      ],
    })
  }
  job.status = status
  return job
}

/** The sync request Metacontroller (hooks v2) sends for a DaemonJob over `size` Nodes. */
export function daemonJobFixture (size: number): DaemonJobFixture {
  if (!Number.isInteger(size) || size < 1) throw new Error(`a DaemonJob fixture needs at least one node, not ${size}`)
  const names = Array.from({ length: size }, (_, i) => nodeName(i, size))
  const states = new Map(names.map((name, i) => [name, stateOf(i)]))
  const spec = daemonJobSpec(names.filter((n) => states.get(n) === 'excluded'))
  const parentUid = fixtureUid(`daemonjob/${DAEMONJOB_NAMESPACE}/${DAEMONJOB_NAME}`)
  const created = k8sTime(T0 - 2000)
  const parent: KubeObject = {
    apiVersion: API_VERSION,
    kind: 'DaemonJob',
    metadata: {
      name: DAEMONJOB_NAME,
      namespace: DAEMONJOB_NAMESPACE,
      uid: parentUid,
      resourceVersion: '1999870',
      generation: 1,
      creationTimestamp: created,
      annotations: {
        'kubectl.kubernetes.io/last-applied-configuration':
          JSON.stringify({
            apiVersion: API_VERSION,
            kind: 'DaemonJob',
            metadata: { annotations: {}, name: DAEMONJOB_NAME, namespace: DAEMONJOB_NAMESPACE },
            spec,
          }) + '\n',
      },
      managedFields: [
        {
          manager: 'kubectl-client-side-apply',
          operation: 'Update',
          apiVersion: API_VERSION,
          time: created,
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:spec': { '.': {}, 'f:excludeNodeList': {}, 'f:globalParams': {}, 'f:template': {} } },
        },
        {
          manager: 'metacontroller',
          operation: 'Update',
          apiVersion: API_VERSION,
          time: k8sTime(T0 + 60_000),
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:status': { '.': {}, 'f:conditions': {}, 'f:phase': {} } },
          subresource: 'status',
        },
      ],
    },
    spec,
  }
  const parsed = parseDaemonJobSpec(parent)
  if (!parsed.ok) throw new Error(`the bench DaemonJob is invalid: ${parsed.problems.join('; ')}`)

  const jobs: Record<string, KubeObject> = {}
  const nodes: Record<string, KubeObject> = {}
  const succeededNodes: string[] = []
  const failedNodes: Array<Record<string, string>> = []
  const toCreate: string[] = []
  names.forEach((name, i) => {
    const state = states.get(name) as NodeState
    nodes[name] = node(name, i, state)
    const desired = buildNodeJob(parent, name, parsed.value, undefined) as KubeObject
    if (state === 'succeeded' || state === 'running' || state === 'failed') {
      const job = observedJob(desired, i, state, parentUid)
      jobs[`${DAEMONJOB_NAMESPACE}/${job.metadata.name}`] = job
    }
    // The previous sync saw the Jobs that have finished since as still running.
    if (state === 'ttl-deleted') succeededNodes.push(name)
    if (state === 'new') toCreate.push(desired.metadata.name)
  })
  const count = (wanted: NodeState[]): number => [...states.values()].filter((s) => wanted.includes(s)).length
  parent.status = {
    observedGeneration: 1,
    phase: 'Running',
    desired: count(['succeeded', 'ttl-deleted', 'running', 'failed']),
    active: count(['succeeded', 'running', 'failed']),
    succeeded: succeededNodes.length,
    failed: failedNodes.length,
    startTime: k8sTime(T0),
    succeededNodes,
    failedNodes,
    conditions: [
      {
        type: 'Valid',
        status: 'True',
        reason: 'SpecValid',
        message: 'the spec is valid',
        lastTransitionTime: k8sTime(T0),
      },
    ],
  }
  const expected: DaemonJobExpectation = {
    nodes: size,
    observedJobs: Object.keys(jobs).length,
    toCreate,
    desired: count(['succeeded', 'ttl-deleted', 'running', 'failed', 'new']),
    active: count(['running', 'new']),
    succeeded: count(['succeeded', 'ttl-deleted']),
    failed: count(['failed']),
    phase: 'Running',
  }
  if (expected.desired === 0) expected.phase = 'Pending'
  else if (expected.active === 0) expected.phase = expected.failed > 0 ? 'Failed' : 'Succeeded'
  const request = JSON.parse(
    JSON.stringify({
      controller: {
        apiVersion: 'metacontroller.k8s.io/v1alpha1',
        kind: 'CompositeController',
        metadata: {
          name: 'daemonjob-controller',
          uid: fixtureUid('compositecontroller/daemonjob-controller'),
          resourceVersion: '1043',
          generation: 1,
        },
        spec: {
          generateSelector: true,
          parentResource: { apiVersion: API_VERSION, resource: 'daemonjobs' },
          childResources: [
            { apiVersion: 'batch/v1', resource: 'jobs', updateStrategy: { method: 'OnDelete' } },
            { apiVersion: 'v1', resource: 'configmaps', updateStrategy: { method: 'OnDelete' } },
          ],
          hooks: {
            sync: {
              version: 'v2',
              webhook: { url: 'http://jobhooks.jobhooks-system.svc/hooks/daemonjob/sync', timeout: '10s' },
            },
            customize: {
              version: 'v2',
              webhook: { url: 'http://jobhooks.jobhooks-system.svc/hooks/daemonjob/customize', timeout: '10s' },
            },
          },
        },
        status: {},
      },
      parent,
      children: { 'Job.batch/v1': jobs, 'ConfigMap.v1': {} },
      related: { 'Node.v1': nodes },
      finalizing: false,
    })
  ) as DaemonJobFixture['request']
  const fixture: DaemonJobFixture = {
    now: new Date(T0 + 3_600_000),
    states,
    request,
    expected,
    verify: (response) => verify(response, fixture),
  }
  return fixture
}

/** The request as the bytes Metacontroller sends, and its fixture. */
export function daemonJobRequestBody (size: number): { body: string; fixture: DaemonJobFixture } {
  const fixture = daemonJobFixture(size)
  return { body: JSON.stringify(fixture.request), fixture }
}

/** Throws, saying what is wrong, unless `response` is the answer `fixture`'s request must get. */
export function verify (response: unknown, fixture: DaemonJobFixture): void {
  const problems: string[] = []
  const answer = response as Partial<SyncResponse> | undefined
  const children = Array.isArray(answer?.children) ? answer.children : []
  const status = answer?.status ?? {}
  const jobs = children.filter((c) => c.kind === 'Job').map((c) => c.metadata.name)
  const names = new Set(jobs)
  const { expected } = fixture
  if (jobs.length !== expected.observedJobs + expected.toCreate.length) {
    problems.push(`${jobs.length} Jobs, expected ${expected.observedJobs + expected.toCreate.length}`)
  }
  for (const key of Object.keys(fixture.request.children['Job.batch/v1'] ?? {})) {
    const name = key.split('/')[1] as string
    if (!names.has(name)) problems.push(`observed Job ${name} is missing (it would be deleted)`)
  }
  for (const name of expected.toCreate) if (!names.has(name)) problems.push(`Job ${name} is not created`)
  if (children.some((c) => c.kind !== 'Job')) problems.push('unexpected non-Job children')
  for (const key of ['phase', 'desired', 'active', 'succeeded', 'failed'] as const) {
    if (status[key] !== expected[key]) {
      problems.push(`status.${key} is ${JSON.stringify(status[key])}, expected ${JSON.stringify(expected[key])}`)
    }
  }
  if (problems.length > 0) {
    throw new Error(`the DaemonJob answer for ${expected.nodes} nodes is wrong: ${problems.slice(0, 10).join('; ')}`)
  }
}
