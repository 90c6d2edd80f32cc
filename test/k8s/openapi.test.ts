import t from 'tap'
import { schemaProblems, type StructuralSchema } from '../../src/k8s/openapi.js'

const schema: StructuralSchema = {
  type: 'object',
  required: ['image'],
  properties: {
    image: { type: 'string', minLength: 1 },
    pull: { type: 'string', enum: ['Always', 'Never'] },
    command: { type: 'array', minItems: 1, maxItems: 2, items: { type: 'string' } },
    retries: { type: 'integer', minimum: 0, maximum: 5 },
    name: { type: 'string', maxLength: 3, pattern: '^[a-z]+$' },
    labels: {
      type: 'object',
      minProperties: 1,
      maxProperties: 2,
      additionalProperties: { type: 'string', maxLength: 2 }
    },
    on: { type: 'boolean' },
    ratio: { type: 'number' }
  }
}

t.test('a value that fits has no problems; unknown fields are not problems (the API server prunes them)', async t => {
  t.same(
    schemaProblems(
      {
        image: 'busybox',
        pull: 'Never',
        command: ['true'],
        retries: 5,
        name: 'abc',
        labels: { a: 'b' },
        on: false,
        ratio: 0.5,
        extra: 1
      },
      schema,
      'spec.x'
    ),
    []
  )
})

t.test('every keyword the check covers, each problem named by where it is', async t => {
  const cases: Array<[unknown, string[]]> = [
    ['text', ['spec.x must be an object']],
    [{}, ['spec.x.image is required']],
    [{ image: '' }, ['spec.x.image must have at least 1 characters']],
    [{ image: 3 }, ['spec.x.image must be a string']],
    [{ image: 'i', pull: 'Sometimes' }, ['spec.x.pull must be one of Always, Never']],
    [{ image: 'i', command: [] }, ['spec.x.command must have at least 1 items']],
    [{ image: 'i', command: ['a', 'b', 'c'] }, ['spec.x.command must have at most 2 items']],
    [{ image: 'i', command: ['a', 7] }, ['spec.x.command[1] must be a string']],
    [{ image: 'i', command: 'a' }, ['spec.x.command must be a list']],
    [{ image: 'i', retries: 1.5 }, ['spec.x.retries must be a whole number']],
    [{ image: 'i', retries: -1 }, ['spec.x.retries must be at least 0']],
    [{ image: 'i', retries: 6 }, ['spec.x.retries must be at most 5']],
    [{ image: 'i', name: 'abcd' }, ['spec.x.name must have at most 3 characters']],
    [{ image: 'i', name: 'AB' }, ['spec.x.name must match ^[a-z]+$']],
    [{ image: 'i', labels: {} }, ['spec.x.labels must have at least 1 entries']],
    [{ image: 'i', labels: { a: '1', b: '2', c: '3' } }, ['spec.x.labels must have at most 2 entries']],
    [
      { image: 'i', labels: { 'app.kubernetes.io/name': 'too long' } },
      ['spec.x.labels["app.kubernetes.io/name"] must have at most 2 characters']
    ],
    [{ image: 'i', on: 'yes' }, ['spec.x.on must be true or false']],
    [{ image: 'i', ratio: '1' }, ['spec.x.ratio must be a number']],
    [{ pull: 'x', image: null }, ['spec.x.image is required', 'spec.x.pull must be one of Always, Never']]
  ]
  for (const [value, problems] of cases) {
    t.same(schemaProblems(value, schema, 'spec.x'), problems, JSON.stringify(value))
  }
})

t.test('a length counts characters, not UTF-16 units, as the API server does', async t => {
  t.same(schemaProblems('日本', { type: 'string', maxLength: 2 }, 'v'), [])
  t.same(schemaProblems('😀😀', { type: 'string', maxLength: 2 }, 'v'), [])
})
