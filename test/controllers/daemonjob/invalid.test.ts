// Law 2: a DaemonJob spec the hook cannot act on keeps every observed child exactly as it is,
// creates nothing, and says why.
import t from 'tap'
import { syncDaemonJob } from '../../../src/controllers/daemonjob/sync.js'
import { responseOf } from '../../helpers/hooks.js'
import { keepAllObserved } from '../../../src/k8s/objects.js'
import type { SyncRequest } from '../../../src/protocol/hooks.js'
import { context, fixture } from '../../helpers/fixtures.js'
import { FIXED_NOW } from '../../helpers/app.js'
import { timestamp } from '../../../src/k8s/time.js'
import { condition } from '../../helpers/conditions.js'
import { specOf } from '../../helpers/objects.js'
import { jobLikeSpecOf } from '../../helpers/records.js'

const respond = responseOf(syncDaemonJob)

const cases: Array<[string, (spec: any, request: SyncRequest) => void, RegExp]> = [
  [
    'excludeNodeList as a list',
    spec => { spec.excludeNodeList = ['node-1', 'node-2'] },
    /spec.excludeNodeList must be one string of node names separated by commas/
  ],
  [
    'excludeNodeList as a number',
    spec => { spec.excludeNodeList = 3 },
    /spec.excludeNodeList must be one string .* not number/
  ],
  ['no template', spec => { delete spec.template }, /spec.template \(the pod template of every Job\) is missing/],
  [
    'a template without containers',
    spec => { spec.template.spec.containers = [] },
    /spec: the Job template has no containers/
  ],
  ['a template without a pod spec', spec => { delete spec.template.spec }, /spec: the Job template has no containers/],
  ['restartPolicy Always', spec => { spec.template.spec.restartPolicy = 'Always' }, /cannot have restartPolicy Always/],
  [
    'an unknown affinity operator',
    spec => {
      spec.template.spec.affinity = {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'a', operator: 'Near' }] }]
          }
        }
      }
    },
    /unknown operator "Near"/
  ],
  [
    'a script name with a path',
    spec => { spec.script = { name: '../etc/passwd' } },
    /script name "..\/etc\/passwd" is not a plain file name/
  ],
  [
    'an unknown script',
    spec => { spec.script = { name: 'nope.sh' } },
    /spec.script: unknown script "nope.sh": not in spec.scripts and not shipped/
  ],
  [
    'a script container that does not exist',
    spec => { spec.script = { name: 'retry.sh', container: 'sidecar' } },
    /spec.script: script retry.sh: no container "sidecar"/
  ],
  [
    'a bad inline script name',
    spec => { spec.scripts = { 'a/b': 'echo' } },
    /spec.scripts: "a\/b" is not a plain file name/
  ],
  [
    'globalParams of the wrong shape',
    spec => { spec.globalParams.labels = ['x'] },
    /spec.globalParams.labels must map names to strings/
  ],
  [
    'globalParams env that is not a list',
    spec => { spec.globalParams.env = 'FOO=bar' },
    /spec.globalParams.env must be a list of objects/
  ],
  ['no spec at all', (_spec, request) => { delete request.parent.spec }, /spec is missing/]
]

for (const [name, mutate, message] of cases) {
  t.test(`${name} keeps every child and reports Invalid`, async t => {
    const request = fixture('daemonjob/sync-running.v2.json')
    mutate(request.parent.spec, request)
    const response = respond(request, context())
    t.same(response.children, keepAllObserved(request.children), 'every observed child, unchanged; node-6 gets no Job')
    t.equal(response.children.length, 1)
    t.equal(response.status.phase, 'Invalid')
    const valid = condition(response.status, 'Valid')
    t.match(valid, { status: 'False', reason: 'InvalidSpec', message, lastTransitionTime: timestamp(FIXED_NOW) })
    t.equal(response.status.startTime, '2026-01-02T03:00:01Z', 'the rest of the status is carried')
    t.match(response.status, { desired: 1, active: 1, succeeded: 0, failed: 0 })
  })
}

t.test('outcomes observed while the spec is invalid are still recorded', async t => {
  const request = fixture('daemonjob/sync-finished.v2.json')
  specOf(request.parent).excludeNodeList = ['node-1']
  const response = respond(request, context())
  t.equal(response.status.phase, 'Invalid')
  t.match(
    response.status,
    { desired: 2, active: 0, succeeded: 1, failed: 1, succeededNodes: ['node-3'], failedNodes: [{ name: 'node-6' }] }
  )
  t.notOk('completionTime' in response.status, 'an invalid DaemonJob does not finish')
  t.same(response.children, keepAllObserved(request.children))
})

t.test('an invalid spec that stays invalid gives the same status (no churn); fixing it resumes', async t => {
  const request = fixture('daemonjob/sync-running.v2.json')
  const spec = specOf(request.parent)
  spec.excludeNodeList = ['node-1']
  const first = respond(request, context())
  request.parent.status = first.status
  const second = respond(request, context(new Date('2026-01-02T04:00:00Z')))
  t.same(second, first)
  spec.excludeNodeList = 'node-1, node-2'
  const fixed = respond(request, context())
  t.equal(fixed.status.phase, 'Running')
  t.match(condition(fixed.status, 'Valid'), { status: 'True', reason: 'SpecValid' })
  t.same(fixed.children.map(c => c.metadata.name), ['daemonjob-example-node-3', 'daemonjob-example-node-6'])
})

t.test('a finished DaemonJob keeps its phase when its spec turns invalid', async t => {
  const request = fixture('daemonjob/sync-finished.v2.json')
  const done = respond(request, context())
  request.parent.status = done.status
  jobLikeSpecOf(request.parent).template.spec!.restartPolicy = 'Always'
  const response = respond(request, context())
  t.equal(response.status.phase, 'Failed')
  t.equal(response.status.completionTime, done.status.completionTime)
  t.match(
    condition(response.status, 'Valid'),
    { status: 'False', message: /restartPolicy Always/ }
  )
})

t.test('an invalid spec with no children yet creates nothing', async t => {
  const request = fixture('daemonjob/sync-new.v2.json')
  delete specOf(request.parent).template
  const response = respond(request, context())
  t.same(response.children, [])
  t.match(response.status, { phase: 'Invalid', desired: 0 })
})
