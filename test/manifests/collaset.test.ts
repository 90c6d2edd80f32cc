// The CollaSet CRD: the reference's columns, the scale subresource, and what it refuses.
import t from 'tap'
import { syncCollaSet } from '../../src/controllers/collaset/sync.js'
import {
  type Json, NOW, clone, crds, storageVersion, openApiErrors, celErrors, examples
} from '../helpers/manifests.js'

t.test("the CollaSet CRD: the reference's columns, scale subresource, and what it refuses", async t => {
  const crd = crds.find(c => c.spec.names.kind === 'CollaSet')
  const version = storageVersion(crd)
  t.same(
    version.additionalPrinterColumns.map((c: Json) => c.name),
    [
      'DESIRED',
      'CURRENT',
      'AVAILABLE',
      'UPDATED',
      'UPDATED_READY',
      'UPDATED_AVAILABLE',
      'CURRENT_REVISION',
      'UPDATED_REVISION',
      'AGE'
    ]
  )
  t.same(version.subresources.scale, {
    specReplicasPath: '.spec.replicas',
    statusReplicasPath: '.status.replicas',
    labelSelectorPath: '.status.selector'
  })
  const root = version.schema.openAPIV3Schema
  const example = examples.find(d => d.object.kind === 'CollaSet')?.object
  t.equal(example?.metadata.name, 'foo')
  t.equal(example?.spec.replicas, 2)
  const errors = (o: Json, old?: Json): string[] => [...openApiErrors(crd, o), ...celErrors(root, o, '', old)]
  t.same(errors(clone(example)), [], 'the example is valid')
  const cases: Array<[string, (o: Json) => void]> = [
    [
      'negative replicas',
      o => {
        o.spec.replicas = -1
      }
    ],
    [
      'no selector',
      o => {
        delete o.spec.selector
      }
    ],
    [
      'an empty selector',
      o => {
        o.spec.selector = {}
      }
    ],
    [
      'a selector that does not match the template',
      o => {
        o.spec.selector.matchLabels = { app: 'bar' }
      }
    ],
    [
      'no containers',
      o => {
        o.spec.template.spec.containers = []
      }
    ]
  ]
  for (const [what, mutate] of cases) {
    const o = clone(example)
    mutate(o)
    t.ok(errors(o).length > 0, `refused: ${what}`)
  }
  const moved = clone(example)
  moved.spec.selector.matchLabels = { app: 'foo', tier: 'web' }
  moved.spec.template.metadata.labels.tier = 'web'
  t.match(errors(moved, clone(example)), [/selector cannot change/], 'the selector cannot change')
  const scaled = clone(example)
  scaled.spec.replicas = 5
  scaled.spec.template.spec.containers[0].image = 'nginx:1.28'
  t.same(errors(scaled, clone(example)), [], 'replicas and the template may change')

  const parent = {
    ...clone(example),
    metadata: { ...example.metadata, namespace: 'default', uid: 'uid-foo', generation: 1 }
  }
  const { response } = syncCollaSet(
    { parent, children: { 'Pod.v1': {} }, related: {} },
    { now: NOW, scripts: new Map() as Json }
  )
  t.same(errors({ ...parent, status: response.status }), [], 'the status the hook writes fits the CRD')
  t.equal(response.children.length, 2)
})
