// The byte-level reader of src/protocol/projection.ts against JSON.parse on random JSON: what it
// builds equals what JSON.parse builds of the same members, whatever the strings hold (escapes,
// UTF-8, surrogate pairs, quotes and backslashes on any byte of a 32-bit word), however the body
// is laid out (compact, pretty, at any byte offset of its buffer, in a WebAssembly memory where
// the accelerated skip runs through it); every malformed body throws, and through the routes gets
// the strict parser's 400; nesting deep enough to overflow a recursive reader does not.
import t from 'tap'
import { project, MAX_DEPTH, MAX_WALK_DEPTH } from '../../src/protocol/projection.js'
import type { Shape } from '../../src/k8s/reads.js'
import { testApp } from '../helpers/app.js'
import { prng as random } from '../../bench/fixture-common.js'
import { SPARE_MIN_BYTES } from '../../src/protocol/body-reader.js'
import { WireState } from '../../src/protocol/wire-state.js'

const NOT_PROJECTED = { name: 'NotProjected' }

const PIECES = [
  'a',
  'Z',
  '0',
  ' ',
  '"',
  '\\',
  '/',
  '\n',
  '\t',
  '\u0001',
  'é',
  '€',
  '😀',
  '\ud83d',
  '\ude00',
  '\u2028',
  '__proto__',
  'x'.repeat(30),
]
const NAMES = [
  'a',
  'b',
  'name',
  'metadata',
  'spec',
  'status',
  'f:status',
  'k:{"type":"Ready"}',
  'é',
  '😀',
  'a"b',
  'back\\slash',
  'long-' + 'n'.repeat(40),
  '',
]

function randomString (next: () => number): string {
  const length = Math.floor(next() * next() * 40)
  let text = ''
  for (let i = 0; i < length; i++) text += PIECES[Math.floor(next() * PIECES.length)] as string
  return text
}

function randomNumber (next: () => number): number {
  const pick = Math.floor(next() * 5)
  if (pick === 0) return 0
  if (pick === 1) return Math.floor(next() * 1e6) - 5e5
  if (pick === 2) return (next() - 0.5) * 1e-7
  if (pick === 3) return (next() - 0.5) * 1e300
  return Number.MAX_SAFE_INTEGER + Math.floor(next() * 100)
}

function randomValue (next: () => number, depth: number): unknown {
  const pick = Math.floor(next() * (depth > 5 ? 4 : 7))
  if (pick === 0) return randomString(next)
  if (pick === 1) return randomNumber(next)
  if (pick === 2) return [true, false, null][Math.floor(next() * 3)]
  if (pick === 3) return randomString(next).slice(0, 3)
  if (pick === 4 || pick === 5) {
    const object: Record<string, unknown> = {}
    const size = Math.floor(next() * 6)
    for (let i = 0; i < size; i++) {
      object[next() < 0.7 ? (NAMES[Math.floor(next() * NAMES.length)] as string) : randomString(next)] = randomValue(
        next,
        depth + 1
      )
    }
    return object
  }
  return Array.from({ length: Math.floor(next() * 5) }, () => randomValue(next, depth + 1))
}

function randomShape (next: () => number, depth: number): Shape {
  if (depth > 3 || next() < 0.3) return next() < 0.6
  const shape: Record<string, Shape> = {}
  const size = Math.floor(next() * 4)
  for (let i = 0; i < size; i++) {
    shape[NAMES[Math.floor(next() * NAMES.length)] as string] = randomShape(next, depth + 1)
  }
  if (next() < 0.4) shape['*'] = randomShape(next, depth + 1)
  return shape
}

/** What a shape builds of a value, by the rules of src/k8s/reads.ts, on what JSON.parse built. */
function reference (value: unknown, shape: Shape): unknown {
  if (shape === true || shape === false) return value
  if (Array.isArray(value)) return value.map((element) => reference(element, shape))
  if (value === null || typeof value !== 'object') return value
  const built: Record<string, unknown> = {}
  for (const [name, member] of Object.entries(value)) {
    const own =
      Object.hasOwn(shape, name) && name !== '*'
        ? (shape[name] as Shape)
        : Object.hasOwn(shape, '*')
          ? (shape['*'] as Shape)
          : false
    if (own !== false) built[name] = reference(member, own)
  }
  return built
}

/** Whether `value` holds `string` as a string or a member name, at any depth. */
function holdsString (value: unknown, string: string): boolean {
  if (value === string) return true
  if (Array.isArray(value)) return value.some((element) => holdsString(element, string))
  if (value === null || typeof value !== 'object') return false
  return Object.entries(value).some(([name, member]) => name === string || holdsString(member, string))
}

