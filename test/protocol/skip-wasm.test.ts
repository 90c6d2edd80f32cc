// The WebAssembly skip (src/protocol/skip.wat) against the TypeScript one (skipValue of
// src/protocol/json-skip.ts) on random JSON (a string alone included) and random damage to it:
// both answer the same end, or both refuse, whatever the memory holds after the body; its memory
// is laid out as the .wat reads it; and every build compiles the .wat.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { MAX_DEPTH, skipValue } from '../../src/protocol/json-skip.js'
import { BODY_OFFSET, REFUSALS } from '../../src/protocol/skip-wasm.js'
import { WireState } from '../../src/protocol/wire-state.js'
import { prng as random } from '../../bench/fixture-common.js'

interface PackageJson {
  scripts: Record<string, string>
  tap: { before?: string }
  dependencies: Record<string, string>
  devDependencies: Record<string, string>
}

const WIRE = new WireState({ memoBytes: 0 })
/** One memory for every case: what an earlier case left after the body's end must not count. */
const MEMORY = WIRE.wasm.bodyMemory(1 << 20)

const PIECES = ['a', '"', '\\', '\\\\', '\\"', 'é', '😀', '{', '}', '[', ']', ',', ':', ' ', 'x'.repeat(20)]
/** Bytes a damaged body gets: structure, quotes and escapes, and bytes JSON never allows between strings. */
const DAMAGE = ['"', '\\', '{', '}', '[', ']', ',', '#', 'x', '\u0000', 'é', ' ']

function randomString (next: () => number): string {
  let text = ''
  for (let i = Math.floor(next() * next() * 40); i > 0; i--) text += PIECES[Math.floor(next() * PIECES.length)]
  return text
}

function randomValue (next: () => number, depth: number): unknown {
  const pick = Math.floor(next() * (depth > 6 ? 3 : 6))
  if (pick === 0) return randomString(next)
  if (pick === 1) return [1.5e-7, -3, 0, true, false, null][Math.floor(next() * 6)]
  if (pick === 2) return 'y'.repeat(Math.floor(next() * 40))
  if (pick === 3) {
    const size = Math.floor(next() * 5)
    return Array.from({ length: size }, () => randomValue(next, depth + 1))
  }
  const object: Record<string, unknown> = {}
  for (let i = Math.floor(next() * 5); i > 0; i--) object[randomString(next)] = randomValue(next, depth + 1)
  return object
}

/** The end skipValue gives, or the refusal as a string. */
function inTypeScript (body: Buffer): number | string {
  try {
    return skipValue(body, 0, new Uint8Array(MAX_DEPTH), false)
  } catch (error) {
    return (error as Error).name
  }
}

/** The end the WebAssembly skip gives for `text` placed at the start of MEMORY, or the refusal. */
function inWasm (text: Buffer, after: number): number | string {
  if (MEMORY === undefined) throw new Error('no WebAssembly skip: is src/protocol/skip.wasm built?')
  text.copy(MEMORY)
  // What follows the body: a quote, a backslash, or what the last case left.
  if (after >= 0) MEMORY.fill(after, text.length, text.length + 64)
  const skip = WIRE.wasm.skipperOf(MEMORY.subarray(0, text.length))
  try {
    return skip === undefined ? 'not in a memory' : skip(0)
  } catch (error) {
    return (error as Error).name
  }
}

t.test('the memory is laid out as skip.wat reads it', async (t) => {
  t.ok(MEMORY, 'src/protocol/skip.wasm is built (npm test and tap run scripts/wasm.mjs first) and compiles')
  t.equal(BODY_OFFSET, 10_304, 'the body after the table (256 bytes) and the stack (MAX_DEPTH bytes)')
  t.equal(MEMORY?.byteOffset, BODY_OFFSET)
  t.equal(REFUSALS.length, 5, 'a word for each of -1 to -4')
})

t.test('random JSON (objects, arrays, strings), whole and damaged: the same end or refusal in both', async (t) => {
  const next = random(25)
  let refused = 0
  let cases = 0
  for (let i = 0; i < 3000; i++) {
    // A string alone too: the projection skips a long unread one (an annotation) in WebAssembly.
    const pick = next()
    const value = pick < 0.4 ? [randomValue(next, 0)] : pick < 0.8 ? { k: randomValue(next, 0) } : randomString(next)
    const text = Buffer.from(JSON.stringify(value, null, next() < 0.3 ? 1 : undefined))
    const bodies = [text, text.subarray(0, Math.floor(next() * text.length))]
    const damaged = Buffer.from(text)
    for (let hits = 1 + Math.floor(next() * 3); hits > 0; hits--) {
      damaged.write(DAMAGE[Math.floor(next() * DAMAGE.length)] as string, Math.floor(next() * damaged.length))
    }
    bodies.push(damaged)
    for (const body of bodies) {
      if (body.length === 0 || body.length > (1 << 19) || ![0x7b, 0x5b, 0x22].includes(body[0] as number)) continue
      const expected = inTypeScript(body)
      const after = [0x22, 0x5c, -1][i % 3] as number
      if (inWasm(body, after) !== expected) t.fail(`case ${i}: ${body.toString()} (${expected})`)
      if (typeof expected === 'string') refused++
      cases++
    }
  }
  t.ok(refused > 500 && cases - refused > 3000, `${cases} bodies, ${refused} refused, none told apart`)
})

t.test('nesting: MAX_DEPTH brackets pass, one more is refused', async (t) => {
  const nested = (depth: number): Buffer => Buffer.from('['.repeat(depth) + ']'.repeat(depth))
  t.equal(inWasm(nested(MAX_DEPTH), 0x22), 2 * MAX_DEPTH)
  t.equal(inWasm(nested(MAX_DEPTH + 1), 0x22), 'NotProjected')
  t.equal(inTypeScript(nested(MAX_DEPTH + 1)), 'NotProjected')
})

t.test('the build compiles skip.wat beside the JavaScript, in the image too, without wabt at run time', async (t) => {
  const root = join(import.meta.dirname, '..', '..')
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as PackageJson
  t.match(pkg.scripts.build, /&& node scripts\/wasm\.mjs dist\/src\/protocol\/skip\.wasm$/, 'npm run build ends so')
  for (const script of ['start', 'bench', 'image:test']) {
    t.match(pkg.scripts[script], /^npm run build && /, `npm run ${script} builds first`)
  }
  t.equal(pkg.tap.before, 'scripts/wasm.mjs', 'tap compiles it for the tests first')
  t.ok(pkg.devDependencies.wabt, 'wabt is a devDependency')
  t.notOk(pkg.dependencies.wabt, 'and not a dependency of the image')
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8')
  t.match(dockerfile, /^COPY scripts\/wasm\.mjs \.\/scripts\/$/m, 'the build stage has the script')
  t.match(dockerfile, /^RUN npm run build && /m, 'and runs npm run build')
  const ignored = readFileSync(join(root, '.dockerignore'), 'utf8').split('\n')
  t.ok(ignored.includes('!scripts/wasm.mjs'), '.dockerignore lets the script in')
})
