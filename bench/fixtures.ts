// Realistic JobFlow sync requests for the benchmark (and for any test that wants a big, lifelike
// request): the CompositeController, a JobFlow whose flows form a DAG, and its observed Jobs the
// way the API server returns them (bench/jobflow-jobs.ts builds those). Everything is
// deterministic: the same size gives byte-identical JSON.
import type { KubeObject } from '../src/k8s/types.js'
import { fixtureUid, k8sTime, prng } from './fixture-common.js'
import {
  BENCH_JOBFLOW, BENCH_NAMESPACE, CONTROLLER_NAME, GLOBAL_PARAMS, JOBFLOW_API_VERSION,
  SHARE_VOLUMES, SHARE_VOLUME_MOUNTS, T0, flowJobTemplate, jobTimes, observedFlowJob,
  type FixtureFlow, type FixtureFlowState
} from './jobflow-jobs.js'

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
