// Running `kubectl jobhooks` in the test process against the fake API server of
// fake-kubectl-server.ts, with a kubeconfig for it, a fixed clock and the objects below: a JobFlow
// half way (a step done with an output, a retry running, a fan-out step, steps waiting).
import type { Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { KubeObject } from '../../src/k8s/types.js'
import { pluginMain } from '../../src/cli/kubectl/main.js'
import { kubeconfigFor } from './fake-api-server.js'
import { fakeKube, type FakeKube } from './fake-kubectl-server.js'
import { exampleJobFlow } from './examples.js'

export const NOW = new Date('2026-01-02T03:05:00Z')

export interface Run { code: number, out: string, err: string }

export interface Plugin {
  fake: FakeKube
  kubeconfig: string
  run: (argv: string[], options?: {
    tty?: boolean,
    signal?: AbortSignal,
    onOut?: (all: string) => void
  }) => Promise<Run>
}

export async function plugin (t: Test, objects: KubeObject[]): Promise<Plugin> {
  const fake = await fakeKube(t, objects)
  // A directory of its own: a test's t.testdir() stays free for its manifests.
  const dir = mkdtempSync(join(tmpdir(), 'kubectl-jobhooks-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const kubeconfig = kubeconfigFor(dir, fake.url, 'team-a')
  const run: Plugin['run'] = async (argv, options = {}) => {
    let out = ''
    let err = ''
    const code = await pluginMain(['--kubeconfig', kubeconfig, ...argv], {
      out: text => {
        out += text
        options.onOut?.(out)
      },
      err: text => { err += text },
      tty: options.tty ?? false,
      now: () => NOW,
      ...(options.signal !== undefined ? { signal: options.signal } : {})
    })
    return { code, out, err }
  }
  return { fake, kubeconfig, run }
}

/** The example JobFlow (job1..job5) in team-a with a fan-out step `shard` after job1, half way through. */
export function runningFlow (): KubeObject {
  const flow = exampleJobFlow('team-a')
  const spec = flow.spec as { flows: Array<Record<string, unknown>> }
  spec.flows.push({ ...structuredClone(spec.flows[0]), name: 'shard', dependencies: ['job1'], forEach: ['eu', 'us'] })
  flow.metadata.creationTimestamp = '2026-01-02T03:00:00Z'
  flow.status = {
    phase: 'Running',
    jobsSucceeded: '1/6',
    startTime: '2026-01-02T03:00:00Z',
    jobs: [
      {
        name: 'job1',
        jobName: 'jobflow-example-job1',
        phase: 'Succeeded',
        startTime: '2026-01-02T03:00:00Z',
        completionTime: '2026-01-02T03:00:40Z',
        output: '{"version":"v1.2.3","notes":"a long line of release notes"}'
      },
      {
        name: 'job2',
        jobName: 'jobflow-example-job2',
        phase: 'Failed',
        startTime: '2026-01-02T03:00:40Z',
        completionTime: '2026-01-02T03:01:00Z',
        message: 'BackoffLimitExceeded: Job has reached the specified backoff limit'
      },
      {
        name: 'job2',
        jobName: 'jobflow-example-job2-2',
        attempt: 2,
        phase: 'Running',
        startTime: '2026-01-02T03:02:00Z'
      },
      { name: 'job3', jobName: 'jobflow-example-job3', phase: 'Pending', message: 'waiting for job2' },
      {
        name: 'job4',
        jobName: 'jobflow-example-job4',
        phase: 'Succeeded',
        startTime: '2026-01-02T03:00:00Z',
        completionTime: '2026-01-02T03:00:30Z',
        output: ''
      },
      { name: 'job5', jobName: 'jobflow-example-job5', phase: 'Pending', message: 'waiting for job2' },
      {
        name: 'shard[0]',
        jobName: 'jobflow-example-shard-item-0',
        phase: 'Succeeded',
        startTime: '2026-01-02T03:00:40Z',
        completionTime: '2026-01-02T03:00:50Z'
      },
      { name: 'shard[1]', jobName: 'jobflow-example-shard-item-1', phase: 'Running', startTime: '2026-01-02T03:00:40Z' }
    ],
    conditions: [{ type: 'Valid', status: 'True', reason: 'SpecValid', message: 'the spec is valid' }]
  }
  return flow
}

const pod = (name: string, labels: Record<string, string>, status: Record<string, unknown>,
  containers = ['main']): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'team-a', uid: `uid-${name}`, labels, creationTimestamp: '2026-01-02T03:00:00Z' },
  spec: { containers: containers.map(c => ({ name: c, image: 'busybox:1.36' })) },
  status
})

