// `kubectl jobhooks get`: each kind's view, the data and picture outputs, lists, --watch, and the
// errors kubectl users know, against a fake API server in the test process.
import t from 'tap'
import { parse } from 'yaml'
import type { KubeObject } from '../../../src/k8s/types.js'
import { exampleObjects } from '../../helpers/example-promises.js'
import { collaSetObjects, daemonJobObjects, ephemeralJobObjects, NOW, operationJob, plugin, runningFlow } from
  '../../helpers/plugin.js'

const lines = (text: string): string[] => text.trimEnd().split('\n').map(l => l.trimEnd())
const squeezed = (text: string): string[] => lines(text).map(l => l.replace(/(\S) {2,}/g, '$1 | '))

t.test('get jf <name>: the tree in dependency order, each attempt with its Job, times, output and message', async t => {
  const { run, fake } = await plugin(t, [runningFlow()])
  const { code, out, err } = await run(['get', 'jf', 'jobflow-example'])
  t.equal(code, 0)
  t.equal(err, '')
  const rows = squeezed(out)
  t.same(rows.slice(0, 6), [
    'Name: | jobflow-example', 'Namespace: | team-a', 'Status: | Running',
    'Started: | 2026-01-02T03:00:00Z (5m ago)', 'Duration: | 5m', 'Jobs: | 1/6 succeeded'
  ])
  t.same(rows.slice(7), [
    'STEP | AFTER | PHASE | ATTEMPT | JOB | STARTED | DURATION | OUTPUT | MESSAGE',
    'job1 | - | Succeeded | 1 | jobflow-example-job1 | 5m | 40s | {"version":"v1.2.3","notes":"…',
    "job4 | - | Succeeded | 1 | jobflow-example-job4 | 5m | 30s | ''",
    '  job2 | job1 | Failed | 1 | jobflow-example-job2 | 4m20s | 20s | - | ' +
      'BackoffLimitExceeded: Job has reached the specified backoff limit',
    '  job2 | job1 | Running | 2 | jobflow-example-job2-2 | 3m | 3m | -',
    '  shard | job1 | Running | - | 2 items | - | - | -',
    '    shard[0] | Succeeded | 1 | jobflow-example-shard-item-0 | 4m20s | 10s | -',
    '    shard[1] | Running | 1 | jobflow-example-shard-item-1 | 4m20s | 4m20s | -',
    '    job3 | job1, job2 | Pending | 1 | jobflow-example-job3 | - | - | - | waiting for job2',
    '    job5 | job2, job4 | Pending | 1 | jobflow-example-job5 | - | - | - | waiting for job2'
  ], 'a row per attempt, dependants after their dependencies, deeper ones indented')
  t.same(fake.requests.map(r => `${r.method} ${r.url}`),
    ['GET /apis/jobhooks.io/v1alpha1/namespaces/team-a/jobflows/jobflow-example'], 'one read, in the context namespace')
})

/** manifests/examples/jobflow-onexit.yaml in team-a as it ends: test failed, publish skipped, both exit steps ran. */
function finishedExitFlow (): KubeObject {
  const flow: KubeObject = exampleObjects('jobflow-onexit.yaml').find(o => o.kind === 'JobFlow')
  const at = (seconds: number): string => new Date(Date.parse('2026-01-02T03:04:00Z') + seconds * 1000)
    .toISOString().replace('.000Z', 'Z')
  const ran = (name: string, phase: string, start: number, end: number, message?: string): Record<string, unknown> => {
    const times = { startTime: at(start), completionTime: at(end) }
    return { name, jobName: `jobflow-onexit-${name}`, phase, ...times, ...message && { message } }
  }
  flow.metadata = { ...flow.metadata, namespace: 'team-a', creationTimestamp: at(0) }
  flow.status = {
    phase: 'Failed',
    jobsSucceeded: '3/5',
    startTime: at(0),
    completionTime: at(31),
    jobs: [
      ran('build', 'Succeeded', 0, 10),
      ran('test', 'Failed', 10, 11, 'DeadlineExceeded: Job was active longer than specified deadline'),
      { name: 'publish', jobName: 'jobflow-onexit-publish', phase: 'Skipped', message: 'not started: test failed' },
      ran('notify', 'Succeeded', 11, 21),
      ran('cleanup', 'Succeeded', 21, 31)
    ]
  }
  return flow
}

