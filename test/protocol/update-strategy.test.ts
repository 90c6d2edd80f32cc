// Each kind declares the child update strategies its answers are safe under; a controller that
// gives a child resource any other strategy is refused, naming the resource, its strategy and
// what is safe. Every kind's declaration matches what its answers do.
import t from 'tap'
import { unsafeChildResources, updateStrategyProblem } from '../../src/protocol/update-strategy.js'
import { keptAsApplied, syncRequestShape, type KindHooks } from '../../src/protocol/hooks.js'
import { project } from '../../src/protocol/projection.js'
import { LAST_APPLIED_ANNOTATION } from '../../src/k8s/objects.js'
import { ALL_KINDS } from '../../src/controllers/kinds.js'

const jobflow = ALL_KINDS.find((k) => k.kind === 'jobflow') as KindHooks
const daemonjob = ALL_KINDS.find((k) => k.kind === 'daemonjob') as KindHooks

function controller (...children: Array<[string, string, string | undefined]>): unknown {
  return {
    metadata: { name: 'c' },
    spec: {
      childResources: children.map(([apiVersion, resource, method]) => ({
        apiVersion,
        resource,
        ...(method !== undefined ? { updateStrategy: { method } } : {}),
      })),
    },
  }
}

t.test('OnDelete, an empty method or none at all is always safe', async (t) => {
  for (const kind of ALL_KINDS) {
    for (const method of [undefined, '', 'OnDelete']) {
      t.same(
        unsafeChildResources(
          controller(['batch/v1', 'jobs', method], ['v1', 'configmaps', method], ['v1', 'pods', method]),
          kind
        ),
        [],
        `${kind.kind} ${String(method)}`
      )
    }
    t.equal(updateStrategyProblem(undefined, kind), undefined, `${kind.kind}: no controller`)
    t.equal(updateStrategyProblem({ spec: { childResources: 'x' } }, kind), undefined, `${kind.kind}: no list`)
  }
})

t.test('JobFlow: its Jobs InPlace too, nothing else', async (t) => {
  t.same(
    unsafeChildResources(controller(['batch/v1', 'jobs', 'InPlace'], ['v1', 'configmaps', 'OnDelete']), jobflow),
    []
  )
  t.same(unsafeChildResources(controller(['batch/v1', 'jobs', 'Recreate'], ['v1', 'configmaps', 'InPlace']), jobflow), [
    'jobs.batch/v1 (Recreate; safe: OnDelete, InPlace)',
    'configmaps.v1 (InPlace; safe: OnDelete)',
  ])
  // Another version of the same resource is not what the kind declared.
  t.same(unsafeChildResources(controller(['batch/v2', 'jobs', 'InPlace']), jobflow), [
    'jobs.batch/v2 (InPlace; safe: OnDelete)',
  ])
  t.equal(
    updateStrategyProblem(controller(['batch/v1', 'jobs', 'RollingInPlace']), jobflow),
    "c gives child resources update strategies the jobflow hooks' answers are not safe under, " +
      'which the manifests never do: jobs.batch/v1 (RollingInPlace; safe: OnDelete, InPlace)'
  )
})

t.test('CronJobFlow: its JobFlows OnDelete only (Replace stops a run with an effect)', async (t) => {
  const cron = ALL_KINDS.find((k) => k.kind === 'cronjobflow') as (typeof ALL_KINDS)[number]
  const runs = (method: string): [string, string, string] => ['jobhooks.io/v1alpha1', 'jobflows', method]
  t.same(unsafeChildResources(controller(runs('OnDelete')), cron), [])
  t.same(unsafeChildResources(controller(runs('InPlace')), cron), [
    'jobflows.jobhooks.io/v1alpha1 (InPlace; safe: OnDelete)',
  ], 'a controller at InPlace gets a 400: the identity answer would empty the runs')
  t.same(keptAsApplied(cron), [], 'its runs are kept by identity')
})

t.test('every other kind: OnDelete only', async (t) => {
  for (const kind of ALL_KINDS.filter((k) => k.kind !== 'jobflow' && k.kind !== 'cronjobflow')) {
    const unsafe = unsafeChildResources(
      controller(['batch/v1', 'jobs', 'InPlace'], ['v1', 'pods', 'InPlace'], ['v1', 'configmaps', 'Recreate']),
      kind
    )
    t.same(
      unsafe,
      [
        'jobs.batch/v1 (InPlace; safe: OnDelete)',
        'pods.v1 (InPlace; safe: OnDelete)',
        'configmaps.v1 (Recreate; safe: OnDelete)',
      ],
      kind.kind
    )
    t.same(keptAsApplied(kind), [], `${kind.kind} keeps its children by identity`)
  }
  t.match(
    updateStrategyProblem(
      {
        spec: { childResources: [{ apiVersion: 'batch/v1', resource: 'jobs', updateStrategy: { method: 'InPlace' } }] },
      },
      daemonjob
    ),
    /^the CompositeController gives .* daemonjob hooks/
  )
})

t.test('a kind keeps as last applied exactly the groups it lets Metacontroller update', async (t) => {
  t.same(keptAsApplied(jobflow), ['Job.batch/v1'])
  t.same(
    keptAsApplied({
      childUpdates: {
        'A.v1': { resource: 'as', methods: ['OnDelete'] },
        'B.v1': { resource: 'bs', methods: ['InPlace'] },
      },
    }),
    ['B.v1']
  )
  t.same(keptAsApplied({}), [])
  // Every group a kind declares is one it reads (its reads name the same groups).
  for (const kind of ALL_KINDS) {
    for (const group of Object.keys(kind.childUpdates ?? {})) {
      t.ok(Object.hasOwn(kind.reads?.children ?? {}, group), `${kind.kind}: ${group} is a child group it reads`)
    }
  }
})

t.test('a group kept as last applied is read with its last-applied annotation, and only that annotation', async (t) => {
  for (const kind of ALL_KINDS) {
    for (const group of keptAsApplied(kind)) {
      const [childKind, apiVersion] = [group.slice(0, group.indexOf('.')), group.slice(group.indexOf('.') + 1)]
      const child = {
        apiVersion,
        kind: childKind,
        metadata: { name: 'x', namespace: 'ns', annotations: { [LAST_APPLIED_ANNOTATION]: '{"a":1}', other: 'y' } },
      }
      const request = {
        parent: { apiVersion: 'v1', kind: 'P', metadata: { name: 'p' } },
        children: { [group]: { 'ns/x': child } },
      }
      const built = project(Buffer.from(JSON.stringify(request)), syncRequestShape(kind.reads)) as {
        children: Record<string, Record<string, { metadata: { annotations?: unknown } }>>
      }
      t.same(
        built.children[group]?.['ns/x']?.metadata.annotations,
        { [LAST_APPLIED_ANNOTATION]: '{"a":1}' },
        `${kind.kind}: ${group}`
      )
    }
  }
})