/** The state every layout is projected with: remembering nothing, as project's default. */
const WIRE = new WireState({ memoBytes: 0 })
/** The layout in a WebAssembly memory of WIRE's, skipped by src/protocol/skip.wat. */
const IN_WASM = 5

/** Projects `body` with WIRE: the WebAssembly skip runs where `body` lies in one of its memories. */
function build (body: Buffer, shape: Shape): unknown {
  return project(body, shape, WIRE)
}

/**
 * `text` in a buffer whose first byte is `offset` bytes into a 4-byte word; for offset 4, at the
 * start of a larger memory that goes on after it (as a body read into a spare buffer does); for
 * IN_WASM, in a WebAssembly memory, as the body reader reads a large body.
 */
function at (text: string, offset: number): Buffer {
  const bytes = Buffer.from(text)
  if (offset === IN_WASM) {
    const memory = WIRE.wasm.bodyMemory(bytes.length)
    if (memory === undefined) throw new Error('no WebAssembly skip: is src/protocol/skip.wasm built?')
    // What the memory holds past the body must not count: quotes here, as if a string went on.
    new Uint8Array(memory.buffer, memory.byteOffset + bytes.length).fill(0x22)
    bytes.copy(memory)
    return memory
  }
  if (offset === 4) {
    const memory = Buffer.allocUnsafeSlow(bytes.length + 64)
    // What the memory holds past the body must not count: quotes here, as if a string went on.
    memory.fill(0x22, bytes.length)
    bytes.copy(memory)
    return memory.subarray(0, bytes.length)
  }
  const buffer = Buffer.allocUnsafeSlow(bytes.length + offset)
  bytes.copy(buffer, offset)
  return buffer.subarray(offset)
}

/** Every layout `at` makes. */
const OFFSETS = [0, 1, 2, 3, 4, IN_WASM]

t.test('the WebAssembly skip runs here', async (t) => {
  t.ok(WIRE.wasm.available, 'src/protocol/skip.wasm is built (tap runs scripts/wasm.mjs first) and compiles')
})

t.test('random JSON: a `true` shape builds what JSON.parse builds, and any shape what it keeps of that', async (t) => {
  const next = random(11)
  let checked = 0
  for (let i = 0; i < 600; i++) {
    const value = randomValue(next, 0)
    const text = next() < 0.5 ? JSON.stringify(value) : JSON.stringify(value, null, next() < 0.5 ? 2 : '\t')
    // A `__proto__` string is judged by the strict parser: the reader refuses to build one.
    if (holdsString(value, '__proto__')) {
      t.throws(() => project(Buffer.from(text), true), NOT_PROJECTED, `value ${i}: refused`)
      t.throws(() => build(at(text, IN_WASM), true), NOT_PROJECTED, `value ${i}: refused, in WebAssembly`)
      continue
    }
    const parsed = JSON.parse(text)
    const offset = i % (OFFSETS.length - 1)
    t.strictSame(build(at(text, offset), true), parsed, `value ${i}, offset ${offset}`)
    const shape = randomShape(next, 0)
    t.strictSame(
      build(at(text, offset), shape),
      reference(parsed, shape),
      `value ${i}, shape ${JSON.stringify(shape)}`
    )
    // Every value through the WebAssembly skip too.
    t.strictSame(build(at(text, IN_WASM), true), parsed, `value ${i}, in WebAssembly`)
    t.strictSame(build(at(text, IN_WASM), shape), reference(parsed, shape), `value ${i}, shape, in WebAssembly`)
    checked++
  }
  t.ok(checked > 500, `${checked} values`)
})

t.test('quotes and backslashes on every byte of a word, in strings of every length', async (t) => {
  for (let length = 0; length < 70; length++) {
    for (const special of ['"', '\\', '\\\\', '\\"', 'é', '😀']) {
      for (let position = 0; position <= length; position++) {
        const inner = 'y'.repeat(position) + special + 'z'.repeat(length - position)
        const text = JSON.stringify({ skipped: [inner, { k: inner }], kept: inner, [inner]: 1 })
        for (const offset of OFFSETS) {
          const built = build(at(text, offset), { kept: true, [inner]: true }) as Record<string, unknown>
          if (built.kept !== inner || built[inner] !== 1) {
            t.fail(`length ${length}, ${special} at ${position}, offset ${offset}`)
          }
        }
      }
    }
  }
  t.pass('every string found whole')
})

