// Events on the parents (src/effects/events.ts): which outcome earns which Event, and how a
// PodDisruptionBudget's refusal is told from another 429.
import t from 'tap'
import { EVENT_PERMISSIONS, eventFor } from '../../src/effects/events.js'
import { classify } from '../../src/effects/executor.js'
import type { Effect } from '../../src/effects/types.js'
import { PARENT, pod, evict, inject, applied, BUDGET, refusedByBudget } from '../helpers/events.js'

t.test(
  'an Event for what was applied, and a Warning for an eviction a PodDisruptionBudget refused; nothing else',
  async t => {
    t.same(eventFor(applied(inject('web-0'))), {
      type: 'Normal',
      reason: 'InjectedContainers',
      action: 'Inject',
      related: pod('web-0'),
      message: 'Injected ephemeral container debug into Pod web-0'
    })
    const two: Effect = {
      type: 'InjectEphemeralContainers',
      target: pod('web-0'),
      containers: [{ name: 'a' }, { name: 'b' }]
    }
    t.equal(eventFor(applied(two))?.message, 'Injected ephemeral containers a, b into Pod web-0')
    t.same(eventFor(applied(evict('web-0'))), {
      type: 'Normal',
      reason: 'EvictedPod',
      action: 'Evict',
      related: pod('web-0'),
      message: 'Evicted Pod web-0'
    })
    t.same(eventFor(refusedByBudget('web-0')), {
      type: 'Warning',
      reason: 'EvictionRefused',
      action: 'Evict',
      related: pod('web-0'),
      message: `Cannot evict Pod web-0: ${BUDGET}`
    })
    t.same(
      eventFor(
        applied({
          type: 'SetPodLabels',
          target: pod('web-0'),
          labels: { track: 'canary', 'jobhooks.io/ops-lifecycle': null }
        })
      ),
      {
        type: 'Normal',
        reason: 'LabelledPod',
        action: 'Label',
        related: pod('web-0'),
        message: 'Labelled Pod web-0: track=canary, removed jobhooks.io/ops-lifecycle'
      }
    )
    t.equal(
      eventFor(applied({ type: 'SetPodLabels', target: pod('web-0'), labels: { 'jobhooks.io/ops-lifecycle': 'opj' } }))
        ?.message,
      'Labelled Pod web-0: jobhooks.io/ops-lifecycle=opj'
    )
    t.same(
      eventFor(
        applied({
          type: 'SetPodCondition',
          target: pod('foo-1'),
          condition: {
            type: 'jobhooks.io/service-ready',
            status: 'False',
            reason: 'OperationPreparing',
            message: 'OperationJob opj takes the Pod out of traffic'
          }
        })
      ),
      {
        type: 'Normal',
        reason: 'SetPodCondition',
        action: 'SetCondition',
        related: pod('foo-1'),
        message:
          'Set condition jobhooks.io/service-ready=False on Pod foo-1: OperationJob opj takes the Pod out of traffic'
      }
    )
    t.same(
      eventFor(applied({ type: 'Delete', target: PARENT })),
      {
        type: 'Normal',
        reason: 'TTLExpired',
        action: 'Delete',
        message: 'Deleted OperationJob opj: its time to live has passed'
      },
      'the TTL: about the parent itself, nothing related'
    )

    for (const result of ['gone', 'refused', 'dry_run'] as const) {
      t.equal(eventFor({ effect: evict('web-0'), result }), undefined, `nothing for ${result}`)
    }
    t.equal(
      eventFor({ effect: evict('web-0'), result: 'failed', message: 'HTTP 500: etcd' }),
      undefined,
      'nothing for a failure retried as it is'
    )
    t.equal(eventFor({ effect: inject('web-0'), result: 'failed', message: 'HTTP 403: forbidden' }), undefined)
    t.same(EVENT_PERMISSIONS, [{ apiGroup: '', resource: 'events', verbs: ['create', 'patch'] }])
  }
)

t.test("classify tells a PodDisruptionBudget's refusal from another 429", async t => {
  // A StatusCause's type is `reason` in JSON.
  const status = (code: number, message: string, causes?: unknown[]): string =>
    JSON.stringify({
      kind: 'Status',
      status: 'Failure',
      code,
      message,
      ...(causes !== undefined ? { details: { causes } } : {})
    })
  t.same(
    classify(
      429,
      status(429, "Cannot evict pod as it would violate the pod's disruption budget.", [
        { reason: 'DisruptionBudget', message: BUDGET }
      ])
    ),
    {
      result: 'failed',
      message: "HTTP 429: Cannot evict pod as it would violate the pod's disruption budget.",
      disruptionBudget: BUDGET
    },
    'the cause names the budget'
  )
  t.same(
    classify(
      403,
      status(403, 'forbidden', [
        {
          reason: 'DisruptionBudget',
          message:
            'The disruption budget web does not allow evicting pods currently: pdb disruptions allowed is negative'
        }
      ])
    ).disruptionBudget,
    'The disruption budget web does not allow evicting pods currently: pdb disruptions allowed is negative',
    'a budget it cannot count refuses with 403'
  )
  t.same(
    classify(429, status(429, 'too many requests, please try again later')),
    { result: 'failed', message: 'HTTP 429: too many requests, please try again later' },
    "the API server's own throttling is no budget"
  )
})
