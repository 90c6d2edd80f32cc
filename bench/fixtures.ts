// Realistic JobFlow sync requests for the benchmark (and for any test that wants a big, lifelike
// request): the CompositeController, a JobFlow whose flows form a DAG, and its observed Jobs the
// way the API server returns them, with managedFields, Metacontroller's last-applied annotation,
// defaulted spec fields and Job controller status. Everything is deterministic: the same size
// gives byte-identical JSON.
import { createHash } from 'node:crypto'
import { timestamp } from '../src/k8s/time.js'
import type { KubeObject } from '../src/k8s/types.js'

export const BENCH_NAMESPACE = 'default'
export const BENCH_JOBFLOW = 'etl-nightly'
export const JOBFLOW_API_VERSION = 'jobhooks.io/v1alpha1'
export const CONTROLLER_NAME = 'jobhooks-jobflow'

/** Layer `k` of the DAG starts at T0 + k × LAYER_SECONDS. */
const T0 = Date.parse('2026-01-02T01:00:00Z')
const LAYER_SECONDS = 150

export type FixtureFlowState = 'Succeeded' | 'Running' | 'Create' | 'Waiting'

export interface FixtureFlow {
  name: string
  jobName: string
  layer: number
  dependencies: string[]
  /** What the cluster shows: a finished Job, a running Job, or no Job (yet). */
  state: FixtureFlowState
}

/** What the hook should answer to the request, for checking a response before timing it. */
export interface FixtureExpectation {
  flows: number
  /** Jobs in `children["Job.batch/v1"]`: every one must come back. */
  observedJobs: number
  succeeded: number
  running: number
  /** Flows whose dependencies all succeeded and which have no Job: the hook creates these. */
  toCreate: number
  /** Flows still waiting on a dependency. */
  waiting: number
  /** `status.phase` of the response. */
  phase: 'Running'
}

export interface JobFlowFixture {
  /** The clock to give the hook: after every time in the request. */
  now: Date
  flows: FixtureFlow[]
  request: JobFlowSyncRequestBody
  expected: FixtureExpectation
}

/** The body Metacontroller v2 POSTs to a CompositeController's sync hook. */
export interface JobFlowSyncRequestBody {
  controller: Record<string, unknown>
  parent: KubeObject
  children: Record<string, Record<string, KubeObject>>
  related: Record<string, Record<string, KubeObject>>
  finalizing: boolean
}