t.test('unicode escapes, surrogate pairs and lone surrogates, in names and values', async (t) => {
  const text =
    '{"\\u0061":"\\ud83d\\ude00","b\\u00e9":"\\ud800","😀":"é\\u20ac","\\ud83d\\ude00":[1],"skip":"\\ud83d\\ude00\\""}'
  t.strictSame(project(Buffer.from(text), true), JSON.parse(text))
  t.strictSame(
    project(Buffer.from(text), { a: true, bé: true, '😀': true }),
    { a: '😀', bé: '\ud800', '😀': [1] },
    "escaped names match the shape's names, raw ones as UTF-8 bytes"
  )
})

t.test('a kept string is refused only when it is an unsafe name, however it is written', async (t) => {
  for (const offset of OFFSETS) {
    for (const unsafe of [
      '"__proto__"',
      '"constructor"',
      '"\\u005f_proto__"',
      '"\\u0063onstructor"',
      '"con\\u0073tructor"',
      '"\\u005F\\u005Fproto__"',
    ]) {
      t.throws(
        () => build(at(`{"a":{"b":[1,{"c":${unsafe}}]}}`, offset), { a: true }),
        NOT_PROJECTED,
        `${unsafe} (layout ${offset})`
      )
      t.throws(
        () => build(at(`{"a":{"b":{${unsafe}:1}}}`, offset), { a: true }),
        NOT_PROJECTED,
        `${unsafe} as a name (layout ${offset})`
      )
      t.strictSame(
        build(at(`{"a":1,"b":{${unsafe}:1}}`, offset), { a: true }),
        { a: 1 },
        `${unsafe} skipped (layout ${offset})`
      )
    }
    for (const safe of ['"x_constructor"', '"__proto__x"', '"\\u0063"', '"\\u005f"', '"constructors"']) {
      t.strictSame(
        build(at(`{"a":[${safe},{${safe}:2}]}`, offset), { a: true }),
        JSON.parse(`{"a":[${safe},{${safe}:2}]}`),
        `${safe} (layout ${offset})`
      )
    }
  }
})

t.test('numbers come out as JSON.parse makes them', async (t) => {
  for (const number of ['0', '-0', '1e400', '-1e-400', '123456789012345678901234567890', '0.1', '2.5E+3', '-7e-1']) {
    t.strictSame(
      project(Buffer.from(`{"n":${number},"m":[${number}]}`), { n: true }),
      { n: JSON.parse(number) },
      number
    )
  }
})

t.test('every prefix of a body, and every class of malformed body, throws', async (t) => {
  const next = random(5)
  for (let i = 0; i < 40; i++) {
    const text = JSON.stringify({ a: randomValue(next, 0), b: [randomString(next), { c: randomValue(next, 2) }] })
    // The document in each layout: a prefix of it is followed by the rest, which must not count.
    const layouts = OFFSETS.map((offset) => at(text, offset))
    const accepted: string[] = []
    for (let end = 0; end < Buffer.byteLength(text); end++) {
      for (const shape of [true, {}, { b: true }] as Shape[]) {
        layouts.forEach((bytes, offset) => {
          try {
            build(bytes.subarray(0, end), shape)
            accepted.push(`the first ${end} bytes (${JSON.stringify(shape)}, layout ${offset})`)
          } catch {}
        })
      }
    }
    t.strictSame(accepted, [], `no prefix of body ${i} is accepted`)
  }
  const malformed = {
    'a string that never closes': '{"a":["x\\"]}',
    'a backslash at the end': '{"a":"x\\',
    'a bracket that does not match': '{"a":[{"b":1]}}',
    'a closer too many': '{"a":[1]]}',
    'a byte JSON does not allow between strings': '{"a":[1,#]}',
    'a byte outside ASCII between strings': '{"a":[1,é]}',
    'a control byte between strings': '{"a":[1,\u0000]}',
    'bytes after the value': '{"a":1}{}',
    'a member name that is not a string': '{"a":{b:1}}',
    nothing: '',
  }
  for (const [what, text] of Object.entries(malformed)) {
    for (const shape of [true, {}, { a: true }, { '*': {} }] as Shape[]) {
      for (const offset of OFFSETS) {
        t.throws(() => build(at(text, offset), shape), `${what} (${JSON.stringify(shape)}, layout ${offset})`)
      }
    }
    for (const offset of OFFSETS) {
      t.throws(
        () => build(at(text, offset), {}),
        NOT_PROJECTED,
        `${what}: NotProjected when skipped (layout ${offset})`
      )
    }
  }
})

