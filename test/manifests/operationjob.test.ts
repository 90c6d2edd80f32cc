// The OperationJob CRD (defaults, ranges, immutable action and targets, a partition that only
// grows) and the OperationJob hooks' answers for the example, whose status fits the CRD.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { defaultHooksDir, loadScriptLibrary } from '../../src/scripts/library.js'
import {
  type Json, NOW, clone, crds,
  storageVersion, openApiErrors, celErrors, examples
} from '../helpers/manifests.js'

let app: FastifyInstance
t.before(async () => {
  app = await buildApp({ scripts: loadScriptLibrary(defaultHooksDir()), clock: () => NOW })
})
t.teardown(async () => await app?.close())

t.test('the OperationJob CRD: defaults, ranges, immutable action and targets, a partition that only grows', async t => {
  const crd = crds.find(c => c.spec.names.kind === 'OperationJob')
  const version = storageVersion(crd)
  t.same(
    version.additionalPrinterColumns.map((c: Json) => `${String(c.name)} ${String(c.jsonPath)}`),
    [
      'ACTION .spec.action',
      'PROGRESS .status.progress',
      'TOTAL .status.totalPodCount',
      'SUCCEEDED .status.succeededPodCount',
      'FAILED .status.failedPodCount',
      'AGE .metadata.creationTimestamp'
    ]
  )
  const root = version.schema.openAPIV3Schema
  const spec = root.properties.spec.properties
  t.equal(spec.activeDeadlineSeconds.default, 10800, 'deadline defaults to 3 h')
  t.equal(spec.TTLSecondsAfterFinished.default, 1800, 'TTL defaults to 30 min (capital T, as in the reference)')
  t.same(root.properties.status.properties.progress.enum, ['Pending', 'Processing', 'Failed', 'Succeeded', 'Invalid'])
  t.same(Object.keys(root.properties.status.properties.targetDetails.items.properties).sort(), [
    'endTime',
    'error',
    'extraInfo',
    'name',
    'progress',
    'startTime'
  ])
  const example = (): Json => clone(examples.find(d => d.object.kind === 'OperationJob')?.object)
  const openApi = (o: Json): string[] => openApiErrors(crd, o)
  const cel = (o: Json, old?: Json): string[] => celErrors(root, o, '', old)
  t.same([...openApi(example()), ...cel(example())], [], 'the example is valid')

  const schemaCases: Array<[string, (o: Json) => void]> = [
    [
      'no action',
      o => {
        delete o.spec.action
      }
    ],
    [
      'no targets',
      o => {
        delete o.spec.targets
      }
    ],
    [
      'an empty target list',
      o => {
        o.spec.targets = []
      }
    ],
    [
      'a target without a name',
      o => {
        o.spec.targets[0] = { containers: ['nginx'] }
      }
    ],
    [
      'two targets with one name (a list-map keyed by name)',
      o => {
        o.spec.targets[1].name = o.spec.targets[0].name
      }
    ],
    [
      'a negative partition',
      o => {
        o.spec.partition = -1
      }
    ],
    [
      'activeDeadlineSeconds 0',
      o => {
        o.spec.activeDeadlineSeconds = 0
      }
    ],
    [
      'TTLSecondsAfterFinished 0',
      o => {
        o.spec.TTLSecondsAfterFinished = 0
      }
    ],
    [
      'a camelCase ttlSecondsAfterFinished',
      o => {
        o.spec.ttlSecondsAfterFinished = 60
      }
    ],
    [
      'exec without an image',
      o => {
        delete o.spec.exec.image
      }
    ],
    [
      'an unknown progress',
      o => {
        o.status = { progress: 'Done' }
      }
    ]
  ]
  for (const [what, mutate] of schemaCases) {
    const o = example()
    mutate(o)
    t.not(openApi(o).length, 0, `the schema refuses ${what}`)
  }
  const celCases: Array<[string, (o: Json) => void, RegExp]> = [
    [
      'exec with both command and script',
      o => {
        o.spec.exec.command = ['true']
      },
      /exactly one of exec.command and exec.script/
    ],
    [
      'Exec without spec.exec',
      o => {
        delete o.spec.exec
      },
      /action Exec needs spec.exec/
    ]
  ]
  for (const [what, mutate, message] of celCases) {
    const o = example()
    mutate(o)
    t.same(openApi(o), [], `${what}: the OpenAPI schema alone lets it through`)
    const errors = cel(o)
    t.equal(errors.length, 1, `a CEL rule refuses ${what}: ${errors.join('; ')}`)
    t.match(errors[0] ?? '', message)
  }

  const allowed: Array<[string, (o: Json) => void]> = [
    [
      'a larger partition',
      o => {
        o.spec.partition = 3
      }
    ],
    ['the same partition', () => {}],
    [
      'the deadline',
      o => {
        o.spec.activeDeadlineSeconds = 60
      }
    ],
    [
      'the TTL',
      o => {
        o.spec.TTLSecondsAfterFinished = 60
      }
    ],
    [
      'operationDelaySeconds',
      o => {
        o.spec.operationDelaySeconds = 5
      }
    ]
  ]
  for (const [what, mutate] of allowed) {
    const o = example()
    mutate(o)
    t.same([...openApi(o), ...cel(o, example())], [], `an update may change ${what}`)
  }
  const noPartition = (): Json => {
    const o = example()
    delete o.spec.partition
    return o
  }
  t.same(cel(noPartition(), example()), [], 'removing partition grows it to all targets')
  t.match(
    cel(example(), noPartition()).join('; '),
    /may only grow/,
    'setting a partition below the target count on a job that had none narrows it: refused'
  )
  const all = example()
  all.spec.partition = all.spec.targets.length
  t.same(cel(all, noPartition()), [], 'setting it to every target is no change')
  const immutable: Array<[string, (o: Json) => void, RegExp]> = [
    [
      'the action',
      o => {
        o.spec.action = 'Replace'
      },
      /spec.action cannot change/
    ],
    [
      'a target',
      o => {
        o.spec.targets[2].name = 'nginx-9'
      },
      /spec.targets cannot change/
    ],
    [
      "a target's containers",
      o => {
        o.spec.targets[1].containers = ['nginx']
      },
      /spec.targets cannot change/
    ],
    [
      'the number of targets',
      o => {
        o.spec.targets.pop()
      },
      /spec.targets cannot change/
    ],
    [
      'a smaller partition',
      o => {
        o.spec.partition = 0
      },
      /may only grow/
    ]
  ]
  for (const [what, mutate, message] of immutable) {
    const o = example()
    mutate(o)
    t.same(openApi(o), [], `${what}: fine on create`)
    const errors = cel(o, example())
    t.equal(errors.length, 1, `an update may not change ${what}: ${errors.join('; ')}`)
    t.match(errors[0] ?? '', message)
  }
})

