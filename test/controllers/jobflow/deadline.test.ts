// spec.activeDeadlineSeconds: when the deadline is (from the start, before it from the creation,
// from a rerun), what a new Job gets of it, the grace after which a Job Kubernetes has not stopped
// is deleted, and when the hook asks to be called.
import t from 'tap'
import {
  DEADLINE_GRACE_SECONDS, deadlineWake, flowDeadline, jobDeadlineSeconds, overdue, type FlowDeadline
} from '../../../src/controllers/jobflow/deadline.js'
import { syncJobFlow } from '../../../src/controllers/jobflow/sync.js'
import type { KubeObject } from '../../../src/k8s/types.js'
import { responseOf } from '../../helpers/hooks.js'
import { childrenOf, context, fixture } from '../../helpers/fixtures.js'

const respond = responseOf(syncJobFlow)
const parent = { metadata: { name: 'jf', creationTimestamp: '2026-01-02T03:00:00Z' } } as unknown as KubeObject
const at = (iso: string): number => Date.parse(iso)

t.test('the deadline counts from the start, else the creation, and again from a rerun', async t => {
  t.equal(flowDeadline(undefined, parent, {}), undefined, 'no deadline without the field')
  t.same(flowDeadline(60, parent, {}), { atMs: at('2026-01-02T03:01:00Z'), seconds: 60 }, 'from the creation')
  t.same(flowDeadline(60, parent, { startTime: '2026-01-02T03:00:10Z' }),
    { atMs: at('2026-01-02T03:01:10Z'), seconds: 60 }, 'from the start')
  const rerun = { value: '1', time: '2026-01-02T04:00:00Z' }
  t.same(flowDeadline(60, parent, { startTime: '2026-01-02T03:00:10Z', rerun }),
    { atMs: at('2026-01-02T04:01:00Z'), seconds: 60 }, 'a rerun starts the clock again')
})

t.test('a new Job gets the time left, or its own deadline when that is less', async t => {
  const deadline: FlowDeadline = { atMs: at('2026-01-02T03:10:00Z'), seconds: 600 }
  const now = new Date('2026-01-02T03:09:30.500Z')
  t.equal(jobDeadlineSeconds(undefined, deadline, now), 30)
  t.equal(jobDeadlineSeconds(10, deadline, now), 10)
  t.equal(jobDeadlineSeconds(undefined, deadline, new Date('2026-01-02T03:11:00Z')), 1, 'never 0: at least a second')
})

t.test('a Job still unfinished past the deadline and its grace ends Failed; the hook is called at each', async t => {
  const deadline: FlowDeadline = { atMs: at('2026-01-02T03:10:00Z'), seconds: 600 }
  const running = { name: 'a', jobName: 'jf-a', phase: 'Running' as const }
  const inGrace = new Date(deadline.atMs + (DEADLINE_GRACE_SECONDS - 1) * 1000)
  const after = new Date(deadline.atMs + DEADLINE_GRACE_SECONDS * 1000)
  t.equal(overdue(running, deadline, inGrace), undefined, 'Kubernetes has its grace to stop it itself')
  t.match(overdue(running, deadline, after), {
    phase: 'Failed',
    message: 'DeadlineExceeded: the JobFlow passed its activeDeadlineSeconds (600 s); its Job was deleted',
    completionTime: '2026-01-02T03:10:10Z'
  })
  t.equal(overdue({ ...running, phase: 'Succeeded' }, deadline, after), undefined, 'a finished Job stays as it ended')
  t.equal(deadlineWake(deadline, new Date(deadline.atMs - 90_500), false), 91, 'at the deadline')
  t.equal(deadlineWake(deadline, inGrace, true), 1, 'at the grace\'s end while a Job runs on')
  t.equal(deadlineWake(deadline, inGrace, false), undefined, 'nothing to wait for')
})

t.test('a queued Job past the deadline is deleted, its record Failed, and nothing new starts', async t => {
  const request = fixture('jobflow/sync-queued.v2.json')
  const spec = request.parent.spec as Record<string, unknown>
  spec.activeDeadlineSeconds = 60
  const response = respond(request, context(new Date('2026-01-02T03:02:00Z')))
  const jobs = childrenOf(response.children, 'Job')
  t.notOk(jobs.has('jobflow-example-job4'), 'job4, held by Kueue since before the deadline, is deleted')
  const records = response.status.jobs as Array<{ name: string, phase: string, message?: string }>
  t.match(records.find(r => r.name === 'job4'), { phase: 'Failed', message: /^DeadlineExceeded: the JobFlow passed/ })
  t.ok(jobs.has('jobflow-example-job1'), 'job1, which succeeded before the deadline, is kept')
  t.notOk(jobs.has('jobflow-example-job2'), 'job2 is not created past the deadline')
  t.match(records.find(r => r.name === 'job2'), { phase: 'Skipped', message: /^not started: the JobFlow passed/ })
  t.equal(response.status.phase, 'Failed')
  t.match(response.status.conditions, [{ type: 'Valid' }, { type: 'Failed', reason: 'DeadlineExceeded' }])
})