/** A stable, UUID-shaped uid from a seed, as the API server would have assigned once. */
export function fixtureUid (seed: string): string {
  const h = createHash('sha1').update(seed).digest('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`
}

/** A stable, UUID-shaped uid from a seed (sha256), for the fixtures of the other kinds. */
export function seededUid (seed: string): string {
  const h = createHash('sha256').update(seed).digest('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`
}

/**
 * The sync request of a parent without children whose related objects are Pods, keyed as
 * Metacontroller v2 keys them. A JSON round trip makes it exactly what arrives over the wire.
 */
export function podsRelatedRequest (
  controller: unknown,
  parent: KubeObject,
  pods: KubeObject[]
): {
    controller: unknown
    parent: KubeObject
    children: Record<string, never>
    related: Record<string, Record<string, KubeObject>>
    finalizing: boolean
  } {
  return JSON.parse(
    JSON.stringify({
      controller,
      parent,
      children: {},
      related: {
        'Pod.v1': Object.fromEntries(pods.map((p) => [`${p.metadata.namespace ?? ''}/${p.metadata.name}`, p])),
      },
      finalizing: false,
    })
  )
}

/** The status of a sync answer of a kind without children, with each of `keys` as expected; throws otherwise. */
export function childlessStatus<T extends object> (
  response: unknown,
  kind: string,
  expected: T,
  keys: ReadonlyArray<keyof T & string>
): Record<string, unknown> {
  const answer = response as { status?: Record<string, unknown>; children?: unknown[] }
  const status = answer?.status
  if (status === undefined || !Array.isArray(answer.children)) {
    throw new Error('not a sync answer: no status or children')
  }
  if (answer.children.length !== 0) throw new Error(`an ${kind} has no children, got ${answer.children.length}`)
  for (const key of keys) {
    if (status[key] !== expected[key]) {
      throw new Error(`status.${key} is ${JSON.stringify(status[key])}, expected ${JSON.stringify(expected[key])}`)
    }
  }
  return status
}

/** RFC 3339 in seconds, the way the API server writes times. */
export function k8sTime (ms: number): string {
  return timestamp(new Date(ms))
}

/** A small deterministic PRNG (mulberry32), so the DAG is the same on every run (and a test's random JSON). */
export function prng (seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function pick<T> (items: readonly T[], random: () => number): T {
  return items[Math.floor(random() * items.length)] as T
}

/**
 * The flows of a JobFlow with `size` flows: layers of about √size flows; every flow after the
 * first layer depends on one flow of the layer before and, half the time, on a second earlier
 * flow. The first 80 % of the layers succeeded; in the next layer a third of the Jobs succeeded,
 * a third are running and a third do not exist yet; after that, flows whose dependencies all
 * succeeded are created now, the others wait.
 */
export function fixtureFlows (size: number, jobflow = BENCH_JOBFLOW): FixtureFlow[] {
  if (!Number.isInteger(size) || size < 2) throw new Error(`a JobFlow fixture needs at least 2 flows, not ${size}`)
  const random = prng(size * 7919)
  const width = Math.max(2, Math.ceil(Math.sqrt(size)))
  const layers: FixtureFlow[][] = []
  const frontier = Math.floor(Math.ceil(size / width) * 0.8)
  const digits = String(size - 1).length
  const flows: FixtureFlow[] = []
  const byName = new Map<string, FixtureFlow>()
  for (let i = 0; i < size; i++) {
    const layer = Math.floor(i / width)
    const j = i % width
    const name = `step-${String(i).padStart(Math.max(3, digits), '0')}`
    const dependencies: string[] = []
    if (layer > 0) {
      const previous = layers[layer - 1] as FixtureFlow[]
      dependencies.push(pick(previous, random).name)
      if (random() < 0.5) {
        const earlier = pick(layer > 1 ? [...previous, ...(layers[layer - 2] as FixtureFlow[])] : previous, random).name
        if (!dependencies.includes(earlier)) dependencies.push(earlier)
      }
    }
    let state: FixtureFlowState
    if (layer < frontier) state = 'Succeeded'
    else if (layer === frontier) state = j % 3 === 0 ? 'Create' : j % 3 === 1 ? 'Running' : 'Succeeded'
    else {
      const succeeded = dependencies.every((d) => byName.get(d)?.state === 'Succeeded')
      state = succeeded ? 'Create' : 'Waiting'
    }
    const flow: FixtureFlow = { name, jobName: `${jobflow}-${name}`, layer, dependencies, state }
    flows.push(flow)
    byName.set(name, flow)
    ;(layers[layer] ??= []).push(flow)
  }
  return flows
}

/** The JobSpec a flow declares in `spec.flows[].jobTemplate`, as a user would write it. */
export function flowJobTemplate (flow: FixtureFlow): Record<string, unknown> {
  return {
    backoffLimit: 2,
    ttlSecondsAfterFinished: 86400,
    template: {
      metadata: { labels: { 'app.kubernetes.io/part-of': 'etl', 'etl.example.com/step': flow.name } },
      spec: {
        containers: [
          {
            name: 'main',
            image: 'registry.example.com/data/etl-runner:2.14.3',
            command: ['/usr/local/bin/etl-runner'],
            args: [
              'run',
              '--step',
              flow.name,
              '--input',
              `s3://etl-staging/nightly/${flow.dependencies[0] ?? 'source'}/`,
              '--output',
              `s3://etl-staging/nightly/${flow.name}/`,
            ],
            env: [
              { name: 'STEP_NAME', value: flow.name },
              { name: 'LOG_FORMAT', value: 'json' },
            ],
            resources: { requests: { cpu: '500m', memory: '512Mi' }, limits: { cpu: '2', memory: '2Gi' } },
          },
        ],
      },
    },
  }
}

const GLOBAL_PARAMS = {
  labels: { team: 'data-platform', 'cost-center': 'cc-4711' },
  annotations: { 'etl.example.com/run': 'nightly-2026-01-02' },
  env: [
    { name: 'RUN_ID', value: 'nightly-2026-01-02' },
    { name: 'WAREHOUSE_URL', value: 'postgres://warehouse.data.svc:5432/etl' },
  ],
}
const SHARE_VOLUMES = [{ name: 'workspace', persistentVolumeClaim: { claimName: 'etl-nightly-workspace' } }]
const SHARE_VOLUME_MOUNTS = [{ name: 'workspace', mountPath: '/workspace' }]

/** The JobFlow spec (what `kubectl apply` sent). */
export function jobFlowSpec (flows: FixtureFlow[]): Record<string, unknown> {
  return {
    globalParams: GLOBAL_PARAMS,
    shareVolumes: SHARE_VOLUMES,
    shareVolumeMounts: SHARE_VOLUME_MOUNTS,
    flows: flows.map((f) => ({
      name: f.name,
      ...(f.dependencies.length > 0 ? { dependencies: f.dependencies } : {}),
      jobTemplate: flowJobTemplate(f),
    })),
  }
}

/** The CompositeController as Metacontroller sends it in `controller`: the whole object. */
export function jobFlowController (): Record<string, unknown> {
  const spec = {
    generateSelector: true,
    parentResource: { apiVersion: JOBFLOW_API_VERSION, resource: 'jobflows' },
    childResources: [
      { apiVersion: 'batch/v1', resource: 'jobs', updateStrategy: { method: 'OnDelete' } },
      { apiVersion: 'v1', resource: 'configmaps', updateStrategy: { method: 'OnDelete' } },
    ],
    hooks: {
      sync: {
        version: 'v2',
        webhook: { url: 'http://jobhooks.jobhooks-system.svc:8080/hooks/jobflow/sync', timeout: '10s' },
      },
      finalize: {
        version: 'v2',
        webhook: { url: 'http://jobhooks.jobhooks-system.svc:8080/hooks/jobflow/finalize', timeout: '10s' },
      },
      customize: {
        version: 'v2',
        webhook: { url: 'http://jobhooks.jobhooks-system.svc:8080/hooks/jobflow/customize', timeout: '10s' },
      },
    },
    resyncPeriodSeconds: 60,
  }
  const labels = { 'app.kubernetes.io/name': 'jobhooks', 'app.kubernetes.io/component': 'jobflow' }
  return {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind: 'CompositeController',
    metadata: {
      name: CONTROLLER_NAME,
      uid: fixtureUid(`compositecontroller/${CONTROLLER_NAME}`),
      resourceVersion: '1042',
      generation: 1,
      creationTimestamp: '2025-12-01T09:00:00Z',
      labels,
      annotations: {
        'kubectl.kubernetes.io/last-applied-configuration':
          JSON.stringify({
            apiVersion: 'metacontroller.k8s.io/v1alpha1',
            kind: 'CompositeController',
            metadata: { annotations: {}, labels, name: CONTROLLER_NAME },
            spec,
          }) + '\n',
      },
      managedFields: [
        {
          manager: 'kubectl-client-side-apply',
          operation: 'Update',
          apiVersion: 'metacontroller.k8s.io/v1alpha1',
          time: '2025-12-01T09:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': {
              'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} },
              'f:labels': { '.': {}, 'f:app.kubernetes.io/component': {}, 'f:app.kubernetes.io/name': {} },
            },
            'f:spec': {
              '.': {},
              'f:childResources': {},
              'f:generateSelector': {},
              'f:hooks': {
                '.': {},
                'f:customize': { '.': {}, 'f:version': {}, 'f:webhook': { '.': {}, 'f:timeout': {}, 'f:url': {} } },
                'f:finalize': { '.': {}, 'f:version': {}, 'f:webhook': { '.': {}, 'f:timeout': {}, 'f:url': {} } },
                'f:sync': { '.': {}, 'f:version': {}, 'f:webhook': { '.': {}, 'f:timeout': {}, 'f:url': {} } },
              },
              'f:parentResource': { '.': {}, 'f:apiVersion': {}, 'f:resource': {} },
              'f:resyncPeriodSeconds': {},
            },
          },
        },
      ],
    },
    spec,
    status: {},
  }
}

/** The Job our hook returned for `flow` (what Metacontroller created and keeps in last-applied). */
export function desiredFlowJob (
  flow: FixtureFlow,
  parentUid: string,
  jobflow = BENCH_JOBFLOW,
  namespace = BENCH_NAMESPACE
): Record<string, unknown> {
  const template = flowJobTemplate(flow) as {
    template: { metadata: { labels: Record<string, string> }; spec: { containers: Array<Record<string, unknown>> } }
  }
  const ids = { 'jobhooks.io/jobflow': jobflow, 'jobhooks.io/flow': flow.name }
  const container = template.template.spec.containers[0] as { env: unknown[] }
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: flow.jobName,
      namespace,
      // Metacontroller adds controller-uid (generateSelector) before it applies the Job.
      labels: { ...GLOBAL_PARAMS.labels, ...ids, 'controller-uid': parentUid },
      annotations: GLOBAL_PARAMS.annotations,
    },
    spec: {
      ...template,
      template: {
        metadata: {
          labels: { ...GLOBAL_PARAMS.labels, ...template.template.metadata.labels, ...ids },
          annotations: GLOBAL_PARAMS.annotations,
        },
        spec: {
          containers: [
            { ...container, env: [...GLOBAL_PARAMS.env, ...container.env], volumeMounts: SHARE_VOLUME_MOUNTS },
          ],
          volumes: SHARE_VOLUMES,
          restartPolicy: 'Never',
        },
      },
    },
  }
}

