// Kubernetes' `$(NAME)` expansion as the kubelet applies it, and the escaping that lets a value
// through it unchanged: expand(escapeForExpansion(v)) is v for every string v.
import t from 'tap'
import {
  containerEnvironment, escapeForExpansion, expand, expandedCommandLine, literalEnvVar, type VariableLookup
} from '../../src/k8s/expansion.js'

const KNOWN: Record<string, string> = { A: 'a', B: 'b', REF: '$(A)', EMPTY: '' }
const lookup: VariableLookup = name => KNOWN[name]

t.test('expand follows the cases Kubernetes documents for its expansion', async t => {
  const cases: Array<[string, string]> = [
    ['$(A)', 'a'],
    ['$(A)-$(A)', 'a-a'],
    ['__$(B)__', '__b__'],
    ['$(A)_$(B)', 'a_b'],
    ['$$(B)_$(A)', '$(B)_a'],
    ['$$(A)_$$(B)', '$(A)_$(B)'],
    ['x-$$A', 'x-$A'],
    ['x\\$(A)y', 'x\\ay'],
    ['$(A$(B))', '$(A$(B))'],
    ['$(A$(B)', '$(A$(B)'],
    ['$(REF)', '$(A)'],
    ['x$(EMPTY)y', 'xy'],
    ['x$(Aoops!', 'x$(Aoops!'],
    ['x__(A)__', 'x__(A)__'],
    ['$?_x_$!', '$?_x_$!'],
    ['$A', '$A'],
    ['$(MISSING)', '$(MISSING)'],
    ['$$$$$$(MISSING)', '$$$(MISSING)'],
    ['$$$$$$(A)', '$$$(A)'],
    ['$$$$$$$(MISSING)', '$$$$(MISSING)'],
    ['$$$$$$$(A)', '$$$a'],
    ['$A)', '$A)'],
    ['$' + '{A}', '$' + '{A}'],
    ['$(B)___$(A', 'b___$(A'],
    ['$(A)___$(', 'a___$('],
    ['$(A)x$', 'ax$'],
    ['--$($($(--', '--$($($(--'],
    ['$(x$$y)', '$(x$$y)'],
    ['$()', '$()'],
    ['\n', '\n'],
    ['', '']
  ]
  for (const [input, expected] of cases) t.equal(expand(input, lookup), expected, JSON.stringify(input))
})

t.test('escaping doubles only the $ the expansion would consume', async t => {
  t.equal(escapeForExpansion('$(HOME) and $$(X)'), '$$(HOME) and $$$$(X)')
  t.equal(escapeForExpansion('$HOME costs $5, ends in $'), '$HOME costs $5, ends in $',
    'a value without $( or $$ is unchanged')
  t.equal(escapeForExpansion('$$$'), '$$$$$')
  t.equal(escapeForExpansion('$($'), '$$($')
  t.same(literalEnvVar('X', '$(A)'), { name: 'X', value: '$$(A)' })
})

/** A deterministic stream of numbers in [0, 1): the same strings every run, so a failure repeats. */
function seeded (seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state)
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296
  }
}

// Pieces weighted toward what the expansion reacts to, with names it knows and names it does not.
const PIECES = ['$', '$$', '$(', '$$(', ')', '(', 'A', 'B', 'MISSING', 'REF', ' ', '\\', 'é', '😀', '\n', '{', '}']

function randomString (next: () => number): string {
  const length = Math.floor(next() * 12)
  let out = ''
  for (let i = 0; i < length; i++) out += PIECES[Math.floor(next() * PIECES.length)] as string
  return out
}

t.test('expand(escapeForExpansion(v)) is v, whatever v holds and whatever is defined', async t => {
  const next = seeded(36)
  const failures: string[] = []
  for (let i = 0; i < 20_000; i++) {
    const value = randomString(next)
    if (expand(escapeForExpansion(value), lookup) !== value) failures.push(value)
  }
  t.same(failures.slice(0, 5), [], 'no string comes back changed')
  const raw = Array.from({ length: 2000 }, () => randomString(next))
  t.ok(raw.some(v => expand(v, lookup) !== v), 'the same strings unescaped do change: the test can fail')
})

t.test('escaping adds nothing the expansion does not need', async t => {
  // Whether a `$(` needs its `$` doubled depends on a `)` coming later; the escaping decides by the
  // next character alone, so each doubled `$` is needed once the value goes on with a `)`.
  const next = seeded(7)
  for (let i = 0; i < 5000; i++) {
    const value = randomString(next) + ')'
    const escaped = escapeForExpansion(value)
    for (let at = escaped.indexOf('$$'); at >= 0; at = escaped.indexOf('$$', at + 2)) {
      const lighter = escaped.slice(0, at) + escaped.slice(at + 1)
      if (expand(lighter, name => `<${name}>`) === value) {
        t.fail(`${JSON.stringify(value)}: the $ doubled at ${at} was not needed`)
        return
      }
    }
  }
  t.pass('every doubled $ is needed')
})

t.test('a container\'s environment: each value expanded against the variables before it', async t => {
  const env = [
    { name: 'FOO', value: 'bar' },
    { name: 'ZOO', value: '$(FOO)-1' },
    { name: 'BLU', value: '$(ZOO)-2 $(LATER)' },
    { name: 'LATER', value: 'x' },
    { name: 'SECRET', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } },
    { name: 'USES_SECRET', value: '$(SECRET)' },
    { name: 'NONE' }
  ]
  t.same(Object.fromEntries(containerEnvironment({ env })), {
    FOO: 'bar', ZOO: 'bar-1', BLU: 'bar-1-2 $(LATER)', LATER: 'x', USES_SECRET: '$(SECRET)', NONE: ''
  }, 'a later variable, or one from a secret, is not known to it')
  t.same(expandedCommandLine({ env, command: ['echo', '$(BLU)'], args: ['$(LATER)', '$$(FOO)'] }), {
    command: ['echo', 'bar-1-2 $(LATER)'],
    args: ['x', '$(FOO)']
  }, 'command and args see every variable, and the expanded value is not expanded again')
  t.same(expandedCommandLine({}), { command: [], args: [] })
})