t.test(
  "the OperationJob CRD holds each action's own field: the Label example fits, and what Label refuses, the CRD refuses",
  async t => {
    const crd = crds.find(c => c.spec.names.kind === 'OperationJob')
    const root = storageVersion(crd).schema.openAPIV3Schema
    const example = (): Json =>
      clone(
        examples.find(d => d.file === 'examples/operationjob-label.yaml' && d.object.kind === 'OperationJob')?.object
      )
    const errors = (o: Json): string[] => [...openApiErrors(crd, o), ...celErrors(root, o, '')]
    t.same(errors(example()), [], 'the example is valid')
    const refused: Array<[string, (o: Json) => void]> = [
      [
        'an action nobody registered',
        o => {
          o.spec.action = 'Relabel'
        }
      ],
      [
        'Label without spec.label',
        o => {
          delete o.spec.label
        }
      ],
      [
        'no labels',
        o => {
          o.spec.label.labels = {}
        }
      ],
      [
        'a value that is not a label value',
        o => {
          o.spec.label.labels.track = 'not ok'
        }
      ],
      [
        "a label of the service's own protocol",
        o => {
          o.spec.label.labels['jobhooks.io/to-replace'] = 'true'
        }
      ],
      [
        'overwrite as text',
        o => {
          o.spec.label.overwrite = 'yes'
        }
      ]
    ]
    for (const [what, mutate] of refused) {
      const o = example()
      mutate(o)
      t.not(errors(o).length, 0, `the CRD refuses ${what}`)
    }
    const allowed = example()
    allowed.spec.label.overwrite = true
    allowed.spec.label.labels['example.com/team'] = 'payments'
    t.same(errors(allowed), [], 'overwrite and a prefixed key are fine')
  }
)

t.test('the OperationJob hooks answer for the example, and the status fits the CRD', async t => {
  const crd = crds.find(c => c.spec.names.kind === 'OperationJob')
  for (const { file, object } of examples.filter(d => d.object.kind === 'OperationJob')) {
    const parent = {
      ...clone(object),
      metadata: {
        ...object.metadata,
        namespace: 'default',
        uid: `uid-${String(object.metadata.name)}`,
        creationTimestamp: '2026-01-02T03:00:00Z',
        generation: 1
      }
    }
    const customize = await app.inject({ method: 'POST', url: '/hooks/operationjob/customize', payload: { parent } })
    t.equal(customize.statusCode, 200, `${file}: customize answers`)
    const names = object.spec.targets.map((x: Json) => x.name)
    t.same(
      customize.json().relatedResources[0],
      { apiVersion: 'v1', resource: 'pods', namespace: 'default', names },
      `${file}: customize asks for the target Pods by name`
    )
    // The example's own Pods; a Replace example's targets are Pods of the CollaSet example.
    const own = examples
      .filter(d => d.file === file && d.object.kind === 'Pod' && names.includes(d.object.metadata.name))
      .map(d => clone(d.object))
    const collaSetPods = names.map((name: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        labels: { app: 'foo' },
        ownerReferences: [
          { apiVersion: 'jobhooks.io/v1alpha1', kind: 'CollaSet', name: 'foo', uid: 'uid-foo', controller: true }
        ]
      }
    }))
    const pods = (own.length > 0 ? own : collaSetPods).map((p: Json) => ({
      ...p,
      metadata: { ...p.metadata, namespace: 'default', uid: `uid-${String(p.metadata.name)}` },
      status: { phase: 'Running' }
    }))
    t.same(
      pods.map((p: Json) => p.metadata.name),
      names,
      `${file}: the example brings its target Pods (or they are the CollaSet example's)`
    )
    const request = {
      parent,
      children: {},
      related: { 'Pod.v1': Object.fromEntries(pods.map((p: Json) => [`default/${String(p.metadata.name)}`, p])) },
      finalizing: false
    }
    const response = await app.inject({ method: 'POST', url: '/hooks/operationjob/sync', payload: request })
    t.equal(response.statusCode, 200, `${file}: sync answers`)
    const body = response.json()
    t.match(
      body.status,
      { progress: 'Processing', totalPodCount: names.length },
      `${file}: valid (${JSON.stringify(body.status.conditions)})`
    )
    t.equal(
      body.status.targetDetails.filter((d: Json) => d.progress === 'Processing').length,
      object.spec.partition,
      `${file}: partition targets start`
    )
    t.same(
      openApiErrors(crd, { ...object, status: body.status }),
      [],
      `${file}: the status fits the CRD's status schema`
    )
  }
})