t.test('get jf <name>: exit steps after the DAG\'s, one level under an onExit row', async t => {
  const { run } = await plugin(t, [finishedExitFlow()])
  const { code, out } = await run(['get', 'jf', 'jobflow-onexit'])
  t.equal(code, 0)
  const rows = squeezed(out)
  t.same(rows.slice(rows.findIndex(row => row.startsWith('STEP '))), [
    'STEP | AFTER | PHASE | ATTEMPT | JOB | STARTED | DURATION | OUTPUT | MESSAGE',
    'build | - | Succeeded | 1 | jobflow-onexit-build | 60s | 10s | -',
    '  test | build | Failed | 1 | jobflow-onexit-test | 50s | 1s | - | ' +
      'DeadlineExceeded: Job was active longer than specified deadline',
    '    publish | test | Skipped | 1 | jobflow-onexit-publish | - | - | - | not started: test failed',
    'onExit',
    '  notify | onExit | Succeeded | 1 | jobflow-onexit-notify | 49s | 10s | -',
    '    cleanup | onExit: notify | Succeeded | 1 | jobflow-onexit-cleanup | 39s | 10s | -'
  ], 'the exit steps last, in their own dependency order, under a row that says what they are')
  const html = await run(['get', 'jf', 'jobflow-onexit', '-o', 'html'])
  t.match(html.out, '<g class="exit-group" data-group="onExit">', 'the live picture frames them too')
  t.match(html.out, '<path class="exit-edge" data-from="publish" data-into="onExit"')
})

t.test('get jf <name>: an approval step shows (approval) where a step shows its Job', async t => {
  const flow = exampleObjects('jobflow-approval.yaml').find(o => o.kind === 'JobFlow') as KubeObject
  flow.metadata = { ...flow.metadata, namespace: 'team-a', creationTimestamp: '2026-01-02T03:04:00Z' }
  flow.status = {
    phase: 'Running',
    jobs: [
      { name: 'build', jobName: 'jobflow-approval-build', phase: 'Succeeded' },
      { name: 'approve', jobName: 'jobflow-approval-approve', phase: 'Pending', message: 'waiting for approval' }
    ]
  }
  const { run } = await plugin(t, [flow])
  const rows = squeezed((await run(['get', 'jf', 'jobflow-approval'])).out)
  const approve = rows.find(row => row.trim().startsWith('approve '))
  t.match(approve, /^ {2}approve \| build \| Pending \| 1 \| \(approval\) \|/)
})

t.test('get <kind> <name> -o json|yaml: the object as data', async t => {
  const { run } = await plugin(t, [runningFlow()])
  const json = await run(['get', 'jobflow', 'jobflow-example', '-o', 'json'])
  t.equal(json.code, 0)
  const object = JSON.parse(json.out)
  t.equal(object.metadata.name, 'jobflow-example')
  t.same(object.status.jobs, (runningFlow().status as { jobs: unknown }).jobs, 'the records whole, outputs uncut')
  const yaml = await run(['get', 'jobflows', 'jobflow-example', '--output=yaml'])
  t.same(parse(yaml.out).status, object.status)
})

t.test('get jf <name> -o html: the live flow as a graph and a Gantt chart', async t => {
  const { run } = await plugin(t, [runningFlow()])
  const { code, out } = await run(['get', 'jf', 'jobflow-example', '-o', 'html'])
  t.equal(code, 0)
  t.match(out, /^<!DOCTYPE html>/)
  for (const step of ['job1', 'job2', 'job3', 'job4', 'job5', 'shard']) t.match(out, `data-step="${step}"`)
  t.match(out, 'data-step="job1" data-phase="Succeeded"')
  t.match(out, 'data-step="shard" data-phase="Running"')
  t.match(out, '<path class="edge" data-from="job2" data-to="job3"')
  t.match(out, '<h3>Jobs over time (seconds since the flow started)</h3>')
  t.match(out, '<title>jobflow-example-job2: Failed, 40s to 60s</title>')
  const dj = await run(['get', 'dj', 'audit', '-o', 'html'])
  t.same([dj.code, dj.err], [1, 'error: -o html draws JobFlows only\n'])
})

