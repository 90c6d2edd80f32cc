// node scripts/wasm.mjs [out]: compiles src/protocol/skip.wat, the accelerated skip (docs/wire.md,
// "The skipper"), into WebAssembly with wabt, SIMD and threads (its memory is shared) enabled.
// `npm run build` writes it beside the compiled JavaScript (dist/src/protocol/skip.wasm), which
// is what the image ships; with no argument, beside the .wat (git-ignored), where the tests load
// the sources: tap runs this first (package.json, "tap"."before"), and so does `npm test`
// (scripts/test.mjs). wabt is a devDependency: nothing at run time needs it.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import wabt from 'wabt'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const source = join(root, 'src', 'protocol', 'skip.wat')
const out = process.argv[2] ?? join(root, 'src', 'protocol', 'skip.wasm')

const toolkit = await wabt()
const parsed = toolkit.parseWat(relative(root, source), readFileSync(source, 'utf8'), { simd: true, threads: true })
try {
  // wabt's own validator refuses shared memories whatever its features say: V8 validates instead.
  const binary = parsed.toBinary({}).buffer
  if (!WebAssembly.validate(binary)) throw new Error(`${relative(root, source)}: not valid WebAssembly`)
  mkdirSync(dirname(out), { recursive: true })
  writeFileSync(out, binary)
} finally {
  parsed.destroy()
}
