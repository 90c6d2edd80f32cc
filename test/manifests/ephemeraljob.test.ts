// The EphemeralJob CRD (columns, required fields, ranges, what may change) and the EphemeralJob
// hooks' answers for the examples, whose status fits the CRD.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { parseEphemeralJobSpec } from '../../src/controllers/ephemeraljob/spec.js'
import { defaultHooksDir, loadScriptLibrary } from '../../src/scripts/library.js'
import type { KubeObject } from '../../src/k8s/types.js'
import {
  type Json, NOW, clone, crds,
  storageVersion, openApiErrors, celErrors, examples
} from '../helpers/manifests.js'

let app: FastifyInstance
t.before(async () => {
  app = await buildApp({ scripts: loadScriptLibrary(defaultHooksDir()), clock: () => NOW })
})
t.teardown(async () => await app?.close())

t.test(
  'the EphemeralJob CRD: columns, required fields, ranges, and only replicas, parallelism and paused change',
  async t => {
    const crd = crds.find(c => c.spec.names.kind === 'EphemeralJob')
    const version = storageVersion(crd)
    t.ok(crd.spec.names.shortNames.includes('ejob'), 'short name ejob')
    t.same(
      version.additionalPrinterColumns.map((c: Json) => `${String(c.name)}${c.priority > 0 ? ' (wide)' : ''}`),
      ['MATCH', 'SUCCEED', 'FAILED', 'RUNNING', 'WAITING', 'AGE', 'STATUS (wide)']
    )
    t.same(version.schema.openAPIV3Schema.properties.status.properties.phase.enum, [
      'Waiting',
      'Running',
      'Succeeded',
      'Failed',
      'Paused',
      'Invalid'
    ])
    const root = version.schema.openAPIV3Schema
    const story = (): Json =>
      clone(
        examples.find(d => d.object.kind === 'EphemeralJob' && d.object.metadata.name === 'hello-world-ephemeral-job')
          ?.object
      )
    const openApi = (o: Json): string[] => openApiErrors(crd, o)
    const cel = (o: Json, old?: Json): string[] => celErrors(root, o, '', old)
    const hookProblems = (o: Json): string[] => {
      const p = parseEphemeralJobSpec(o as KubeObject)
      return p.ok ? [] : p.problems
    }
    t.same([...openApi(story()), ...cel(story())], [], 'the first story is valid')
    t.same(hookProblems(story()), [], 'and the hook agrees')

    const schemaCases: Array<[string, (o: Json) => void]> = [
      ...['name', 'image', 'imagePullPolicy', 'terminationMessagePolicy', 'targetContainerName'].map(
        (field): [string, (o: Json) => void] => [
          `a container without ${field}`,
          o => {
            delete o.spec.template.ephemeralContainers[0][field]
          }
        ]
      ),
      [
        'no selector',
        o => {
          delete o.spec.selector
        }
      ],
      [
        'no template',
        o => {
          delete o.spec.template
        }
      ],
      [
        'no containers',
        o => {
          o.spec.template.ephemeralContainers = []
        }
      ],
      [
        'parallelism 11',
        o => {
          o.spec.parallelism = 11
        }
      ],
      [
        'parallelism 0',
        o => {
          o.spec.parallelism = 0
        }
      ],
      [
        'an unknown pull policy',
        o => {
          o.spec.template.ephemeralContainers[0].imagePullPolicy = 'Sometimes'
        }
      ],
      [
        'an unknown termination message policy',
        o => {
          o.spec.template.ephemeralContainers[0].terminationMessagePolicy = 'Stdout'
        }
      ],
      [
        'an unknown selector operator',
        o => {
          o.spec.selector.matchExpressions = [{ key: 'a', operator: 'Like', values: ['b'] }]
        }
      ],
      [
        'two containers with one name',
        o => {
          o.spec.parallelism = 2
          o.spec.template.ephemeralContainers.push(clone(o.spec.template.ephemeralContainers[0]))
        }
      ]
    ]
    for (const [what, mutate] of schemaCases) {
      const o = story()
      mutate(o)
      t.not(openApi(o).length, 0, `the schema refuses ${what}`)
      t.not(hookProblems(o).length, 0, `the hook also refuses ${what}`)
    }
    const celCases: Array<[string, (o: Json) => void, RegExp]> = [
      [
        'an empty selector',
        o => {
          o.spec.selector = {}
        },
        /must not be empty/
      ],
      [
        'In without values',
        o => {
          o.spec.selector.matchExpressions = [{ key: 'a', operator: 'In' }]
        },
        /need values/
      ],
      [
        'more containers than parallelism',
        o => {
          o.spec.template.ephemeralContainers.push({ ...clone(o.spec.template.ephemeralContainers[0]), name: 'second' })
        },
        /parallelism must be at least the number of ephemeral containers/
      ]
    ]
    for (const [what, mutate, message] of celCases) {
      const o = story()
      mutate(o)
      t.same(openApi(o), [], `${what}: the OpenAPI schema alone lets it through`)
      const errors = cel(o)
      t.equal(errors.length, 1, `a CEL rule refuses ${what}: ${errors.join('; ')}`)
      t.match(errors[0] ?? '', message)
      t.not(hookProblems(o).length, 0, `the hook also refuses ${what}`)
    }

    const allowed: Array<[string, (o: Json) => void]> = [
      [
        'replicas',
        o => {
          o.spec.replicas = 2
        }
      ],
      [
        'replicas removed',
        o => {
          delete o.spec.replicas
        }
      ],
      [
        'parallelism',
        o => {
          o.spec.parallelism = 3
        }
      ],
      [
        'paused',
        o => {
          o.spec.paused = true
        }
      ]
    ]
    for (const [what, mutate] of allowed) {
      const o = story()
      mutate(o)
      t.same([...openApi(o), ...cel(o, story())], [], `an update may change ${what}`)
    }
    const immutable: Array<[string, (o: Json) => void, RegExp]> = [
      [
        'the selector',
        o => {
          o.spec.selector.matchLabels.app = 'other'
        },
        /spec.selector cannot change/
      ],
      [
        'the template',
        o => {
          o.spec.template.ephemeralContainers[0].image = 'busybox:1.37'
        },
        /spec.template cannot change/
      ],
      [
        "the template's command",
        o => {
          o.spec.template.ephemeralContainers[0].command = ['true']
        },
        /spec.template cannot change/
      ],
      [
        'ttlSecondsAfterCreated',
        o => {
          o.spec.ttlSecondsAfterCreated = 60
        },
        /ttlSecondsAfterCreated cannot change/
      ],
      [
        'ttlSecondsAfterCreated (removed)',
        o => {
          delete o.spec.ttlSecondsAfterCreated
        },
        /ttlSecondsAfterCreated cannot change/
      ],
      [
        'ttlSecondsAfterFinished (added)',
        o => {
          o.spec.ttlSecondsAfterFinished = 60
        },
        /ttlSecondsAfterFinished cannot change/
      ],
      [
        'activeDeadlineSeconds (added)',
        o => {
          o.spec.activeDeadlineSeconds = 60
        },
        /activeDeadlineSeconds cannot change/
      ]
    ]
    for (const [what, mutate, message] of immutable) {
      const o = story()
      mutate(o)
      t.same([...openApi(o), ...cel(o)], [], `${what}: fine on create`)
      const errors = cel(o, story())
      t.equal(errors.length, 1, `an update may not change ${what}: ${errors.join('; ')}`)
      t.match(errors[0] ?? '', message)
    }
  }
)