/** A DaemonJob on three nodes: node-a's Job runs, node-b's succeeded (Job gone), node-c's failed. */
export function daemonJobObjects (): KubeObject[] {
  const daemonJob: KubeObject = {
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'DaemonJob',
    metadata: { name: 'audit', namespace: 'team-a' },
    spec: { template: { spec: { containers: [{ name: 'main', image: 'busybox:1.36' }] } } },
    status: {
      phase: 'Running',
      desired: 3,
      active: 1,
      succeeded: 1,
      failed: 1,
      startTime: '2026-01-02T03:00:00Z',
      succeededNodes: ['node-b'],
      failedNodes: [{ name: 'node-c', jobName: 'audit-node-c', message: 'BackoffLimitExceeded: too many failures' }]
    }
  }
  const job: KubeObject = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: 'audit-node-a',
      namespace: 'team-a',
      labels: {
        'jobhooks.io/daemonjob': 'audit',
        'jobhooks.io/node': 'node-a'
      }
    },
    spec: {},
    status: { active: 1, startTime: '2026-01-02T03:04:00Z' }
  }
  return [daemonJob, job]
}

/** An EphemeralJob that chose two Pods: one finished (exit 0), one whose container runs. */
export function ephemeralJobObjects (): KubeObject[] {
  const ephemeralJob: KubeObject = {
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'EphemeralJob',
    metadata: { name: 'debug', namespace: 'team-a' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: {
        ephemeralContainers: [{
          name: 'probe',
          image: 'busybox:1.36'
        }]
      }
    },
    status: {
      phase: 'Running',
      match: 2,
      succeeded: 1,
      failed: 0,
      running: 1,
      waiting: 0,
      startTime: '2026-01-02T03:00:00Z',
      pods: [
        { name: 'web-1', uid: 'uid-web-1', phase: 'Succeeded', completionTime: '2026-01-02T03:01:00Z' },
        { name: 'web-2', uid: 'uid-web-2', phase: 'Running' }
      ]
    }
  }
  const statuses = (state: Record<string, unknown>): Record<string, unknown> =>
    ({ phase: 'Running', ephemeralContainerStatuses: [{ name: 'probe', state }] })
  return [ephemeralJob, pod('web-1', { app: 'web' }, statuses({ terminated: { exitCode: 0 } })),
    pod('web-2', { app: 'web' }, statuses({ running: {} }))]
}

/** An OperationJob replacing two Pods: one done (with the new Pod in extraInfo), one failed. */
export function operationJob (): KubeObject {
  return {
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'OperationJob',
    metadata: { name: 'opj-replace', namespace: 'team-a' },
    spec: { action: 'Replace', targets: [{ name: 'foo-a' }, { name: 'foo-b' }, { name: 'foo-c' }], partition: 2 },
    status: {
      progress: 'Processing',
      startTime: '2026-01-02T03:00:00Z',
      totalPodCount: 3,
      succeededPodCount: 1,
      failedPodCount: 1,
      targetDetails: [
        {
          name: 'foo-a',
          progress: 'Succeeded',
          startTime: '2026-01-02T03:00:00Z',
          endTime: '2026-01-02T03:00:30Z',
          extraInfo: { NewPod: 'foo-x' }
        },
        {
          name: 'foo-b',
          progress: 'Failed',
          startTime: '2026-01-02T03:00:00Z',
          endTime: '2026-01-02T03:01:00Z',
          error: { reason: 'PodNotFound', message: 'pod foo-b is gone' }
        }
      ]
    }
  }
}

