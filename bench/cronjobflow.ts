// A realistic CronJobFlow sync request for the benchmark: a CronJobFlow every five minutes in
// Europe/Berlin (concurrencyPolicy Allow, history limits 100 and 100, so every finished run stays)
// and its `size` runs, the JobFlows it owns, as the API server returns them: managedFields, its
// label, the scheduled-time annotation and Metacontroller's last-applied copy (the JobFlow as it
// was created, keys sorted as Go writes them), the ownerReference, a spec of 50 steps (a small DAG:
// prepare, four waves of twelve, publish) and the status the JobFlow hook wrote, one record per
// step. Of the runs, one in ten failed (a step of its third wave, and what depended on it was
// skipped), the newest still runs, the others succeeded; the next schedule time is due at the
// fixture's clock, so the answer keeps every run by its identity (OnDelete) and starts one.
//
// Every object Metacontroller sends is unstructured, which Go encodes with its keys sorted: so are
// the parent's and the runs' here. Deterministic: the same size gives byte-identical JSON.
// `verify` checks the hook's answer before it is timed.
import type { KubeObject } from '../src/k8s/types.js'
import type { JobRecord } from '../src/formats/jobflow-status.js'
import { childName } from '../src/k8s/names.js'
import { k8sTime, prng, seededUid } from './fixture-common.js'

export const CRONJOBFLOW_NAME = 'etl-5m'
const NAMESPACE = 'data'
const API_VERSION = 'jobhooks.io/v1alpha1'
const LAST_APPLIED = 'metacontroller.k8s.io/last-applied-configuration'
const SCHEDULED_TIME = 'jobhooks.io/scheduled-time'
const CRONJOBFLOW_LABEL = 'jobhooks.io/cronjobflow'
const TEMPLATE_LABELS = { team: 'data-platform', 'app.kubernetes.io/part-of': 'etl' }
const MINUTE = 60_000
const PERIOD = 5 * MINUTE
/** The schedule time due at the fixture's clock: a Tuesday, Berlin on winter time (UTC+1), no DST change near. */
const DUE = Date.parse('2026-03-10T09:35:00Z')
/** Metacontroller syncs a few seconds after the resync the last answer asked for. */
const NOW = DUE + 7000
const WAVES = ['extract', 'transform', 'aggregate', 'load'] as const
const WIDTH = 12

/** One step of the runs' DAG. */
interface Step {
  name: string
  dependencies: string[]
  /** 0: prepare; 1–4: the waves; 5: publish. */
  wave: number
  /** Its place in its wave. */
  index: number
}

export interface CronJobFlowExpectation {
  /** Runs in the request: every one is kept, as last applied. */
  runs: number
  /** The run started now: `<cronjobflow>-<unix minutes of the due time>`. */
  started: string
  scheduledTime: string
  /** The newest observed run, still running, and the one started now. */
  activeCount: number
  /** Seconds to the next schedule time, from the fixture's clock. */
  resyncAfterSeconds: number
}

export interface CronJobFlowFixture {
  /** The clock to give the hook: the due schedule time, and seven seconds. */
  now: Date
  request: {
    controller: unknown
    parent: KubeObject
    children: Record<string, Record<string, KubeObject>>
    related: Record<string, never>
    finalizing: boolean
  }
  expected: CronJobFlowExpectation
  /** Throws, saying what is wrong, when `response` is not the answer this request must get. */
  verify: (response: unknown) => void
}

const pad = (n: number): string => String(n).padStart(2, '0')

/** The 50 steps: prepare, four waves of twelve each on one step of the wave before (some on two), publish. */
function dagSteps (): Step[] {
  const random = prng(50)
  const steps: Step[] = [{ name: 'prepare', dependencies: [], wave: 0, index: 0 }]
  WAVES.forEach((wave, w) => {
    for (let j = 0; j < WIDTH; j++) {
      const before = w === 0 ? ['prepare'] : [`${WAVES[w - 1] as string}-${pad(j)}`]
      if (w > 0 && random() < 0.3) {
        const other = `${WAVES[w - 1] as string}-${pad(Math.floor(random() * WIDTH))}`
        if (!before.includes(other)) before.push(other)
      }
      steps.push({ name: `${wave}-${pad(j)}`, dependencies: before, wave: w + 1, index: j })
    }
  })
  const last = WAVES[WAVES.length - 1] as string
  steps.push({
    name: 'publish',
    dependencies: Array.from({ length: WIDTH }, (_, j) => `${last}-${pad(j)}`),
    wave: WAVES.length + 1,
    index: 0,
  })
  return steps
}