interface JobTimes {
  created: number
  started: number
  finished?: number
}

function jobTimes (flow: FixtureFlow, index: number): JobTimes {
  const started = T0 + flow.layer * LAYER_SECONDS * 1000 + (index % 5) * 1000
  return {
    created: started - 1000,
    started,
    ...(flow.state === 'Succeeded' ? { finished: started + (60 + (index % 7) * 7) * 1000 } : {}),
  }
}

/** A flow's Job as the API server returns it: defaulted spec, full metadata, controller status. */
export function observedFlowJob (
  flow: FixtureFlow,
  index: number,
  parentUid: string,
  jobflow = BENCH_JOBFLOW,
  namespace = BENCH_NAMESPACE
): KubeObject {
  if (flow.state !== 'Succeeded' && flow.state !== 'Running') {
    throw new Error(`flow ${flow.name} has no Job (${flow.state})`)
  }
  const desired = desiredFlowJob(flow, parentUid, jobflow, namespace) as {
    metadata: { labels: Record<string, string>; annotations: Record<string, string> }
    spec: {
      template: {
        metadata: { labels: Record<string, string>; annotations: Record<string, string> }
        spec: { containers: Array<Record<string, unknown>>; volumes: unknown[] }
      }
    }
  }
  const uid = fixtureUid(`job/${namespace}/${flow.jobName}`)
  const times = jobTimes(flow, index)
  const created = k8sTime(times.created)
  const podLabels = {
    ...desired.spec.template.metadata.labels,
    'batch.kubernetes.io/controller-uid': uid,
    'batch.kubernetes.io/job-name': flow.jobName,
    'controller-uid': uid,
    'job-name': flow.jobName,
  }
  const desiredContainer = desired.spec.template.spec.containers[0] as Record<string, unknown>
  const status: Record<string, unknown> = {
    startTime: k8sTime(times.started),
    terminating: 0,
    uncountedTerminatedPods: {},
  }
  if (times.finished !== undefined) {
    const finished = k8sTime(times.finished)
    const message = 'Reached expected number of succeeded pods'
    Object.assign(status, {
      completionTime: finished,
      succeeded: 1,
      ready: 0,
      conditions: [
        {
          type: 'SuccessCriteriaMet',
          status: 'True',
          lastProbeTime: finished,
          lastTransitionTime: finished,
          reason: 'CompletionsReached',
          message,
        },
        {
          type: 'Complete',
          status: 'True',
          lastProbeTime: finished,
          lastTransitionTime: finished,
          reason: 'CompletionsReached',
          message,
        },
      ],
    })
  } else {
    Object.assign(status, { active: 1, ready: 1 })
  }
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: flow.jobName,
      namespace,
      uid,
      resourceVersion: String(2_000_000 + index * 7),
      generation: 1,
      creationTimestamp: created,
      labels: desired.metadata.labels,
      annotations: {
        ...desired.metadata.annotations,
        'metacontroller.k8s.io/last-applied-configuration': JSON.stringify(desired),
      },
      ownerReferences: [
        {
          apiVersion: JOBFLOW_API_VERSION,
          kind: 'JobFlow',
          name: jobflow,
          uid: parentUid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      managedFields: jobManagedFields(parentUid, times, podLabels),
    },
    spec: {
      parallelism: 1,
      completions: 1,
      backoffLimit: 2,
      ttlSecondsAfterFinished: 86400,
      selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } },
      template: {
        metadata: {
          creationTimestamp: null,
          labels: podLabels,
          annotations: desired.spec.template.metadata.annotations,
        },
        spec: {
          volumes: desired.spec.template.spec.volumes,
          containers: [
            {
              ...desiredContainer,
              terminationMessagePath: '/dev/termination-log',
              terminationMessagePolicy: 'File',
              imagePullPolicy: 'IfNotPresent',
            },
          ],
          restartPolicy: 'Never',
          terminationGracePeriodSeconds: 30,
          dnsPolicy: 'ClusterFirst',
          securityContext: {},
          schedulerName: 'default-scheduler',
        },
      },
      completionMode: 'NonIndexed',
      suspend: false,
      podReplacementPolicy: 'TerminatingOrFailed',
    },
    status,
  }
}

