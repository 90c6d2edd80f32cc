import t from 'tap'
import type { KubeObject } from '../../src/k8s/types.js'
import type { ActionContext, ActionJob, ActionTarget } from '../../src/actions/registry.js'
import { EXEC_JOB_ENV, EXEC_JOB_UID_ENV, execAction, execContainerName, parseExecSpec } from '../../src/actions/exec.js'
import { SHIPPED_SCRIPTS } from '../helpers/fixtures.js'
import { valueAt } from '../helpers/objects.js'

const job = (exec: unknown, scripts?: unknown): ActionJob => ({
  name: 'check',
  namespace: 'default',
  uid: 'job-uid',
  spec: { action: 'Exec', exec, ...(scripts !== undefined ? { scripts } : {}) },
  targets: []
})
const ctx = (j: ActionJob = job({ image: 'busybox', command: ['true'] })): ActionContext => ({
  job: j,
  related: {},
  now: new Date('2026-01-02T03:00:00Z'),
  scripts: SHIPPED_SCRIPTS
})

function pod (
  options: {
    containers?: string[]
    ephemeral?: Record<string, unknown>
    state?: Record<string, unknown>
    phase?: string
    uid?: string
  } = {}
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web-0', namespace: 'default', uid: options.uid ?? 'pod-uid' },
    spec: {
      containers: (options.containers ?? ['app', 'sidecar']).map(name => ({ name, image: 'x' })),
      ...(options.ephemeral !== undefined ? { ephemeralContainers: [options.ephemeral] } : {})
    },
    status: {
      phase: options.phase ?? 'Running',
      ...(options.state !== undefined
        ? { ephemeralContainerStatuses: [{ name: 'opj-check', state: options.state }] }
        : {})
    }
  }
}
const ours = {
  name: 'opj-check',
  env: [
    { name: EXEC_JOB_ENV, value: 'check' },
    { name: EXEC_JOB_UID_ENV, value: 'job-uid' }
  ]
}
const target = (
  p: KubeObject | undefined,
  containers: string[] = [],
  extraInfo?: Record<string, string>
): ActionTarget => ({
  name: 'web-0',
  containers,
  ...(p !== undefined ? { pod: p } : {}),
  detail: { name: 'web-0', progress: 'Processing', ...(extraInfo !== undefined ? { extraInfo } : {}) }
})

t.test('spec.exec: a command, or a shipped or inline script run through sh -c', async t => {
  t.same(parseExecSpec(job({ image: 'busybox', command: ['echo', 'hi'] }), SHIPPED_SCRIPTS), {
    image: 'busybox',
    command: ['echo', 'hi']
  })
  const shipped = parseExecSpec(
    job({ image: 'busybox', imagePullPolicy: 'Never', script: { name: 'retry.sh', args: ['-n', '2', '--', 'true'] } }),
    SHIPPED_SCRIPTS
  )
  t.same(shipped, {
    image: 'busybox',
    imagePullPolicy: 'Never',
    command: ['sh', '-c', SHIPPED_SCRIPTS.get('retry.sh'), 'retry.sh', '-n', '2', '--', 'true']
  })
  const inline = parseExecSpec(
    job({ image: 'busybox', script: { name: 'retry.sh' } }, { 'retry.sh': 'exit 0' }),
    SHIPPED_SCRIPTS
  )
  t.same(
    inline,
    { image: 'busybox', command: ['sh', '-c', 'exit 0', 'retry.sh'] },
    'an inline script wins over a shipped one of the same name'
  )
  const bad: Array<[unknown, RegExp]> = [
    [undefined, /spec.exec is required/],
    [{ command: ['x'] }, /image/],
    [{ image: 'b' }, /exactly one of command and script/],
    [{ image: 'b', command: ['x'], script: { name: 'retry.sh' } }, /exactly one of command and script/],
    [{ image: 'b', command: [] }, /non-empty list/],
    [{ image: 'b', script: { name: '../etc/passwd' } }, /plain file name/],
    [{ image: 'b', script: { name: 'nope.sh' } }, /unknown script/],
    [{ image: 'b', script: { name: 'retry.sh', container: 'app' } }, /not used by Exec/],
    [{ image: 'b', command: ['x'], imagePullPolicy: 'Sometimes' }, /imagePullPolicy/]
  ]
  for (const [exec, message] of bad) {
    const problems = parseExecSpec(job(exec), SHIPPED_SCRIPTS)
    t.ok(Array.isArray(problems), JSON.stringify(exec))
    t.match((problems as string[]).join('; '), message)
  }
  t.same(execAction.handler.validate?.(job({ image: 'b' }), SHIPPED_SCRIPTS).length, 1)
})

