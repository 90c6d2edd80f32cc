// What the property-based test of every kind's hooks generates (test/app-fuzz.test.ts): a fixture
// whose parent spec is mutated at random paths, JobFlow `when` expressions from a small CEL
// grammar (nested macros over lists, regexes, unicode), and specs that multiply bytes (a large env
// value times many items). The generators are fast-check's; the seed and count come from the
// environment, so `npm run fuzz` runs the same properties longer.
import fc from 'fast-check'

/** How many cases each property runs, and from which seed: fixed in `npm test`, wider in `npm run fuzz`. */
export function fuzzSettings (defaultRuns: number): { seed: number, numRuns: number } {
  const runs = Number(process.env.FUZZ_RUNS)
  const seed = Number(process.env.FUZZ_SEED)
  return {
    seed: Number.isInteger(seed) ? seed : 20261128,
    numRuns: Number.isInteger(runs) && runs > 0 ? runs : defaultRuns
  }
}

/** Strings a tenant could write: any unicode, with the characters that matter to us more likely. */
export const tenantString = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.stringMatching(/^[a-z0-9$().{}\-[\]'"\\ ]{0,24}$/)
)

/** Any JSON value, up to a few levels deep, with tenant strings. */
export const tenantValue: fc.Arbitrary<unknown> = fc.oneof(
  { depthSize: 'small' },
  fc.jsonValue({ maxDepth: 3 }),
  tenantString,
  fc.integer({ min: -1, max: 20_000 }),
  fc.constantFrom(null, true, false, 1e308, -0.5, '', '*', '0', '10000')
)

/** One change to a spec: a value set at a path (one that exists or a new key), or a path removed. */
export interface SpecMutation { path: string[], value?: unknown, remove: boolean }

/** Every path of an object, up to `depth` levels, objects and arrays alike. */
export function pathsOf (value: unknown, depth = 6, prefix: string[] = []): string[][] {
  if (depth === 0 || value === null || typeof value !== 'object') return []
  return Object.keys(value).flatMap(key => {
    const path = [...prefix, key]
    return [path, ...pathsOf((value as Record<string, unknown>)[key], depth - 1, path)]
  })
}

/** Mutations of `spec`: at its own paths, and at new keys beside them (a misspelled field). */
export function specMutations (spec: unknown): fc.Arbitrary<SpecMutation[]> {
  const paths = pathsOf(spec)
  const existing = fc.constantFrom(...paths)
  const added = fc.tuple(existing, fc.constantFrom('dependecies', 'when', 'forEach', 'parallelism', 'x', 'env'))
    .map(([path, key]) => [...path.slice(0, -1), key])
  const mutation = fc.record({
    path: fc.oneof(existing, added),
    value: tenantValue,
    remove: fc.boolean()
  })
  return fc.array(mutation, { minLength: 1, maxLength: 4 })
}

/** `spec` with `mutations` applied, on a copy. */
export function mutated<T> (spec: T, mutations: readonly SpecMutation[]): T {
  const copy = structuredClone(spec) as Record<string, unknown>
  for (const { path, value, remove } of mutations) {
    let at: unknown = copy
    for (const key of path.slice(0, -1)) {
      if (at === null || typeof at !== 'object') break
      at = (at as Record<string, unknown>)[key]
    }
    if (at === null || typeof at !== 'object') continue
    const last = path[path.length - 1] as string
    if (remove) delete (at as Record<string, unknown>)[last]
    else (at as Record<string, unknown>)[last] = structuredClone(value)
  }
  return copy as T
}

/** Regexes as a tenant writes them, catastrophic ones and ones RE2 refuses among them. */
export const regex: fc.Arbitrary<string> = fc.array(
  fc.oneof(
    fc.constantFrom('a', '.', '\\d', '[a-z]', 'é', '日', '(a+)+', '(a|aa)*', '(.*)*', '\\1', '(?=a)', '[', ')'),
    fc.tuple(fc.constantFrom('a', '(ab)', '[0-9]'), fc.constantFrom('*', '+', '?', '{2,5}', '{1000}'))
      .map(([atom, quantifier]) => atom + quantifier)
  ),
  { minLength: 1, maxLength: 6 }
).chain(parts => fc.tuple(fc.boolean(), fc.boolean()).map(([start, end]) =>
  `${start ? '^' : ''}${parts.join('')}${end ? '$' : ''}`))

/** A CEL string literal of `value`, as a tenant would quote it. */
function quoted (value: string): string {
  return JSON.stringify(value)
}

/**
 * `when` expressions over the outcome of dependency `dep`: boolean expressions built from list
 * literals up to 100 elements, nested map/filter/exists/all, size(), string concatenation and
 * matches(), so that nesting multiplies the work as a hostile tenant's would.
 */
export function whenExpression (dep: string): fc.Arbitrary<string> {
  const flow = `flows.${dep}`
  const { bool } = fc.letrec<{ bool: string, list: string, str: string }>(tie => ({
    list: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.array(fc.integer({ min: -9, max: 9 }), { maxLength: 100 }).map(items => `[${items.join(', ')}]`),
      fc.constant(`[${Array.from({ length: 100 }, (_, i) => i).join(',')}]`),
      fc.constant(`${flow}.outputJSON`),
      tie('list').map(list => `${list}.map(x, x)`),
      fc.tuple(tie('list'), tie('list')).map(([list, inner]) => `${list}.map(x, ${inner})`),
      fc.tuple(tie('list'), tie('bool')).map(([list, test]) => `${list}.filter(y, ${test})`),
      fc.tuple(tie('list'), tie('list')).map(([a, b]) => `${a} + ${b}`)
    ),
    str: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      tenantString.map(quoted),
      fc.constantFrom(`${flow}.output`, `${flow}.message`, `${flow}.phase`, quoted('a'.repeat(29) + '!')),
      fc.tuple(tie('str'), tie('str')).map(([a, b]) => `${a} + ${b}`)
    ),
    bool: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constantFrom(`${flow}.phase == 'Succeeded'`, 'true', `has(${flow}.outputJSON)`),
      fc.tuple(tie('str'), regex).map(([text, pattern]) => `${text}.matches(${quoted(pattern)})`),
      fc.tuple(tie('str'), fc.constantFrom('^(a+)+$', '(a|aa)*b', '^(.*)*$', '(x+x+)+y'))
        .map(([text, pattern]) => `${text}.matches(${quoted(pattern)})`),
      fc.tuple(tie('list'), tie('bool')).map(([list, test]) => `${list}.exists(v, ${test})`),
      fc.tuple(tie('list'), tie('bool')).map(([list, test]) => `${list}.all(w, ${test})`),
      fc.tuple(tie('list'), fc.integer({ min: 0, max: 10_000 })).map(([list, n]) => `size(${list}) > ${n}`),
      fc.tuple(tie('bool'), tie('bool'), fc.constantFrom('&&', '||')).map(([a, b, op]) => `(${a}) ${op} (${b})`)
    )
  }))
  return bool
}