t.test('get <kind> without a name: the printer columns, in a namespace or all of them', async t => {
  const { run, fake } = await plugin(t, [runningFlow()])
  t.same(squeezed((await run(['get', 'jf'])).out), ['NAME | STATUS | JOBS | QUEUED | AGE',
    'jobflow-example | Running | 1/6 | 5m'])
  t.same(squeezed((await run(['get', 'jf', '-A'])).out)[0], 'NAMESPACE | NAME | STATUS | JOBS | QUEUED | AGE')
  t.equal((await run(['get', 'jf', '-n', 'other'])).out, 'No resources found in other namespace.\n')
  t.same(fake.requests.map(r => r.url), [
    '/apis/jobhooks.io/v1alpha1/namespaces/team-a/jobflows',
    '/apis/jobhooks.io/v1alpha1/jobflows',
    '/apis/jobhooks.io/v1alpha1/namespaces/other/jobflows'
  ])
})

t.test('get dj <name>: by node, from its Jobs and from what its status remembers', async t => {
  const { run, fake } = await plugin(t, daemonJobObjects())
  const { code, out } = await run(['get', 'dj', 'audit'])
  t.equal(code, 0)
  const rows = squeezed(out)
  t.ok(rows.includes('Nodes: | desired 3, active 1, succeeded 1, failed 1'))
  t.same(rows.slice(rows.indexOf('NODE | PHASE | JOB | STARTED | DURATION | MESSAGE') + 1), [
    'node-a | Running | audit-node-a | 60s | 60s',
    'node-b | Succeeded | - | - | - | Job gone',
    'node-c | Failed | audit-node-c | - | - | BackoffLimitExceeded: too many failures'
  ])
  t.match(fake.requests[1]?.url, '/apis/batch/v1/namespaces/team-a/jobs?labelSelector=jobhooks.io%2Fdaemonjob%3Daudit')
})

t.test('get dj <name>: the nodes a policy holds back, and why', async t => {
  const objects = daemonJobObjects()
  const status = objects[0]?.status as Record<string, unknown>
  Object.assign(status, { waiting: 2, message: 'nodeParallelism 1: 2 nodes waiting for their Job' })
  const { run } = await plugin(t, objects)
  const rows = squeezed((await run(['get', 'dj', 'audit'])).out)
  t.ok(rows.includes('Nodes: | desired 3, active 1, waiting 2, succeeded 1, failed 1'))
  t.ok(rows.includes('Message: | nodeParallelism 1: 2 nodes waiting for their Job'))
})

t.test('get ejob <name>: by pod and container', async t => {
  const { run, fake } = await plugin(t, ephemeralJobObjects())
  const rows = squeezed((await run(['get', 'ejob', 'debug'])).out)
  t.ok(rows.includes('Pods: | match 2, succeeded 1, failed 0, running 1, waiting 0'))
  t.same(rows.slice(rows.indexOf('POD | PHASE | CONTAINER | STATE | FINISHED | MESSAGE') + 1), [
    'web-1 | Succeeded | probe | exited 0 | 4m ago',
    'web-2 | Running | probe | running'
  ])
  t.match(fake.requests[1]?.url, '/api/v1/namespaces/team-a/pods?labelSelector=app%3Dweb')
})

t.test('get opj <name>: by target, with progress and the action\'s extra info', async t => {
  const { run } = await plugin(t, [operationJob()])
  const rows = squeezed((await run(['get', 'opj', 'opj-replace'])).out)
  t.ok(rows.includes('Action: | Replace, partition 2'))
  t.ok(rows.includes('Targets: | 1 succeeded, 1 failed of 3'))
  t.same(rows.slice(rows.indexOf('TARGET | PROGRESS | STARTED | DURATION | INFO | ERROR') + 1), [
    'foo-a | Succeeded | 5m | 30s | NewPod=foo-x',
    'foo-b | Failed | 5m | 60s | PodNotFound: pod foo-b is gone',
    'foo-c | Pending | - | -'
  ])
})

t.test('get cls <name>: by pod, with readiness, revision and replacements', async t => {
  const { run } = await plugin(t, collaSetObjects())
  const rows = squeezed((await run(['get', 'cls', 'foo'])).out)
  t.ok(rows.includes('Replicas: | 2 desired, replicas 3, readyReplicas 2, availableReplicas 2, updatedReplicas 3'))
  t.same(rows.slice(rows.indexOf('POD | READY | PHASE | SERVICE-READY | REVISION | AGE | REPLACE') + 1), [
    'foo-a | 1/1 | Running | True | r1* | 5m | to be replaced',
    'foo-b | 1/1 | Running | True | r1* | 5m',
    'foo-x | 0/1 (not Ready) | Running | False | r1* | 5m | replaces foo-a'
  ])
})