function jobManagedFields (parentUid: string, times: JobTimes, podLabels: Record<string, string>): unknown[] {
  const set = (keys: string[]): Record<string, unknown> =>
    Object.fromEntries([['.', {}], ...keys.map((k) => [`f:${k}`, {}])])
  const labels = ['controller-uid', 'cost-center', 'jobhooks.io/flow', 'jobhooks.io/jobflow', 'team']
  const metacontroller = {
    manager: 'metacontroller',
    operation: 'Update',
    apiVersion: 'batch/v1',
    time: k8sTime(times.created),
    fieldsType: 'FieldsV1',
    fieldsV1: {
      'f:metadata': {
        'f:annotations': set(['etl.example.com/run', 'metacontroller.k8s.io/last-applied-configuration']),
        'f:labels': set(labels),
        'f:ownerReferences': { '.': {}, [`k:{"uid":"${parentUid}"}`]: {} },
      },
      'f:spec': {
        'f:backoffLimit': {},
        'f:completionMode': {},
        'f:completions': {},
        'f:parallelism': {},
        'f:podReplacementPolicy': {},
        'f:suspend': {},
        'f:template': {
          'f:metadata': {
            'f:annotations': set(['etl.example.com/run']),
            'f:labels': set(
              Object.keys(podLabels).filter((k) => !k.includes('controller-uid') && !k.includes('job-name'))
            ),
          },
          'f:spec': {
            'f:containers': {
              'k:{"name":"main"}': {
                '.': {},
                'f:args': {},
                'f:command': {},
                'f:env': {
                  '.': {},
                  'k:{"name":"LOG_FORMAT"}': set(['name', 'value']),
                  'k:{"name":"RUN_ID"}': set(['name', 'value']),
                  'k:{"name":"STEP_NAME"}': set(['name', 'value']),
                  'k:{"name":"WAREHOUSE_URL"}': set(['name', 'value']),
                },
                'f:image': {},
                'f:imagePullPolicy': {},
                'f:name': {},
                'f:resources': { '.': {}, 'f:limits': set(['cpu', 'memory']), 'f:requests': set(['cpu', 'memory']) },
                'f:terminationMessagePath': {},
                'f:terminationMessagePolicy': {},
                'f:volumeMounts': { '.': {}, 'k:{"mountPath":"/workspace"}': set(['mountPath', 'name']) },
              },
            },
            'f:dnsPolicy': {},
            'f:restartPolicy': {},
            'f:schedulerName': {},
            'f:securityContext': {},
            'f:terminationGracePeriodSeconds': {},
            'f:volumes': {
              '.': {},
              'k:{"name":"workspace"}': { '.': {}, 'f:name': {}, 'f:persistentVolumeClaim': set(['claimName']) },
            },
          },
        },
        'f:ttlSecondsAfterFinished': {},
      },
    },
  }
  const statusFields: Record<string, unknown> =
    times.finished !== undefined
      ? {
          'f:completionTime': {},
          'f:conditions': {},
          'f:ready': {},
          'f:startTime': {},
          'f:succeeded': {},
          'f:terminating': {},
          'f:uncountedTerminatedPods': {},
        }
      : { 'f:active': {}, 'f:ready': {}, 'f:startTime': {}, 'f:terminating': {}, 'f:uncountedTerminatedPods': {} }
  const controllerManager = {
    manager: 'kube-controller-manager',
    operation: 'Update',
    apiVersion: 'batch/v1',
    time: k8sTime(times.finished ?? times.started + 5000),
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:status': statusFields },
    subresource: 'status',
  }
  return [metacontroller, controllerManager]
}