function jobTemplate (step: Step): Record<string, unknown> {
  return {
    backoffLimit: 2,
    ttlSecondsAfterFinished: 3600,
    template: {
      metadata: { labels: { 'etl.example.com/step': step.name } },
      spec: {
        restartPolicy: 'Never',
        containers: [
          {
            name: 'main',
            image: 'registry.example.com/data/etl-runner:2.14.3',
            command: ['/usr/local/bin/etl-runner'],
            args: [
              'run',
              '--step',
              step.name,
              '--input',
              `s3://etl-staging/5m/${step.dependencies[0] ?? 'source'}/`,
              '--output',
              `s3://etl-staging/5m/${step.name}/`,
            ],
            env: [
              { name: 'STEP_NAME', value: step.name },
              { name: 'LOG_FORMAT', value: 'json' },
            ],
            resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { cpu: '1', memory: '1Gi' } },
          },
        ],
      },
    },
  }
}

/** The JobFlow every run is: the CronJobFlow's spec.jobFlowTemplate.spec. */
function runSpec (steps: readonly Step[]): Record<string, unknown> {
  return {
    flows: steps.map((s) => ({
      name: s.name,
      ...(s.dependencies.length > 0 ? { dependencies: s.dependencies } : {}),
      jobTemplate: jobTemplate(s),
    })),
  }
}

/** `value` with the keys of every object sorted, as Go's encoding/json writes a map. */
function sortedKeys (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys)
  if (value === null || typeof value !== 'object') return value
  const object = value as Record<string, unknown>
  return Object.fromEntries(
    Object.keys(object)
      .sort()
      .map((k) => [k, sortedKeys(object[k])])
  )
}

const goJSON = (value: unknown): string => JSON.stringify(sortedKeys(value))

type RunState = 'Succeeded' | 'Failed' | 'Running'

/** One in ten failed, the newest runs, the others succeeded. */
function stateOf (i: number, size: number): RunState {
  if (i === size - 1) return 'Running'
  return i % 10 === 4 ? 'Failed' : 'Succeeded'
}

/** When step `s` of a run that started at `startMs` started and would end: waves 50 s apart, 10–24 s a Job. */
function stepTimes (s: Step, startMs: number, random: () => number): { start: number, end: number } {
  if (s.wave === 0) return { start: startMs + 1000, end: startMs + 9000 }
  const start = startMs + 10_000 + (s.wave - 1) * 50_000 + s.index * 2000
  const seconds = s.wave > WAVES.length ? 12 : 10 + Math.floor(random() * 15)
  return { start, end: start + seconds * 1000 }
}