t.test('get cls <name>: a Pod the rollout holds out of traffic says why', async t => {
  const held: Array<[string, string]> = [['InPlaceUpdate', 'updating in place'], ['Recreate', 'to be recreated']]
  for (const [reason, shown] of held) {
    const objects = collaSetObjects()
    const pod = objects.find(o => o.metadata.name === 'foo-b') as KubeObject
    const gate = (pod.status as { conditions: Array<Record<string, unknown>> }).conditions[1]!
    Object.assign(gate, { status: 'False', reason })
    const { run } = await plugin(t, objects)
    const rows = squeezed((await run(['get', 'cls', 'foo'])).out)
    t.ok(rows.includes(`foo-b | 1/1 | Running | False | r1* | 5m | ${shown}`), reason)
  }
})

t.test('get cls <name>: the revisions and what holds the rollout (paused, partition, waiting)', async t => {
  const holds: Array<[string, Record<string, unknown>, Record<string, unknown>, string]> = [
    ['Paused', { paused: true }, {}, 'paused'],
    ['Partitioned', { updateStrategy: { rollingUpdate: { byPartition: { partition: 1 } } } }, {}, 'partition 1'],
    ['ByLabel', { updateStrategy: { rollingUpdate: { byLabel: {} } } }, {},
      'byLabel: only Pods labelled jobhooks.io/update-included'],
    ['OperationDelay', { updateStrategy: { operationDelaySeconds: 30 } },
      { nextUpdateTime: new Date(NOW.getTime() + 20_000).toISOString() }, 'waiting 20s (operationDelaySeconds 30)'],
    ['Updating', {}, {}, 'updating'],
    ['InPlaceImpossible', { updateStrategy: { podUpgradePolicy: 'InPlaceOnly' } }, {},
      'held: podUpgradePolicy InPlaceOnly, and a Pod cannot take the template in place'],
    ['Updated', {}, {}, 'done']
  ]
  for (const [reason, spec, status, shown] of holds) {
    const objects = collaSetObjects()
    const collaSet = objects[0] as KubeObject
    Object.assign(collaSet.spec as object, spec)
    Object.assign(collaSet.status as object, status, {
      currentRevision: 'r0',
      conditions: [{ type: 'Update', status: 'False', reason }, { type: 'Scale', status: 'True', reason: 'Scaled' }]
    })
    const { run } = await plugin(t, objects)
    const rows = squeezed((await run(['get', 'cls', 'foo'])).out)
    t.ok(rows.includes('Revisions: | updated r1 (*), current r0'), reason)
    t.ok(rows.includes(`Rollout: | ${shown}`), `${reason}: ${shown}`)
    t.notOk(rows.some(r => r.startsWith('Scale:') || r.startsWith('Update:')), 'no line of their own')
  }
})

t.test('get --watch: a watch request, each change drawn again, appended when piped, in place on a terminal',
  async t => {
    for (const tty of [false, true]) {
      const { run, fake } = await plugin(t, [runningFlow()])
      const stop = new AbortController()
      const flow = fake.objects[0] as ReturnType<typeof runningFlow>
      let changed = false
      const done = run(['get', 'jf', 'jobflow-example', '-w'], {
        tty,
        signal: stop.signal,
        onOut: all => {
          const blocks = all.split('Name:').length - 1
          if (blocks === 1 && !changed) {
            changed = true
            // The watch is open once its request arrived: change the flow then.
            const wait = setInterval(() => {
              if (!fake.requests.some(r => r.url.includes('watch=1'))) return
              clearInterval(wait)
              fake.change({ ...flow, status: { ...(flow.status as object), phase: 'Succeeded' } })
            }, 5)
          }
          if (blocks === 2) stop.abort()
        }
      })
      const { code, out } = await done
      t.equal(code, 0, 'ended by the signal, quietly')
      const watch = fake.requests.find(r => r.url.includes('watch=1'))
      t.equal(watch?.url,
        '/apis/jobhooks.io/v1alpha1/namespaces/team-a/jobflows?fieldSelector=metadata.name%3Djobflow-example' +
      `&watch=1&allowWatchBookmarks=false&resourceVersion=${flow.metadata.resourceVersion ?? ''}`)
      t.match(out, /Status: +Running[\s\S]*Status: +Succeeded/, 'drawn before and after the change')
      if (tty) t.equal(out.split('\x1b[H\x1b[2J').length, 3, 'each drawing clears the screen first')
      else t.match(out, /\n\nName: /, 'a blank line between blocks')
    }
  })

