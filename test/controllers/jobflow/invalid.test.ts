// Law 2: a spec the hook cannot act on keeps every observed child exactly as it is and says why.
import t from 'tap'
import { syncJobFlow } from '../../../src/controllers/jobflow/sync.js'
import { responseOf } from '../../helpers/hooks.js'
import { keepAllObserved } from '../../../src/k8s/objects.js'
import type { SyncRequest } from '../../../src/protocol/hooks.js'
import { context, fixture } from '../../helpers/fixtures.js'
import { FIXED_NOW } from '../../helpers/app.js'
import { timestamp } from '../../../src/k8s/time.js'
import { condition } from '../../helpers/conditions.js'
import type { JobRecord } from '../../../src/controllers/jobflow/records.js'
import type { Condition } from '../../../src/k8s/types.js'
import { specOf, statusOf } from '../../helpers/objects.js'
import { type JobFlowManifestSpec, listOf } from '../../helpers/records.js'

const respond = responseOf(syncJobFlow)

const cases: Array<[string, (spec: any, request: SyncRequest) => void, RegExp]> = [
  [
    'a dependency cycle',
    spec => { spec.flows[0].dependencies = ['job3'] },
    /dependency cycle: job1 → job3 → job(1|2)/
  ],
  ['a flow that depends on itself', spec => { spec.flows[1].dependencies = ['job2'] }, /flow "job2" depends on itself/],
  [
    'an unknown dependency',
    spec => { spec.flows[2].dependencies = ['job9'] },
    /flow "job3" depends on unknown flow "job9"/
  ],
  ['duplicate names', spec => { spec.flows[4].name = 'job4' }, /duplicate flow name "job4"/],
  ['a parallelism of 0', spec => { spec.parallelism = 0 }, /spec\.parallelism must be a whole number of at least 1/],
  [
    'both templates',
    spec => { spec.flows[1].jobTemplateRef = 'builder' },
    /flow "job2": set exactly one of jobTemplate and jobTemplateRef/
  ],
  [
    'neither template',
    spec => { delete spec.flows[1].jobTemplate },
    /flow "job2": set exactly one of jobTemplate and jobTemplateRef/
  ],
  [
    'a missing JobTemplate',
    spec => { delete spec.flows[1].jobTemplate; spec.flows[1].jobTemplateRef = 'nowhere' },
    /flow "job2": JobTemplate "nowhere" not found in namespace default/
  ],
  [
    'a flow name that cannot be part of a Job name',
    spec => { spec.flows[3].name = 'Job_4'; spec.flows[4].dependencies = ['Job_4'] },
    /name "Job_4" must be a lowercase RFC 1123 label/
  ],
  ['no flows', spec => { spec.flows = [] }, /spec.flows must list at least one flow/],
  [
    'a template without containers',
    spec => { spec.flows[1].jobTemplate.template.spec.containers = [] },
    /flow "job2": the Job template has no containers/
  ],
  [
    'restartPolicy Always',
    spec => { spec.flows[1].jobTemplate.template.spec.restartPolicy = 'Always' },
    /cannot have restartPolicy Always/
  ],
  [
    'a script name with a path',
    spec => { spec.flows[1].script = { name: '../etc/passwd' } },
    /script name "..\/etc\/passwd" is not a plain file name/
  ],
  [
    'an unknown script',
    spec => { spec.flows[1].script = { name: 'nope.sh' } },
    /unknown script "nope.sh": not in spec.scripts and not shipped \(shipped: http-check.sh, retry.sh, wait-for.sh\)/
  ],
  [
    'a bad inline script name',
    spec => { spec.scripts = { 'a/b': 'echo' } },
    /spec.scripts: "a\/b" is not a plain file name/
  ],
  [
    'a script container that does not exist',
    spec => { spec.flows[1].script = { name: 'retry.sh', container: 'sidecar' } },
    /flow "job2": script retry.sh: no container "sidecar"/
  ],
  [
    'globalParams of the wrong shape',
    spec => { spec.globalParams.labels = ['x'] },
    /spec.globalParams.labels must map names to strings/
  ],
  ['no spec at all', (_spec, request) => { delete request.parent.spec }, /spec is missing/]
]

for (const [name, mutate, message] of cases) {
  t.test(`${name} keeps every child and reports Invalid`, async t => {
    const request = fixture('jobflow/sync-job1-done.v2.json')
    mutate(request.parent.spec, request)
    const response = respond(request, context())
    t.same(response.children, keepAllObserved(request.children), 'every observed child, unchanged')
    t.equal(response.children.length, 2)
    t.equal(response.status.phase, 'Invalid')
    const valid = condition(response.status, 'Valid')
    t.match(valid, { status: 'False', reason: 'InvalidSpec', message, lastTransitionTime: timestamp(FIXED_NOW) })
    t.equal(response.status.startTime, '2026-01-02T03:00:05Z', 'the rest of the status is carried')
    t.equal(response.status.jobsSucceeded, '1/5', 'the JOBS column counts the records, job1 now succeeded')
    const job1 = listOf<JobRecord>(response.status, 'jobs').find(j => j.name === 'job1')
    t.match(
      job1,
      { phase: 'Succeeded', completionTime: '2026-01-02T03:00:17Z' },
      'outcomes observed meanwhile are still recorded'
    )
    for (const record of listOf<JobRecord>(response.status, 'jobs').filter(j => j.phase === 'Pending')) {
      t.match(record.message, /^held by the invalid spec: /, `${record.name}: held, not waiting or starting`)
      t.match(record.message, message, `${record.name}: the message names the problem`)
    }
  })
}