t.test('the EphemeralJob hooks answer for the examples, and the status fits the CRD', async t => {
  const crd = crds.find(c => c.spec.names.kind === 'EphemeralJob')
  for (const { file, object } of examples.filter(d => d.object.kind === 'EphemeralJob')) {
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
    const customize = await app.inject({ method: 'POST', url: '/hooks/ephemeraljob/customize', payload: { parent } })
    t.equal(customize.statusCode, 200, `${file}: customize answers`)
    t.same(
      customize.json().relatedResources,
      [{ apiVersion: 'v1', resource: 'pods', namespace: 'default', labelSelector: object.spec.selector }],
      `${file}: customize asks for the selected Pods of its namespace`
    )
    const targets = new Set<string>(object.spec.template.ephemeralContainers.map((c: Json) => c.targetContainerName))
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'pod-0',
        namespace: 'default',
        uid: 'pod-uid-0',
        creationTimestamp: '2026-01-02T02:00:00Z',
        labels: object.spec.selector.matchLabels
      },
      spec: { containers: [...targets].map(name => ({ name, image: 'busybox' })) },
      status: { phase: 'Running' }
    }
    const request = { parent, children: {}, related: { 'Pod.v1': { 'default/pod-0': pod } }, finalizing: false }
    const response = await app.inject({ method: 'POST', url: '/hooks/ephemeraljob/sync', payload: request })
    t.equal(response.statusCode, 200, `${file}: sync answers`)
    const body = response.json()
    t.match(body.status, { phase: 'Waiting', match: 1, waiting: 1 }, `${file}: the Pod is chosen`)
    t.same(
      openApiErrors(crd, { ...object, status: body.status }),
      [],
      `${file}: the status fits the CRD's status schema`
    )
  }
})
