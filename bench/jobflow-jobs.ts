// The Jobs of the benchmark's JobFlow: the flows' names and states, the Job our hook returned for
// a flow (what Metacontroller keeps in last-applied), and that Job as the API server returns it,
// with defaulted spec fields, managedFields and Job controller status.
import type { KubeObject } from '../src/k8s/types.js'
import { fixtureUid, k8sTime } from './fixture-common.js'

export const BENCH_NAMESPACE = 'default'
export const BENCH_JOBFLOW = 'etl-nightly'
export const JOBFLOW_API_VERSION = 'jobhooks.io/v1alpha1'
export const CONTROLLER_NAME = 'jobhooks-jobflow'

/** Layer `k` of the DAG starts at T0 + k × LAYER_SECONDS. */
export const T0 = Date.parse('2026-01-02T01:00:00Z')
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

export const GLOBAL_PARAMS = {
  labels: { team: 'data-platform', 'cost-center': 'cc-4711' },
  annotations: { 'etl.example.com/run': 'nightly-2026-01-02' },
  env: [
    { name: 'RUN_ID', value: 'nightly-2026-01-02' },
    { name: 'WAREHOUSE_URL', value: 'postgres://warehouse.data.svc:5432/etl' },
  ],
}
export const SHARE_VOLUMES = [{ name: 'workspace', persistentVolumeClaim: { claimName: 'etl-nightly-workspace' } }]
export const SHARE_VOLUME_MOUNTS = [{ name: 'workspace', mountPath: '/workspace' }]

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

export interface JobTimes {
  created: number
  started: number
  finished?: number
}

export function jobTimes (flow: FixtureFlow, index: number): JobTimes {
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