t.test('get <kind> --watch without a name: the list drawn again as objects come and go', async t => {
  const { run, fake } = await plugin(t, [runningFlow()])
  const stop = new AbortController()
  let added = false
  const { code, out } = await run(['get', 'jf', '--watch'], {
    signal: stop.signal,
    onOut: all => {
      if (!added) {
        added = true
        const wait = setInterval(() => {
          if (!fake.requests.some(r => r.url.includes('watch=1'))) return
          clearInterval(wait)
          const other = runningFlow()
          other.metadata.name = 'release'
          fake.change(other, 'ADDED')
        }, 5)
      }
      if (all.includes('release ')) stop.abort()
    }
  })
  t.equal(code, 0)
  t.same(out.split('\n\n').map(block => squeezed(block).map(row => row.split(' | ')[0])), [
    ['NAME', 'jobflow-example'],
    ['NAME', 'jobflow-example', 'release']
  ], 'the list, then the list with the new JobFlow')
  t.equal(fake.requests.find(r => r.url.includes('watch=1'))?.url,
    '/apis/jobhooks.io/v1alpha1/namespaces/team-a/jobflows?watch=1&allowWatchBookmarks=false&resourceVersion=999',
    'watched from the list\'s resourceVersion')
})

t.test('errors as kubectl says them, exit 1', async t => {
  const { run, fake } = await plugin(t, [runningFlow()])
  t.same(await run(['get', 'jf', 'nope']),
    { code: 1, out: '', err: 'Error from server (NotFound): jobflows.jobhooks.io "nope" not found\n' })
  fake.deny = () => true
  t.same(await run(['get', 'jf', 'jobflow-example']), {
    code: 1,
    out: '',
    err: 'Error from server (Forbidden): jobflows.jobhooks.io "jobflow-example" is forbidden: ' +
      'User "tester" cannot get resource "jobflows" in API group "jobhooks.io" in the namespace "team-a"\n'
  })
  delete fake.deny
  t.same(await run(['get', 'pods']), {
    code: 1,
    out: '',
    err: 'error: the server doesn\'t have a resource type "pods"\n'
  })
  t.same(await run(['get', 'jf', '--bogus']),
    {
      code: 1,
      out: '',
      err: "error: Unknown option '--bogus'. To specify a positional argument starting with a '-', " +
      "place it at the end of the command after '--', as in '-- \"--bogus\"\nSee 'kubectl jobhooks --help' for usage.\n"
    })
  t.same((await run(['get', 'jf', '-o', 'wide'])).err,
    'error: unable to match a printer suitable for the output format ' +
    '"wide", allowed formats are: json,yaml,html\nSee \'kubectl jobhooks --help\' for usage.\n')
  t.same(await run(['get', 'jf', '--context', 'elsewhere']),
    { code: 1, out: '', err: 'error: context was not found for specified context: elsewhere\n' })
  t.equal((await run(['get', 'jf', '--context', 'fake'])).code, 0, 'the context the kubeconfig has')
  t.same(await run(['get', 'jf', '--kubeconfig', '/nonexistent/kubeconfig']),
    { code: 1, out: '', err: 'error: --kubeconfig /nonexistent/kubeconfig: no such file\n' })
})

t.test('an API server that does not answer: refused, or silent past --request-timeout', async t => {
  const { run, fake, kubeconfig } = await plugin(t, [runningFlow()])
  fake.hang = () => true
  const started = Date.now()
  const silent = await run(['get', 'jf', 'jobflow-example', '--request-timeout=200ms'])
  t.ok(Date.now() - started < 5000, 'gives up on time')
  t.same(silent, {
    code: 1,
    out: '',
    err: `Unable to connect to the server: ${new URL(fake.url).host} gave no answer within 0.2 s\n`
  })
  const { readFileSync, writeFileSync } = await import('node:fs')
  writeFileSync(kubeconfig, readFileSync(kubeconfig, 'utf8').replace(fake.url, 'http://127.0.0.1:1'))
  t.same(await run(['get', 'jf', 'jobflow-example']), {
    code: 1,
    out: '',
    err: 'The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?\n'
  })
})

t.test('the clock of the views is the one given', async t => {
  t.equal(NOW.toISOString(), '2026-01-02T03:05:00.000Z')
})