/**
 * `status.jobs` and the rest of the status as our hook wrote it on the previous sync: the Jobs
 * the flows that are created now waited for were still running then.
 */
export function previousStatus (flows: FixtureFlow[], parentStarted: string): Record<string, unknown> {
  const justFinished = new Set(flows.filter((f) => f.state === 'Create').flatMap((f) => f.dependencies))
  const byName = new Map(flows.map((f) => [f.name, f]))
  const wasSucceeded = (f: FixtureFlow): boolean => f.state === 'Succeeded' && !justFinished.has(f.name)
  const jobs = flows.map((flow, index) => {
    const times = jobTimes(flow, index)
    if (flow.state === 'Succeeded' || flow.state === 'Running') {
      if (wasSucceeded(flow)) {
        return {
          name: flow.name,
          jobName: flow.jobName,
          phase: 'Succeeded',
          startTime: k8sTime(times.started),
          completionTime: k8sTime(times.finished as number),
        }
      }
      return { name: flow.name, jobName: flow.jobName, phase: 'Running', startTime: k8sTime(times.started) }
    }
    const waiting = flow.dependencies.filter((d) => {
      const dep = byName.get(d)
      return dep === undefined || !wasSucceeded(dep)
    })
    return { name: flow.name, jobName: flow.jobName, phase: 'Pending', message: `waiting for ${waiting.join(', ')}` }
  })
  return {
    observedGeneration: 1,
    phase: 'Running',
    startTime: parentStarted,
    jobs,
    conditions: [
      {
        type: 'Valid',
        status: 'True',
        reason: 'SpecValid',
        message: 'the spec is valid',
        lastTransitionTime: parentStarted,
      },
    ],
  }
}

