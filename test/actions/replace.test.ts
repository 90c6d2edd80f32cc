// Replace, one sync at a time: the label request, NewPod, what counts as success, and release.
import t from 'tap'
import type { KubeObject } from '../../src/k8s/types.js'
import { defaultActions } from '../../src/actions/index.js'
import { finalizeOperationJob, syncOperationJob } from '../../src/controllers/operationjob/sync.js'
import { REPLACE_ORIGIN_LABEL, TO_REPLACE_LABEL } from '../../src/k8s/labels.js'
import type { SyncAnswer } from '../../src/protocol/hooks.js'
import { at, detailOf, job, request, workloadPod } from '../helpers/operationjob.js'
import { context } from '../helpers/fixtures.js'

const CLS = { apiVersion: 'jobhooks.io/v1alpha1', kind: 'CollaSet', name: 'foo', uid: 'cls-uid', controller: true }

function pod (
  name: string,
  options: {
    ready?: boolean
    origin?: string
    toReplace?: boolean
    owner?: boolean
    terminating?: boolean
    uid?: string
  } = {}
): KubeObject {
  const ready = options.ready !== false
  return workloadPod(name, {
    ...(options.uid !== undefined ? { uid: options.uid } : {}),
    ready,
    gated: true,
    serviceReady: ready ? 'True' : 'False',
    terminating: options.terminating === true,
    labels: {
      app: 'foo',
      ...(options.origin !== undefined ? { [REPLACE_ORIGIN_LABEL]: options.origin } : {}),
      ...(options.toReplace === true ? { [TO_REPLACE_LABEL]: 'true' } : {})
    },
    ...(options.owner === false ? {} : { owner: CLS })
  })
}

const processing = (extraInfo: Record<string, string> = { PodUID: 'uid-foo-a' }): Record<string, unknown> => ({
  progress: 'Processing',
  startTime: '2026-01-02T03:00:00Z',
  targetDetails: [{ name: 'foo-a', progress: 'Processing', startTime: '2026-01-02T03:00:00Z', extraInfo }]
})
const replace = (status?: Record<string, unknown>): KubeObject =>
  job({ action: 'Replace', targets: [{ name: 'foo-a' }] }, status)
const sync = (parent: KubeObject, pods: KubeObject[], seconds = 10): SyncAnswer =>
  syncOperationJob(request(parent, pods), context(at(seconds)))

t.test('a new target: the Pod is labelled to-replace=true (an effect), once', async t => {
  const answer = sync(replace(), [pod('foo-a')], 0)
  t.same(answer.effects, [
    {
      type: 'SetPodLabels',
      target: { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'foo-a', uid: 'uid-foo-a' },
      labels: { [TO_REPLACE_LABEL]: 'true' }
    }
  ])
  t.match(detailOf(answer), { progress: 'Processing', extraInfo: { PodUID: 'uid-foo-a' } })
  const again = sync(replace(processing()), [pod('foo-a', { toReplace: true })])
  t.same(again.effects, [], 'already labelled: nothing owed')
})

t.test('NewPod is recorded as soon as the replacement is seen; the origin still there keeps it Processing', async t => {
  const answer = sync(replace(processing()), [pod('foo-a', { toReplace: true }), pod('foo-n', { origin: 'foo-a' })])
  t.match(detailOf(answer), { progress: 'Processing', extraInfo: { NewPod: 'foo-n' } })
})

t.test('the origin gone and the replacement Ready and serving: Succeeded', async t => {
  const answer = sync(replace(processing()), [pod('foo-n', { origin: 'foo-a' })])
  t.match(detailOf(answer), { progress: 'Succeeded', extraInfo: { NewPod: 'foo-n' } })
  t.equal(answer.response.status.progress, 'Succeeded')
})

t.test('the origin gone (deleted by hand) with the replacement not Ready: still Processing', async t => {
  const answer = sync(replace(processing({ PodUID: 'uid-foo-a', NewPod: 'foo-n' })), [
    pod('foo-n', { origin: 'foo-a', ready: false })
  ])
  t.match(detailOf(answer), { progress: 'Processing', extraInfo: { NewPod: 'foo-n' } })
  const terminating = sync(replace(processing({ PodUID: 'uid-foo-a', NewPod: 'foo-n' })), [
    pod('foo-a', { toReplace: true, terminating: true }),
    pod('foo-n', { origin: 'foo-a', ready: false })
  ])
  t.equal(detailOf(terminating).progress, 'Processing', 'a terminating origin is not success either')
})

t.test('the origin gone and no replacement ever seen: PodNotFound', async t => {
  const answer = sync(replace(processing()), [])
  t.match(detailOf(answer), { progress: 'Failed', error: { reason: 'PodNotFound' } })
})

t.test('another Pod of the same name is not the target', async t => {
  const answer = sync(replace(processing()), [pod('foo-a', { uid: 'uid-other' })])
  t.match(detailOf(answer), { progress: 'Failed', error: { reason: 'PodNotFound' } })
  t.same(answer.effects, [], 'the other Pod is not labelled')
})

t.test('a replacement Pod is not replaced: NotAllowedToReplaceNewPod, no label', async t => {
  const answer = sync(job({ action: 'Replace', targets: [{ name: 'foo-n' }] }), [pod('foo-n', { origin: 'foo-a' })], 0)
  t.match(detailOf(answer), {
    progress: 'Processing',
    extraInfo: { NotAllowedToReplaceNewPod: /itself the replacement of foo-a/ }
  })
  t.same(answer.effects, [])
})

t.test('a Pod no CollaSet controls fails NotCollaSetPod', async t => {
  const answer = sync(replace(), [pod('foo-a', { owner: false })], 0)
  t.match(detailOf(answer), { progress: 'Failed', error: { reason: 'NotCollaSetPod' } })
  t.same(answer.effects, [])
})

t.test('deleting the job releases the Pod: the label goes, then the job may go', async t => {
  const parent = replace(processing({ PodUID: 'uid-foo-a', NewPod: 'foo-n' }))
  const pods = [pod('foo-a', { toReplace: true }), pod('foo-n', { origin: 'foo-a', ready: false })]
  const answer = finalizeOperationJob({ ...request(parent, pods), finalizing: true }, context(at(20)))
  t.same(answer.effects, [
    {
      type: 'SetPodLabels',
      target: { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'foo-a', uid: 'uid-foo-a' },
      labels: { [TO_REPLACE_LABEL]: null }
    }
  ])
  t.equal(answer.response.finalized, false, 'not finalized while the label is on')
  t.match(detailOf(answer), { progress: 'Failed', error: { reason: 'Cancelled' } })
  const done = finalizeOperationJob(
    { ...request({ ...parent, status: answer.response.status }, [pod('foo-a')]), finalizing: true },
    context(at(25))
  )
  t.equal(done.response.finalized, true)
})

t.test('Replace asks for the replacements of its targets by label', async t => {
  t.same(
    defaultActions
      .get('Replace')
      ?.handler.relatedResources?.({
        name: 'ops',
        namespace: 'default',
        spec: { targets: [{ name: 'foo-b' }, { name: 'foo-a' }] },
        targets: ['foo-b', 'foo-a']
      }),
    [
      {
        apiVersion: 'v1',
        resource: 'pods',
        labelSelector: { matchExpressions: [{ key: REPLACE_ORIGIN_LABEL, operator: 'In', values: ['foo-a', 'foo-b'] }] }
      }
    ]
  )
})