t.test('the container name is a DNS label made from the job name', async t => {
  t.equal(execContainerName('check'), 'opj-check')
  t.equal(execContainerName('a.b'), 'opj-a-b')
  const long = execContainerName('x'.repeat(200))
  t.ok(long.length <= 63 && /^[a-z0-9-]+$/.test(long))
})

t.test(
  "operate injects one container marked with the job's name and UID, into the named or the first container",
  async t => {
    const first = execAction.handler.operate(target(pod()), ctx())
    t.same(first, {
      effects: [
        {
          type: 'InjectEphemeralContainers',
          target: { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'web-0', uid: 'pod-uid' },
          containers: [
            {
              name: 'opj-check',
              image: 'busybox',
              command: ['true'],
              env: [
                { name: EXEC_JOB_ENV, value: 'check' },
                { name: EXEC_JOB_UID_ENV, value: 'job-uid' }
              ],
              targetContainerName: 'app',
              terminationMessagePolicy: 'FallbackToLogsOnError'
            }
          ]
        }
      ],
      extraInfo: { ContainerName: 'opj-check', PodUID: 'pod-uid' }
    })
    const named = execAction.handler.operate(target(pod(), ['sidecar']), ctx())
    t.equal(valueAt(named.effects[0], 'containers', 0, 'targetContainerName'), 'sidecar')
    t.same(
      execAction.handler.operate(target(pod({ ephemeral: ours })), ctx()).effects,
      [],
      'already injected: nothing more (idempotent)'
    )
    t.match(execAction.handler.operate(target(pod(), ['db']), ctx()), {
      effects: [],
      error: { reason: 'ContainerNotFound' }
    })
    t.match(execAction.handler.operate(target(undefined), ctx()), { effects: [], error: { reason: 'PodNotFound' } })
    t.match(execAction.handler.operate(target(pod({ ephemeral: { name: 'opj-check', env: [] } })), ctx()), {
      error: { reason: 'ContainerConflict' }
    })
    t.match(execAction.handler.operate(target(pod({ uid: 'new' }), [], { PodUID: 'pod-uid' }), ctx()), {
      error: { reason: 'PodNotFound', message: /replaced by another Pod/ }
    })
  }
)

t.test('progress: exit code 0 succeeds, any other fails with the code in the message', async t => {
  const exit = (code: number, reason = 'Error'): any =>
    execAction.handler.progress(
      target(pod({ ephemeral: ours, state: { terminated: { exitCode: code, reason } } })),
      ctx()
    )
  t.same(exit(0, 'Completed'), { progress: 'Succeeded' })
  t.same(exit(1), {
    progress: 'Failed',
    error: { reason: 'ExitCode', message: 'opj-check exited with code 1 (Error)' }
  })
  t.match(exit(137, 'OOMKilled'), { progress: 'Failed', error: { message: /code 137 \(OOMKilled\)/ } })
  t.same(execAction.handler.progress(target(pod({ ephemeral: ours, state: { running: {} } })), ctx()), {
    progress: 'Processing'
  })
  t.same(
    execAction.handler.progress(
      target(pod({ ephemeral: ours, state: { waiting: { reason: 'ContainerCreating' } } })),
      ctx()
    ),
    { progress: 'Processing' }
  )
  t.match(
    execAction.handler.progress(
      target(pod({ ephemeral: ours, state: { waiting: { reason: 'CreateContainerError', message: 'no shell' } } })),
      ctx()
    ),
    { progress: 'Failed', error: { reason: 'CreateContainerError' } }
  )
  t.same(
    execAction.handler.progress(target(pod()), ctx()),
    { progress: 'Processing' },
    'not injected yet: operate will'
  )
  t.match(execAction.handler.progress(target(pod({ phase: 'Succeeded' })), ctx()), {
    progress: 'Failed',
    error: { reason: 'PodStopped' }
  })
  t.match(
    execAction.handler.progress(target(pod({ ephemeral: ours, state: { running: {} }, phase: 'Failed' })), ctx()),
    { progress: 'Failed', error: { reason: 'PodStopped' } }
  )
  t.match(execAction.handler.progress(target(undefined), ctx()), {
    progress: 'Failed',
    error: { reason: 'PodNotFound' }
  })
  const otherJob = {
    ...ours,
    env: [
      { name: EXEC_JOB_ENV, value: 'check' },
      { name: EXEC_JOB_UID_ENV, value: 'earlier-uid' }
    ]
  }
  t.match(
    execAction.handler.progress(target(pod({ ephemeral: otherJob, state: { terminated: { exitCode: 0 } } })), ctx()),
    { progress: 'Failed', error: { reason: 'ContainerConflict' } },
    "a same-named earlier job's container is not ours"
  )
})

t.test('release has nothing to undo: ephemeral containers cannot be removed', async t => {
  t.same(execAction.handler.release(target(pod({ ephemeral: ours })), ctx()), { effects: [] })
})