/** The JobFlow as Metacontroller sends it in `parent`: applied with kubectl, status by our hook. */
export function jobFlowParent (flows: FixtureFlow[], jobflow = BENCH_JOBFLOW, namespace = BENCH_NAMESPACE): KubeObject {
  const spec = jobFlowSpec(flows)
  const created = k8sTime(T0 - 2000)
  return {
    apiVersion: JOBFLOW_API_VERSION,
    kind: 'JobFlow',
    metadata: {
      name: jobflow,
      namespace,
      uid: fixtureUid(`jobflow/${namespace}/${jobflow}`),
      resourceVersion: '1999870',
      generation: 1,
      creationTimestamp: created,
      annotations: {
        'kubectl.kubernetes.io/last-applied-configuration':
          JSON.stringify({
            apiVersion: JOBFLOW_API_VERSION,
            kind: 'JobFlow',
            metadata: { annotations: {}, name: jobflow, namespace },
            spec,
          }) + '\n',
      },
      finalizers: [`metacontroller.io/compositecontroller-${CONTROLLER_NAME}`],
      managedFields: [
        {
          manager: 'kubectl-client-side-apply',
          operation: 'Update',
          apiVersion: JOBFLOW_API_VERSION,
          time: created,
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} } },
            'f:spec': {
              '.': {},
              'f:flows': {},
              'f:globalParams': { '.': {}, 'f:annotations': {}, 'f:env': {}, 'f:labels': {} },
              'f:shareVolumeMounts': {},
              'f:shareVolumes': {},
            },
          },
        },
        {
          manager: 'metacontroller',
          operation: 'Update',
          apiVersion: JOBFLOW_API_VERSION,
          time: created,
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': {
              'f:finalizers': { '.': {}, [`v:"metacontroller.io/compositecontroller-${CONTROLLER_NAME}"`]: {} },
            },
          },
        },
        {
          manager: 'metacontroller',
          operation: 'Update',
          apiVersion: JOBFLOW_API_VERSION,
          time: k8sTime(T0 + 60_000),
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:status': {
              '.': {},
              'f:conditions': {},
              'f:jobs': {},
              'f:observedGeneration': {},
              'f:phase': {},
              'f:startTime': {},
            },
          },
          subresource: 'status',
        },
      ],
    },
    spec,
    status: previousStatus(flows, k8sTime(T0)),
  }
}