/** A CollaSet of two Pods, one asked to be replaced, and its replacement coming up. */
export function collaSetObjects (): KubeObject[] {
  const collaSet: KubeObject = {
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'CollaSet',
    metadata: { name: 'foo', namespace: 'team-a', creationTimestamp: '2026-01-02T03:00:00Z' },
    spec: { replicas: 2, selector: { matchLabels: { app: 'foo' } } },
    status: {
      replicas: 3,
      readyReplicas: 2,
      availableReplicas: 2,
      updatedReplicas: 3,
      updatedRevision: 'r1',
      currentRevision: 'r1'
    }
  }
  const ready = (yes: boolean): Record<string, unknown> => ({
    phase: 'Running',
    containerStatuses: [{ name: 'main', ready: yes }],
    conditions: [{ type: 'Ready', status: yes ? 'True' : 'False' }, {
      type: 'jobhooks.io/service-ready',
      status: yes ? 'True' : 'False'
    }]
  })
  const labels = (extra: Record<string, string>): Record<string, string> => ({
    app: 'foo',
    'jobhooks.io/revision': 'r1',
    ...extra
  })
  return [collaSet, pod('foo-a', labels({ 'jobhooks.io/to-replace': 'true' }), ready(true)),
    pod('foo-b', labels({}), ready(true)), pod('foo-x', labels({ 'jobhooks.io/replace-origin': 'foo-a' }),
      ready(false))]
}

const BUSYBOX = { name: 'main', image: 'busybox:1.36' }

/** A run's name: its CronJobFlow's followed by the schedule time in unix minutes. */
export const runNameAt = (cronJobFlow: string, time: string): string =>
  `${cronJobFlow}-${Date.parse(time) / 60_000}`

/**
 * A CronJobFlow `nightly` in team-a, hourly in Europe/Berlin under concurrencyPolicy Replace, and
 * its runs, listed newest first: 03:00 running, one started by hand at 02:30, 01:00 stopped and
 * replaced by 02:00 (which has no schedule-time annotation: its name says the time), and two
 * JobFlows that are not its runs.
 */
export function cronJobFlowObjects (): KubeObject[] {
  const cronJobFlow: KubeObject = {
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'CronJobFlow',
    metadata: { name: 'nightly', namespace: 'team-a', uid: 'uid-nightly', creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: {
      schedule: '0 * * * *',
      timeZone: 'Europe/Berlin',
      concurrencyPolicy: 'Replace',
      suspend: false,
      jobFlowTemplate: {
        metadata: { labels: { team: 'a' }, annotations: { 'example.com/owner': 'ops' } },
        spec: { flows: [{ name: 'report', jobTemplate: { template: { spec: { containers: [BUSYBOX] } } } }] }
      }
    },
    status: {
      phase: 'Active',
      lastScheduleTime: '2026-01-02T03:00:00Z',
      nextScheduleTime: '2026-01-02T04:00:00Z',
      activeCount: 1,
      conditions: [
        { type: 'Valid', status: 'True', reason: 'SpecValid', message: 'the spec is valid' },
        { type: 'Scheduled', status: 'True', reason: 'Started', message: 'started a run' }
      ]
    }
  }
  const run = (name: string, scheduled: string | undefined, created: string, status: Record<string, unknown>,
    annotations: Record<string, string> = {}, owner = 'nightly'): KubeObject => ({
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'JobFlow',
    metadata: {
      name,
      namespace: 'team-a',
      creationTimestamp: created,
      labels: { 'jobhooks.io/cronjobflow': owner },
      annotations: { ...(scheduled !== undefined ? { 'jobhooks.io/scheduled-time': scheduled } : {}), ...annotations }
    },
    spec: {},
    status
  })
  const at = (time: string): string => `2026-01-02T${time}Z`
  return [
    cronJobFlow,
    run(runNameAt('nightly', at('03:00:00')), at('03:00:00'), at('03:00:01'),
      { phase: 'Running', jobsSucceeded: '0/1', startTime: at('03:00:05') }),
    run('nightly-manual-1767321000', undefined, at('02:30:00'),
      { phase: 'Running', jobsSucceeded: '0/1', startTime: at('02:30:00') }, { 'jobhooks.io/instantiate': 'manual' }),
    run(runNameAt('nightly', at('01:00:00')), at('01:00:00'), at('01:00:01'),
      { phase: 'Failed', jobsSucceeded: '0/1', startTime: at('01:00:05'), completionTime: at('02:00:10') },
      { 'jobhooks.io/replaced-by': runNameAt('nightly', at('02:00:00')) }),
    run(runNameAt('nightly', at('02:00:00')), undefined, at('02:00:01'),
      { phase: 'Succeeded', jobsSucceeded: '1/1', startTime: at('02:00:05'), completionTime: at('02:20:00') }),
    run(runNameAt('weekly', at('00:00:00')), at('00:00:00'), at('00:00:01'), { phase: 'Succeeded' }, {}, 'weekly'),
    { ...runningFlow(), metadata: { ...runningFlow().metadata, name: 'nightly-report' } }
  ]
}