/** The status the JobFlow hook wrote for run `i` (and Metacontroller's observedGeneration). */
function runStatus (
  run: string,
  i: number,
  state: RunState,
  steps: readonly Step[],
  startMs: number
): Record<string, unknown> {
  const random = prng(1000 + i)
  const failing = state === 'Failed' ? `${WAVES[2]}-${pad(i % WIDTH)}` : undefined
  const ended = new Map<string, JobRecord['phase']>()
  const jobs: JobRecord[] = []
  for (const s of steps) {
    const { start, end } = stepTimes(s, startMs, random)
    const jobName = childName(run, s.name)
    const blockedBy = s.dependencies.filter((d) => ended.get(d) === 'Failed' || ended.get(d) === 'Skipped')
    const open = s.dependencies.filter((d) => ended.get(d) === 'Running' || ended.get(d) === 'Pending')
    let record: JobRecord
    if (blockedBy.length > 0) {
      const why = blockedBy.map((d) => `${d} (${ended.get(d) === 'Failed' ? 'failed' : 'skipped'})`)
      record = { name: s.name, jobName, phase: 'Skipped', message: `not started: depends on ${why.join(', ')}` }
    } else if (open.length > 0) {
      record = { name: s.name, jobName, phase: 'Pending', message: `waiting for ${open.join(', ')}` }
    } else if (s.name === failing) {
      record = {
        name: s.name,
        jobName,
        phase: 'Failed',
        startTime: k8sTime(start),
        completionTime: k8sTime(end),
        message: 'BackoffLimitExceeded: Job has reached the specified backoff limit',
      }
    } else if (state === 'Running' && s.wave === WAVES.length && s.index >= WIDTH / 2) {
      // The newest run's last loads are slow: still running at the clock.
      record = { name: s.name, jobName, phase: 'Running', startTime: k8sTime(start) }
    } else {
      record = { name: s.name, jobName, phase: 'Succeeded', startTime: k8sTime(start), completionTime: k8sTime(end) }
    }
    ended.set(s.name, record.phase)
    jobs.push(record)
  }
  const succeeded = jobs.filter((j) => j.phase === 'Succeeded').length
  const lastEnd = Math.max(...jobs.map((j) => Date.parse(j.completionTime ?? '') || 0))
  const valid = {
    type: 'Valid',
    status: 'True',
    reason: 'SpecValid',
    message: 'the spec is valid',
    lastTransitionTime: k8sTime(startMs),
  }
  const skipped = jobs.filter((j) => j.phase === 'Skipped').map((j) => j.name)
  const outcome =
    state === 'Running'
      ? []
      : [
          state === 'Succeeded'
            ? {
                type: 'Complete',
                status: 'True',
                reason: 'AllJobsSucceeded',
                message: `${succeeded} of ${jobs.length} jobs succeeded`,
              }
            : {
                type: 'Failed',
                status: 'True',
                reason: 'JobFailed',
                message:
                  `${failing as string}: BackoffLimitExceeded: Job has reached the specified backoff limit; ` +
                  `skipped because of them: ${skipped.join(', ')}`,
              },
        ].map((c) => ({ ...c, lastTransitionTime: k8sTime(lastEnd + 1000) }))
  return {
    phase: state,
    jobsSucceeded: `${succeeded}/${jobs.length}`,
    startTime: k8sTime(startMs),
    ...(state !== 'Running' ? { completionTime: k8sTime(lastEnd + 1000) } : {}),
    jobs,
    conditions: [valid, ...outcome],
    observedGeneration: 1,
  }
}

/** Run `i` of `size`, scheduled (size - i) periods before the due time, as the API server returns it. */
function run (
  i: number,
  size: number,
  parent: { name: string, uid: string },
  spec: Record<string, unknown>,
  steps: readonly Step[]
): { object: KubeObject, lastApplied: string } {
  const scheduled = DUE - (size - i) * PERIOD
  const name = `${parent.name}-${Math.floor(scheduled / MINUTE)}`
  const created = scheduled + 1000
  const state = stateOf(i, size)
  const labels = { ...TEMPLATE_LABELS, [CRONJOBFLOW_LABEL]: parent.name, 'controller-uid': parent.uid }
  // What the CronJobFlow hook answered (newRun), with the label Metacontroller adds
  // (generateSelector), as Metacontroller applied and recorded it.
  const lastApplied = goJSON({
    apiVersion: API_VERSION,
    kind: 'JobFlow',
    metadata: { name, namespace: NAMESPACE, labels, annotations: { [SCHEDULED_TIME]: k8sTime(scheduled) } },
    spec,
  })
  const status = runStatus(name, i, state, steps, created + 1000)
  const statusWritten = typeof status.completionTime === 'string' ? Date.parse(status.completionTime) : NOW - 30_000
  const object: KubeObject = {
    apiVersion: API_VERSION,
    kind: 'JobFlow',
    metadata: {
      name,
      namespace: NAMESPACE,
      uid: seededUid(`jobflow/${NAMESPACE}/${name}`),
      resourceVersion: String(4_100_000 + i * 97),
      generation: 1,
      creationTimestamp: k8sTime(created),
      labels,
      annotations: { [SCHEDULED_TIME]: k8sTime(scheduled), [LAST_APPLIED]: lastApplied },
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: 'CronJobFlow',
          name: parent.name,
          uid: parent.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      finalizers: ['metacontroller.io/compositecontroller-jobflow-controller'],
      managedFields: [
        {
          manager: 'metacontroller',
          operation: 'Update',
          apiVersion: API_VERSION,
          time: k8sTime(created),
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': {
              'f:annotations': { '.': {}, [`f:${SCHEDULED_TIME}`]: {}, [`f:${LAST_APPLIED}`]: {} },
              'f:finalizers': { '.': {}, 'v:"metacontroller.io/compositecontroller-jobflow-controller"': {} },
              'f:labels': Object.fromEntries([['.', {}], ...Object.keys(labels).map((k) => [`f:${k}`, {}])]),
              'f:ownerReferences': { '.': {}, [`k:{"uid":"${parent.uid}"}`]: {} },
            },
            'f:spec': { '.': {}, 'f:flows': {} },
          },
        },
        {
          manager: 'metacontroller',
          operation: 'Update',
          apiVersion: API_VERSION,
          time: k8sTime(statusWritten),
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:status': Object.fromEntries([['.', {}], ...Object.keys(status).map((k) => [`f:${k}`, {}])]),
          },
          subresource: 'status',
        },
      ],
    },
    spec,
    status,
  }
  return { object: sortedKeys(object) as KubeObject, lastApplied }
}