/** Drops `undefined` values the way JSON would, so that the objects equal their wire form. */
function wireForm<T> (value: T): T {
  return JSON.parse(JSON.stringify(value)) as T
}

/**
 * The sync request Metacontroller v2 sends for a JobFlow of `size` flows, with the clock to give
 * the hook and what its answer must contain.
 */
export function jobFlowFixture (size: number, jobflow = BENCH_JOBFLOW, namespace = BENCH_NAMESPACE): JobFlowFixture {
  const flows = fixtureFlows(size, jobflow)
  const parent = jobFlowParent(flows, jobflow, namespace)
  const parentUid = parent.metadata.uid as string
  const jobs: Record<string, KubeObject> = {}
  flows.forEach((flow, index) => {
    if (flow.state === 'Succeeded' || flow.state === 'Running') {
      jobs[`${namespace}/${flow.jobName}`] = observedFlowJob(flow, index, parentUid, jobflow, namespace)
    }
  })
  const count = (state: FixtureFlowState): number => flows.filter((f) => f.state === state).length
  const lastEvent = Math.max(...flows.map((f, i) => jobTimes(f, i).finished ?? jobTimes(f, i).started))
  const request: JobFlowSyncRequestBody = wireForm({
    controller: jobFlowController(),
    parent,
    children: { 'Job.batch/v1': jobs, 'ConfigMap.v1': {} },
    related: {},
    finalizing: false,
  })
  return {
    now: new Date(lastEvent + 30_000),
    flows,
    request,
    expected: {
      flows: size,
      observedJobs: Object.keys(jobs).length,
      succeeded: count('Succeeded'),
      running: count('Running'),
      toCreate: count('Create'),
      waiting: count('Waiting'),
      phase: 'Running',
    },
  }
}

/** The request as the bytes Metacontroller sends (Go's encoder writes compact JSON). */
export function jobFlowRequestBody (size: number): { body: string; fixture: JobFlowFixture } {
  const fixture = jobFlowFixture(size)
  return { body: JSON.stringify(fixture.request), fixture }
}