t.test('an invalid spec with no children yet creates nothing', async t => {
  const request = fixture('jobflow/sync-template-missing.v2.json')
  const response = respond(request, context())
  t.same(response.children, [])
  t.equal(response.status.phase, 'Invalid')
  t.match(
    listOf<Condition>(response.status, 'conditions')[0],
    { type: 'Valid', status: 'False', message: /JobTemplate "tester" not found/ }
  )
})

t.test('an invalid spec that stays invalid gives the same status (no churn)', async t => {
  const request = fixture('jobflow/sync-cycle.v2.json')
  const first = respond(request, context())
  request.parent.status = first.status
  const second = respond(request, context(new Date('2026-01-02T04:00:00Z')))
  t.same(second, first)
})

t.test('fixing the spec resumes where it left off', async t => {
  const request = fixture('jobflow/sync-cycle.v2.json')
  const broken = respond(request, context())
  request.parent.status = broken.status
  specOf<JobFlowManifestSpec>(request.parent).flows[0]!.dependencies = []
  const fixed = respond(request, context())
  t.equal(fixed.status.phase, 'Running')
  t.match(condition(fixed.status, 'Valid'), { status: 'True', reason: 'SpecValid' })
  t.same(fixed.children.map(c => c.metadata.name), ['jobflow-example-job1', 'jobflow-example-job4'])
})

t.test('only flows still to start need their JobTemplate and script', async t => {
  const request = fixture('jobflow/sync-job1-done.v2.json')
  const spec = specOf<JobFlowManifestSpec>(request.parent)
  // job1 ran from a JobTemplate and a script that are both gone now.
  delete spec.flows[0]!.jobTemplate
  spec.flows[0]!.jobTemplateRef = 'deleted-meanwhile'
  spec.flows[0]!.script = { name: 'gone.sh' }
  const response = respond(request, context())
  t.equal(response.status.phase, 'Running')
  t.same(
    response.children.map(c => c.metadata.name),
    ['jobflow-example-job1', 'jobflow-example-job2', 'jobflow-example-job4']
  )
  t.equal(response.children.filter(c => c.kind === 'ConfigMap').length, 0, 'no ConfigMap for a script nobody can run')

  spec.flows[1]!.script = { name: 'gone.sh' }
  const blocked = respond(request, context())
  t.equal(blocked.status.phase, 'Invalid', 'a flow still to start does need it')
  t.match(listOf<Condition>(blocked.status, 'conditions')[0]?.message, /unknown script "gone.sh"/)
})

t.test('a missing JobTemplate asks for a resync before Metacontroller forgets what we asked for', async t => {
  const response = respond(fixture('jobflow/sync-template-missing.v2.json'), context())
  t.equal(response.resyncAfterSeconds, 300)
  t.notOk(
    'resyncAfterSeconds' in respond(fixture('jobflow/sync-cycle.v2.json'), context()),
    'other problems wait for an edit'
  )
})

t.test('a finished JobFlow keeps its phase when its spec turns invalid', async t => {
  for (const outcome of ['Succeeded', 'Failed'] as const) {
    const request = fixture('jobflow/sync-cycle.v2.json')
    const status = statusOf<{ completionTime?: string, phase?: string, jobs: JobRecord[] }>(request.parent)
    status.completionTime = '2026-01-02T03:02:00Z'
    status.phase = outcome
    status.jobs = status.jobs.map(
      j => ({ ...j, phase: j.name === 'job2' && outcome === 'Failed' ? 'Failed' : 'Succeeded' })
    )
    const response = respond(request, context())
    t.equal(response.status.phase, outcome)
    t.match(
      condition(response.status, 'Valid'),
      { status: 'False', message: /dependency cycle/ }
    )
    t.same(response.children, keepAllObserved(request.children))
  }
})

t.test('what would fail a step when it is due is Invalid at the first sync, before any Job', async t => {
  // Until 0.3.0: build ran, and the spec turned Invalid only when test was due; list ran, and
  // load was skipped (list succeeded) or failed (list had no output to read items from).
  const cases: Array<[string, string]> = [
    ['sync-output-from-missing.v2.json', 'flow "test": outputFrom names no container of its pod: report'],
    [
      'sync-foreach-from-unreadable.v2.json',
      'flow "load": depends "list.Failed || list.Omitted" holds only when list did not succeed, so ' +
        'forEachFrom list could never read items (list has an output only once it succeeded)'
    ]
  ]
  for (const [file, message] of cases) {
    const response = respond(fixture(`jobflow/${file}`), context())
    t.equal(response.status.phase, 'Invalid', file)
    t.same(response.children, [], file)
    t.match(condition(response.status, 'Valid'), { status: 'False', message }, file)
  }
})