function controller (): Record<string, unknown> {
  return {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind: 'CompositeController',
    metadata: { name: 'cronjobflow-controller', uid: seededUid('cronjobflow-controller'), generation: 1 },
    spec: {
      generateSelector: true,
      resyncPeriodSeconds: 45,
      parentResource: { apiVersion: API_VERSION, resource: 'cronjobflows' },
      childResources: [{ apiVersion: API_VERSION, resource: 'jobflows', updateStrategy: { method: 'OnDelete' } }],
      hooks: {
        sync: {
          version: 'v2',
          webhook: {
            service: { name: 'jobhooks', namespace: 'jobhooks-system', port: 80 },
            path: '/hooks/cronjobflow/sync',
            timeout: '10s',
          },
        },
      },
    },
  }
}

/** The CronJobFlow as applied with kubectl, its status as the hook wrote it when it started the newest run. */
function parentOf (size: number, spec: Record<string, unknown>, newest: KubeObject, lastSuccess?: string): KubeObject {
  const uid = seededUid(`cronjobflow/${NAMESPACE}/${CRONJOBFLOW_NAME}`)
  const created = k8sTime(DUE - (size + 1) * PERIOD - 17_000)
  const lastSchedule = k8sTime(DUE - PERIOD)
  const cjfSpec = {
    schedule: '*/5 * * * *',
    timeZone: 'Europe/Berlin',
    concurrencyPolicy: 'Allow',
    successfulJobFlowsHistoryLimit: 100,
    failedJobFlowsHistoryLimit: 100,
    jobFlowTemplate: { metadata: { labels: TEMPLATE_LABELS }, spec },
  }
  const parent = {
    apiVersion: API_VERSION,
    kind: 'CronJobFlow',
    metadata: {
      name: CRONJOBFLOW_NAME,
      namespace: NAMESPACE,
      uid,
      resourceVersion: '4099001',
      generation: 1,
      creationTimestamp: created,
      annotations: {
        'kubectl.kubernetes.io/last-applied-configuration':
          JSON.stringify({
            apiVersion: API_VERSION,
            kind: 'CronJobFlow',
            metadata: { annotations: {}, name: CRONJOBFLOW_NAME, namespace: NAMESPACE },
            spec: cjfSpec,
          }) + '\n',
      },
      managedFields: [
        {
          manager: 'kubectl-client-side-apply',
          operation: 'Update',
          apiVersion: API_VERSION,
          time: created,
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} } },
            'f:spec': Object.fromEntries([['.', {}], ...Object.keys(cjfSpec).map((k) => [`f:${k}`, {}])]),
          },
        },
        {
          manager: 'metacontroller',
          operation: 'Update',
          apiVersion: API_VERSION,
          time: k8sTime(DUE - PERIOD + 1000),
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:status': {
              '.': {},
              'f:active': {},
              'f:activeCount': {},
              'f:conditions': {},
              'f:lastScheduleTime': {},
              'f:lastSuccessfulTime': {},
              'f:nextScheduleTime': {},
              'f:observedGeneration': {},
              'f:phase': {},
            },
          },
          subresource: 'status',
        },
      ],
    },
    spec: cjfSpec,
    status: {
      phase: 'Active',
      lastScheduleTime: lastSchedule,
      ...(lastSuccess !== undefined ? { lastSuccessfulTime: lastSuccess } : {}),
      active: [
        {
          apiVersion: API_VERSION,
          kind: 'JobFlow',
          name: newest.metadata.name,
          namespace: NAMESPACE,
          uid: newest.metadata.uid,
        },
      ],
      activeCount: 1,
      nextScheduleTime: k8sTime(DUE),
      conditions: [
        {
          type: 'Valid',
          status: 'True',
          reason: 'SpecValid',
          message: 'the spec is valid',
          lastTransitionTime: created,
        },
        {
          type: 'Scheduled',
          status: 'True',
          reason: 'Started',
          message: `started ${newest.metadata.name} for ${lastSchedule}`,
          lastTransitionTime: k8sTime(DUE - (size + 1) * PERIOD + PERIOD),
        },
      ],
      observedGeneration: 1,
    },
  }
  return sortedKeys(parent) as KubeObject
}