t.test('deep nesting throws NotProjected, never a RangeError', async (t) => {
  const deep = (depth: number, open: string, close: string): string => open.repeat(depth) + close.repeat(depth)
  for (const offset of [0, 4, IN_WASM]) {
    t.strictSame(
      build(at(`{"a":${deep(MAX_DEPTH - 1, '[', ']')},"b":1}`, offset), { b: true }),
      { b: 1 },
      `skipped, up to the limit (layout ${offset})`
    )
    t.throws(
      () => build(at(`{"a":${deep(MAX_DEPTH + 1, '{"x":', '}')},"b":1}`, offset), { b: true }),
      NOT_PROJECTED,
      `skipped, past the limit (layout ${offset})`
    )
    t.throws(
      () => build(at('{"a":' + '['.repeat(1_000_000), offset), {}),
      NOT_PROJECTED,
      `garbage (layout ${offset})`
    )
  }
  t.throws(() => project(Buffer.from('['.repeat(1_000_000)), {}), NOT_PROJECTED, 'garbage')
  t.throws(
    () => project(Buffer.from('{"a":' + '['.repeat(1_000_000)), { a: { b: true } }),
    NOT_PROJECTED,
    'garbage under a shape: arrays in arrays go on with the same shape'
  )
  t.throws(
    () => project(Buffer.from(`{"a":${deep(MAX_WALK_DEPTH + 1, '[', ']')}}`), { a: { b: true } }),
    NOT_PROJECTED,
    "valid, past the walk's limit: left to the strict parser"
  )
  t.strictSame(
    project(Buffer.from(`{"a":${deep(100, '[', ']')}}`), { a: { b: true } }),
    { a: JSON.parse(deep(100, '[', ']')) },
    'valid, within it'
  )
})

t.test(
  "through the routes, every malformed body gets the strict parser's 400, as the whole request does",
  async (t) => {
    const read = await testApp(t)
    const whole = await testApp(t, { keepWhole: true })
    const parent = '"parent":{"apiVersion":"jobhooks.io/v1alpha1","kind":"DaemonJob","metadata":{"name":"a"}}'
    const bodies = [
      `{${parent},"related":{"Node.v1":{"n":{"status":{"images":["x\\"]}}}}}`,
      `{${parent},"related":{"Node.v1":{"n":{"status":[1,#]}}}}`,
      `{${parent},"related":{"Node.v1":{"n":{"status":{"a":1]}}}}`,
      `{${parent},"related":{"Node.v1":{"n":{"metadata":{"name":"n"},"status":{}}}}}}`,
      `{${parent},"related":{"Node.v1":{"n":${'['.repeat(200_000)}}}}`,
      `{${parent},"related":{"Node.v1":{"n":{"spec":${'['.repeat(200_000)}}}}}`,
      '['.repeat(200_000),
      `{${parent},"children":{}}  x`,
      `{${parent},"related":{"Node.v1":{"n":{"metadata":{"name":"n\\ud800"},"status":{"x":"\u0001"}}}}}`.slice(0, -3),
    ]
    // Large enough to be read into a buffer the app keeps for the next large body.
    const nodes = Array.from(
      { length: 400 },
      (_, i) =>
        `"n${i}":{"metadata":{"name":"n${i}"},"status":{"images":[` +
          Array.from(
            { length: 30 },
            () => '{"names":["registry.example.com/a@sha256:' + 'f'.repeat(64) + '"],"sizeBytes":1}'
          ).join(',') +
          ']}}'
    )
    bodies.push(
      `{${parent},"related":{"Node.v1":{${nodes.join(',')}}}}`.replace('"sizeBytes":1}]}}}}', '"sizeBytes":1}]]}}}}')
    )
    bodies.push(
      `{${parent},"related":{"Node.v1":{${nodes.join(',')}}}}`.replace('"sizeBytes":1}]}}}}', '"sizeBytes":1,#}]}}}}')
    )
    t.ok(Buffer.byteLength(bodies.at(-1) as string) > SPARE_MIN_BYTES, 'a large body')
    for (const payload of bodies) {
      const headers = { 'content-type': 'application/json' }
      const a = await read.inject({ method: 'POST', url: '/hooks/daemonjob/sync', payload, headers })
      const b = await whole.inject({ method: 'POST', url: '/hooks/daemonjob/sync', payload, headers })
      t.equal(a.statusCode, 400, payload.slice(0, 120))
      t.equal(a.body, b.body, `${payload.slice(0, 120)}: the same answer`)
    }
  }
)