const HUNDRED = `[${Array.from({ length: 100 }, (_, i) => i).join(', ')}]`

/**
 * The expressions that froze or killed 0.2.0 (issue 36), run before the generated ones: four
 * nested map() and exists() over 100-element lists, and catastrophic backtracking over a literal
 * and over a step's output.
 */
export function hostileWhens (dep: string): string[] {
  return [
    `size(${HUNDRED}.map(a, ${HUNDRED}.map(b, ${HUNDRED}.map(c, ${HUNDRED}.map(d, d))))) > 0`,
    `${HUNDRED}.exists(a, ${HUNDRED}.exists(b, ${HUNDRED}.exists(c, ${HUNDRED}.exists(d, d < 0))))`,
    `'${'a'.repeat(29)}!'.matches('^(a+)+$')`,
    `flows.${dep}.output.matches('^(a+)+$')`
  ]
}

/** Bytes that multiply: an env value of `valueBytes` and `items` forEach items. */
export const multiplying = fc.record({
  valueBytes: fc.oneof(fc.integer({ min: 0, max: 1024 }), fc.constantFrom(64 * 1024, 200 * 1024, 1024 * 1024)),
  items: fc.oneof(fc.integer({ min: 0, max: 50 }), fc.constantFrom(500, 2000, 10_000))
})