/** The sync request Metacontroller v2 sends for a CronJobFlow with `size` runs (size ≥ 1), and a due time. */
export function cronJobFlowFixture (size: number): CronJobFlowFixture {
  if (!Number.isInteger(size) || size < 1) throw new Error('the CronJobFlow bench fixture needs at least 1 run')
  const steps = dagSteps()
  const spec = runSpec(steps)
  const uid = seededUid(`cronjobflow/${NAMESPACE}/${CRONJOBFLOW_NAME}`)
  const runs = Array.from({ length: size }, (_, i) => run(i, size, { name: CRONJOBFLOW_NAME, uid }, spec, steps))
  const lastSuccess = runs
    .map((r) => r.object.status as { phase: string, completionTime?: string })
    .filter((s) => s.phase === 'Succeeded')
    .at(-1)?.completionTime
  const parent = parentOf(size, spec, (runs.at(-1) as { object: KubeObject }).object, lastSuccess)
  const request = JSON.parse(
    JSON.stringify({
      controller: controller(),
      parent,
      children: {
        [`JobFlow.${API_VERSION}`]: Object.fromEntries(
          runs.map((r) => [`${NAMESPACE}/${r.object.metadata.name}`, r.object])
        ),
      },
      related: {},
      finalizing: false,
    })
  ) as CronJobFlowFixture['request']
  const expected: CronJobFlowExpectation = {
    runs: size,
    started: `${CRONJOBFLOW_NAME}-${Math.floor(DUE / MINUTE)}`,
    scheduledTime: k8sTime(DUE),
    activeCount: 2,
    resyncAfterSeconds: Math.ceil((DUE + PERIOD - NOW) / 1000),
  }
  const applied = new Map(runs.map((r) => [r.object.metadata.name, r.lastApplied]))
  return { now: new Date(NOW), request, expected, verify: (response) => verify(response, expected, applied) }
}

/**
 * Checks a sync answer against what the fixture expects: every run (`applied`: their names) kept
 * by its identity alone, the due one started, the status's active runs and the resync; throws with
 * the first difference.
 */
export function verify (
  response: unknown,
  expected: CronJobFlowExpectation,
  applied: ReadonlyMap<string, string>
): void {
  const answer = response as { status?: Record<string, unknown>, children?: KubeObject[], resyncAfterSeconds?: unknown }
  const { status, children } = answer
  if (status === undefined || !Array.isArray(children)) throw new Error('not a sync answer: no status or children')
  if (children.length !== expected.runs + 1) {
    throw new Error(`${children.length} children, expected ${expected.runs + 1}: every run kept and one started`)
  }
  const started = children.filter((c) => !applied.has(c.metadata?.name))
  if (started.length !== 1 || started[0]?.metadata.name !== expected.started) {
    throw new Error(`started ${JSON.stringify(started.map((c) => c.metadata?.name))}, expected [${expected.started}]`)
  }
  const annotations = (started[0].metadata.annotations ?? {}) as Record<string, unknown>
  if (annotations[SCHEDULED_TIME] !== expected.scheduledTime) {
    throw new Error(`the new run's ${SCHEDULED_TIME} is ${JSON.stringify(annotations[SCHEDULED_TIME])}`)
  }
  const kept = new Set<string>()
  for (const child of children) {
    const copy = applied.get(child.metadata.name)
    if (copy === undefined) continue
    if (kept.has(child.metadata.name)) throw new Error(`${child.metadata.name} is answered twice`)
    kept.add(child.metadata.name)
    const metadata = { name: child.metadata.name, namespace: NAMESPACE }
    const identity = { apiVersion: API_VERSION, kind: 'JobFlow', metadata }
    if (JSON.stringify(child) !== JSON.stringify(identity)) {
      throw new Error(`${child.metadata.name} is not answered by its identity`)
    }
  }
  if (status.activeCount !== expected.activeCount) {
    throw new Error(`status.activeCount is ${JSON.stringify(status.activeCount)}, expected ${expected.activeCount}`)
  }
  if (answer.resyncAfterSeconds !== expected.resyncAfterSeconds) {
    throw new Error(
      `resyncAfterSeconds is ${JSON.stringify(answer.resyncAfterSeconds)}, expected ${expected.resyncAfterSeconds}`
    )
  }
}
