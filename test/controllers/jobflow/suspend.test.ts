import t from 'tap'
import { keptJob, suspendedCondition, SUSPENDED_BY_JOBFLOW } from '../../../src/controllers/jobflow/suspend.js'
import type { KubeObject } from '../../../src/k8s/types.js'
import { LAST_APPLIED_ANNOTATION } from '../../../src/k8s/objects.js'

const NOW = new Date('2026-01-02T03:04:05Z')

/** A Job as Metacontroller created it from `applied`, with the Job controller's status. */
function observedJob (applied: KubeObject, status: Record<string, unknown> = { active: 1 }): KubeObject {
  return {
    ...structuredClone(applied),
    metadata: {
      ...structuredClone(applied.metadata),
      uid: 'u1',
      annotations: { ...applied.metadata.annotations, [LAST_APPLIED_ANNOTATION]: JSON.stringify(applied) }
    },
    status
  }
}

const applied: KubeObject = {
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'jf-a', namespace: 'default', labels: { 'jobhooks.io/flow': 'a' } },
  spec: {
    backoffLimit: 0,
    template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } }
  }
}

t.test('a kept Job is answered as last applied: nothing for Metacontroller to change', async t => {
  t.same(keptJob(observedJob(applied), false), { job: applied, suspended: false })
})

t.test('suspending sets spec.suspend and the mark, nothing else; resuming sets it back and drops the mark', async t => {
  const suspended = keptJob(observedJob(applied), true)
  t.equal(suspended.suspended, true)
  t.same(
    suspended.job,
    {
      ...applied,
      metadata: { ...applied.metadata, annotations: { [SUSPENDED_BY_JOBFLOW]: 'true' } },
      spec: { ...applied.spec as object, suspend: true }
    }
  )
  // Metacontroller applied that: it is the last-applied copy now.
  const again = keptJob(observedJob(suspended.job), true)
  t.same(again, { job: suspended.job, suspended: true }, 'still suspended: the same answer, no write')
  const resumed = keptJob(observedJob(suspended.job), false)
  t.same(resumed, { job: { ...applied, spec: { ...applied.spec as object, suspend: false } }, suspended: false })
})

t.test('a Job whose template suspends it, a finished Job, and a Job without the annotation are left as they ' +
  'are', async t => {
  const own = { ...applied, spec: { ...applied.spec as object, suspend: true } }
  t.same(
    keptJob(observedJob(own), true),
    { job: own, suspended: false },
    'suspended by its template: not ours to resume'
  )
  t.same(keptJob(observedJob(own), false), { job: own, suspended: false })
  const done = observedJob(applied, { conditions: [{ type: 'Complete', status: 'True' }] })
  t.same(keptJob(done, true), { job: applied, suspended: false }, 'a finished Job is never touched')
  const bare = { ...observedJob(applied), metadata: { name: 'jf-a', namespace: 'default' } }
  t.same(
    keptJob(bare, true).job,
    { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'jf-a', namespace: 'default' } },
    'nothing to merge against: the identity'
  )
})

t.test('a queued Job is Kueue\'s to suspend and resume, a Job managed by another controller its own', async t => {
  const queued: KubeObject = {
    ...applied,
    metadata: { ...applied.metadata, labels: { ...applied.metadata.labels, 'kueue.x-k8s.io/queue-name': 'team-a' } },
    spec: { ...applied.spec as object, suspend: true }
  }
  // Kueue admitted it: the observed Job runs, unsuspended by Kueue.
  const admitted = { ...observedJob(queued), spec: { ...queued.spec as object, suspend: false } }
  // Metacontroller's merge takes every scalar of the answer: it must be Kueue's `false`, not the last-applied `true`.
  const asAdmitted = { ...queued, spec: { ...queued.spec as object, suspend: false } }
  t.same(keptJob(admitted, true), { job: asAdmitted, suspended: false, leftTo: 'Kueue (queue team-a)' },
    'suspending the flow answers it as applied with Kueue\'s suspend: the merge changes nothing')
  t.same(keptJob(admitted, false), { job: asAdmitted, suspended: false, leftTo: 'Kueue (queue team-a)' },
    'resuming the flow does not unsuspend a Job Kueue holds')
  const waiting = observedJob(queued)
  t.same(keptJob(waiting, false), { job: queued, suspended: false, leftTo: 'Kueue (queue team-a)' },
    'resuming the flow does not unsuspend a Job waiting for admission')
  const done = observedJob(asAdmitted, { succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] })
  done.metadata.annotations = { [LAST_APPLIED_ANNOTATION]: JSON.stringify(queued) }
  t.same(keptJob(done, true), { job: asAdmitted, suspended: false },
    'a queued Job that finished keeps the suspend Kueue left it')
  const remote = { ...applied, spec: { ...applied.spec as object, managedBy: 'kueue.x-k8s.io/multikueue' } }
  t.same(keptJob(observedJob(remote), true), { job: remote, suspended: false, leftTo: 'kueue.x-k8s.io/multikueue' })
  const builtIn = { ...applied, spec: { ...applied.spec as object, managedBy: 'kubernetes.io/job-controller' } }
  t.equal(keptJob(observedJob(builtIn), true).suspended, true, 'the built-in Job controller: ours to suspend')
})

t.test('condition Suspended: True with the count while suspended, False once resumed, absent before', async t => {
  const none = { suspended: 0, leftTo: [] }
  const on = suspendedCondition([], true, { suspended: 2, leftTo: [] }, NOW)
  t.match(on, [{ type: 'Suspended', status: 'True', reason: 'JobFlowSuspended', message: /2 running Jobs suspended/ }])
  t.match(suspendedCondition(on, false, none, NOW), [{ type: 'Suspended', status: 'False', reason: 'JobFlowResumed' }])
  t.same(suspendedCondition([], false, none, NOW), [], 'never suspended: no condition')
  t.match(
    suspendedCondition([], true, none, NOW),
    [{ message: 'spec.suspend is true: no new Job starts' }],
    'nothing running: no count'
  )
  t.match(
    suspendedCondition([], true, { suspended: 1, leftTo: ['jf-b (Kueue (queue team-a))'] }, NOW),
    [{
      message: 'spec.suspend is true: no new Job starts; 1 running Job suspended; left as they are: ' +
      'jf-b (Kueue (queue team-a))'
    }],
    'the Jobs left to Kueue, named'
  )
})
