import t from 'tap'
import { readFileSync } from 'node:fs'
import type { KubeObject } from '../../src/k8s/types.js'
import type { ActionContext, ActionJob, ActionTarget } from '../../src/actions/registry.js'
import { labelAction } from '../../src/actions/label.js'
import { job as operationJob, pod as testPod, T0 } from '../helpers/operationjob.js'
import { ActionRegistry } from '../../src/actions/index.js'
import { operationJobSyncHooks } from '../../src/controllers/operationjob/sync.js'
import { context, SHIPPED_SCRIPTS } from '../helpers/fixtures.js'
import { condition } from '../helpers/conditions.js'

const { handler } = labelAction
const job = (label: unknown): ActionJob => ({
  name: 'canary',
  namespace: 'default',
  uid: 'job-uid',
  spec: { action: 'Label', label },
  targets: ['web-0']
})
const ctx = (label: unknown = { labels: { track: 'canary' } }): ActionContext => ({
  job: job(label),
  related: {},
  now: T0,
  scripts: SHIPPED_SCRIPTS
})
const pod = (labels: Record<string, string> = {}, uid = 'pod-uid'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web-0', namespace: 'default', uid, labels }
})
const target = (p: KubeObject | undefined, extraInfo?: Record<string, string>): ActionTarget => ({
  name: 'web-0',
  containers: [],
  ...(p !== undefined ? { pod: p } : {}),
  detail: { name: 'web-0', progress: 'Processing', ...(extraInfo !== undefined ? { extraInfo } : {}) }
})
const ref = { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'web-0', uid: 'pod-uid' }

t.test('operate owes the labels the Pod lacks, as one UID-guarded patch, and nothing once they are there', async t => {
  t.same(handler.operate(target(pod({ app: 'web' })), ctx()), {
    effects: [{ type: 'SetPodLabels', target: ref, labels: { track: 'canary' } }],
    extraInfo: { PodUID: 'pod-uid' }
  })
  t.same(
    handler.operate(target(pod({ track: 'canary' })), ctx()).effects,
    [],
    'already labelled: nothing owed (idempotent)'
  )
  const two = handler.operate(target(pod({ a: '1' })), ctx({ labels: { a: '1', b: '2' } }))
  t.same(two.effects, [{ type: 'SetPodLabels', target: ref, labels: { b: '2' } }], 'only what is missing')
})

t.test("a label the Pod has with another value: LabelConflict, unless overwrite (kubectl label's rule)", async t => {
  t.match(handler.operate(target(pod({ track: 'stable' })), ctx()), {
    effects: [],
    error: { reason: 'LabelConflict', message: /has track=stable; set spec.label.overwrite/ }
  })
  t.same(
    handler.operate(target(pod({ track: 'stable' })), ctx({ labels: { track: 'canary' }, overwrite: true })).effects,
    [{ type: 'SetPodLabels', target: ref, labels: { track: 'canary' } }]
  )
})

t.test(
  'progress: Succeeded once every label is there with its value; a gone or remade Pod fails PodNotFound',
  async t => {
    t.same(handler.progress(target(pod({ track: 'canary', app: 'web' })), ctx()), { progress: 'Succeeded' })
    t.same(handler.progress(target(pod({})), ctx()), { progress: 'Processing' })
    t.same(handler.progress(target(pod({ track: 'stable' })), ctx({ labels: { track: 'canary' }, overwrite: true })), {
      progress: 'Processing'
    })
    t.match(handler.progress(target(undefined), ctx()), { progress: 'Failed', error: { reason: 'PodNotFound' } })
    t.match(handler.operate(target(undefined), ctx()), { effects: [], error: { reason: 'PodNotFound' } })
    t.match(handler.progress(target(pod({}, 'new-uid'), { PodUID: 'pod-uid' }), ctx()), {
      progress: 'Failed',
      error: { reason: 'PodNotFound', message: /replaced by another Pod/ }
    })
    t.same(handler.release(target(pod({ track: 'canary' })), ctx()), { effects: [] }, 'nothing to undo')
  }
)

t.test("validate: label keys the API server would refuse, and the service's own jobhooks.io/ labels", async t => {
  t.same(handler.validate?.(job({ labels: { track: 'canary', 'example.com/team': 'a' } }), SHIPPED_SCRIPTS), [])
  t.match(handler.validate?.(job({ labels: { 'bad key': 'x' } }), SHIPPED_SCRIPTS), [/"bad key" is not a label key/])
  t.match(handler.validate?.(job({ labels: { 'jobhooks.io/to-replace': 'true' } }), SHIPPED_SCRIPTS), [
    /belong to the jobhooks service/
  ])
})

t.test(
  'through the OperationJob hook: the schema, then validate, make an unusable job Invalid and nothing is done',
  async t => {
    const registry = new ActionRegistry([labelAction])
    const cases: Array<[string, unknown, RegExp]> = [
      ['no spec.label', undefined, /^spec.label is required for action Label$/],
      ['no labels', {}, /^spec.label.labels is required$/],
      ['no labels at all', { labels: {} }, /^spec.label.labels must have at least 1 entries$/],
      [
        'a value that is not a label value',
        { labels: { track: 'not ok' } },
        /^spec.label.labels\["track"\] must match/
      ],
      ['a number', { labels: { replicas: 3 } }, /must be a string/],
      ['overwrite as text', { labels: { a: 'b' }, overwrite: 'yes' }, /^spec.label.overwrite must be true or false$/],
      ['a protected key', { labels: { 'jobhooks.io/ops-lifecycle': 'x' } }, /belong to the jobhooks service/]
    ]
    for (const [what, label, message] of cases) {
      const parent = operationJob({
        action: 'Label',
        targets: [{ name: 'a' }],
        ...(label !== undefined ? { label } : {})
      })
      const answer = operationJobSyncHooks(registry).sync(
        { parent, children: {}, related: { 'Pod.v1': { 'default/a': testPod('a') } }, finalizing: false },
        context(T0)
      )
      t.equal(answer.response.status.progress, 'Invalid', what)
      t.match(condition(answer.response.status, 'Valid')?.message, message, what)
      t.same(answer.effects, [], `${what}: nothing done`)
    }
  }
)

t.test(
  'docs/plugins.md, "Writing an action", quotes src/actions/label.ts and src/actions/index.ts as they are',
  async t => {
    const root = new URL('../../', import.meta.url)
    const section = readFileSync(new URL('docs/plugins.md', root), 'utf8')
    t.match(section, /^# Writing an action$/m, 'the page of "Writing an action"')
    const sources = ['src/actions/label.ts', 'src/actions/index.ts'].map(f => readFileSync(new URL(f, root), 'utf8'))
    const blocks = [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map(m => m[1] as string)
    t.ok(blocks.length >= 6, `${blocks.length} code blocks`)
    for (const block of blocks) {
      t.ok(
        sources.some(source => source.includes(block)),
        `quoted as it is: ${block.split('\n')[0] as string}`
      )
    }
  }
)
