// CEL within a budget: what is refused when read, what stops while running, and that regexes run
// on RE2. The hostile expressions are issue 36's: each used to kill the process or hold the event
// loop for seconds; here each is refused or stopped.
import t from 'tap'
import { Environment } from '@marcbachmann/cel-js'
import {
  BudgetedCel, CEL_COST_LIMIT, jsonBound, mapBound, recordBound, stringBound
} from '../../../src/controllers/common/cel.js'
import { expandedSize } from '../../../src/controllers/common/cel-regex.js'

const LIMITS = { maxAstNodes: 500, maxDepth: 32, maxListElements: 100, maxMapEntries: 100, maxCallArguments: 8 }
const OUTCOME = recordBound({ phase: stringBound(9), output: stringBound(1024), outputJSON: jsonBound(1024) })
const VARIABLES = { flows: { type: 'map', bound: mapBound(2, stringBound(63), OUTCOME) } }
const cel = new BudgetedCel({ limits: LIMITS, variables: VARIABLES })

const HUNDRED = `[${Array(100).fill('1').join(',')}]`
/** `depth` comprehensions of `macro`, each over a list literal of 100 elements, nested. */
function nested (macro: 'map' | 'exists', depth: number): string {
  const names = ['a', 'b', 'c', 'd', 'e'].slice(0, depth)
  const body = macro === 'map' ? names.join(' + ') : `${names.join(' + ')} == 5`
  const loops = names.reduceRight((inner, name) => `${HUNDRED}.${macro}(${name}, ${inner})`, body)
  return macro === 'map' ? `${loops}.size() > 0` : loops
}
const OUTPUT = `${'a'.repeat(1000)}!`
const FLOWS = {
  a: { phase: 'Succeeded', output: OUTPUT },
  b: { phase: 'Failed', output: '{"ok":true}', outputJSON: { ok: true } }
}

t.test('refused when read: four nested map() or exists() over 100-element lists', async t => {
  for (const macro of ['map', 'exists'] as const) {
    const expression = nested(macro, 4)
    t.ok(expression.length > 800, `${macro}: as long as the issue's (${expression.length} characters)`)
    const checked = cel.check(expression)
    t.match(checked.problem, /^costs an estimated [0-9,]+, over the limit of 200,000$/, macro)
    t.ok((checked.cost as number) > 1_000_000_000, `${macro}: a hundred million iterations and more`)
  }
})

t.test('stopped while running, had it been read: the limit ends it, with the reason', async t => {
  for (const macro of ['map', 'exists'] as const) {
    const result = cel.evaluate(nested(macro, 4), { flows: FLOWS })
    t.equal(result.ok, false, macro)
    if (result.ok) continue
    t.equal(result.overLimit, true)
    t.match(String(result.error), /passed its cost limit of 200,000 units/)
    t.ok(result.cost > CEL_COST_LIMIT && result.cost < CEL_COST_LIMIT * 2, 'it stops just past the limit')
  }
})

t.test('the estimate multiplies as comprehensions nest, and the meter stays under it', async t => {
  let previous = 0
  for (let depth = 1; depth <= 4; depth++) {
    const cost = cel.check(nested('exists', depth)).cost as number
    t.ok(cost >= previous * 100, `depth ${depth}: ${cost} is a hundred times depth ${depth - 1}'s at least`)
    previous = cost
  }
  const expressions = [
    "flows.a.phase == 'Succeeded'",
    nested('exists', 2),
    `${HUNDRED}.map(x, flows.a.output + string(x)).size() == 100`,
    "flows.a.output.matches('^(a+)+$') || flows.a.output.contains('b')",
    'has(flows.b.outputJSON) && flows.b.outputJSON.ok == true && size(flows.a.output) > 10',
    "cel.bind(o, flows.a.output, o.startsWith('a') && o.endsWith('!'))",
    "flows.b.output.split(',').size() == 1"
  ]
  for (const expression of expressions) {
    const checked = cel.check(expression)
    const run = cel.evaluate(expression, { flows: FLOWS })
    t.equal(checked.problem, undefined, expression)
    t.ok(run.ok, `${expression} runs`)
    const estimated = checked.cost as number
    t.ok(run.cost > 0 && run.cost <= estimated, `${expression}: ran ${run.cost}, estimated ${estimated}`)
  }
})

t.test('the meter counts: a small limit stops a small loop, and more work costs more', async t => {
  // If the library stopped evaluating through the evaluator's run() (an upgrade), nothing would be counted.
  const tiny = new BudgetedCel({ limits: LIMITS, variables: VARIABLES, costLimit: 50 })
  const stopped = tiny.evaluate(`${HUNDRED}.all(x, x > 0)`, { flows: FLOWS })
  t.equal(stopped.ok, false)
  t.equal(!stopped.ok && stopped.overLimit, true)
  const small = cel.evaluate('[1, 2, 3].all(x, x > 0)', { flows: FLOWS })
  const large = cel.evaluate(`${HUNDRED}.all(x, x > 0)`, { flows: FLOWS })
  t.ok(small.cost >= 3 * 4, `three steps of four nodes at least (${small.cost})`)
  t.ok(large.cost > 20 * small.cost, `a hundred steps cost more than twenty times three (${large.cost})`)
  const short = cel.evaluate("flows.b.output.contains('z')", { flows: FLOWS })
  const long = cel.evaluate("flows.a.output.contains('z')", { flows: FLOWS })
  t.ok(long.cost >= short.cost + 90, 'a thousand characters read weigh a hundred units')
  const swallowed = tiny.evaluate(`${HUNDRED}.exists(x, x == 2) || true`, { flows: FLOWS })
  t.equal(swallowed.ok, false, 'a limit passed inside || stands, though || passes over errors')
})

t.test('regexes run on RE2: (a+)+ over 29 a\'s and over a 1,000-character output return', async t => {
  const literal = `'${'a'.repeat(29)}!'.matches('^(a+)+$')`
  t.equal(cel.check(literal).problem, undefined)
  const answer = cel.evaluate(literal, { flows: FLOWS })
  t.equal(answer.ok && answer.value, false)
  const output = "flows.a.output.matches('^(a+)+$')"
  t.equal(cel.check(output).problem, undefined)
  const result = cel.evaluate(output, { flows: FLOWS })
  t.equal(result.ok && result.value, false)
})

t.test('matches is a search, as RegExp.test was: the same answers on ordinary patterns', async t => {
  const plain = new Environment({ limits: LIMITS })
  const cases: Array<[string, string]> = [
    ['xabcx', 'abc'], ['abc', '^b'], ['abc', 'c$'], ['abc', '^abc$'], ['v1.2.3', '^v[0-9]+\\.[0-9]+'],
    ['', ''], ['a\nb', '^b'], ['ab', 'a|b'], ['ünï', '^.{3}$']
  ]
  for (const [subject, pattern] of cases) {
    const expression = `${JSON.stringify(subject)}.matches(${JSON.stringify(pattern)})`
    const expected: unknown = plain.evaluate(expression)
    const got = cel.evaluate(expression, { flows: FLOWS })
    t.same(got.ok && got.value, expected, expression)
  }
  const flag = cel.evaluate('"Hello".matches("(?i)hello")', { flows: FLOWS })
  t.equal(flag.ok && flag.value, true, 'RE2\'s (?i), which RegExp refused, now runs')
  const astral = cel.evaluate('"🙂x".matches("^.x$")', { flows: FLOWS })
  t.equal(astral.ok && astral.value, true, '. is one code point, as CEL says, where RegExp saw two halves')
})

t.test('patterns RE2 cannot run are refused when literal, and fail when built', async t => {
  t.match(cel.check("flows.a.output.matches('(a)\\\\1')").problem, /^has a pattern RE2 cannot run \("\(a\)\\\\1"\): /)
  t.match(cel.check("flows.a.output.matches('a(?=b)')").problem, /pattern RE2 cannot run/)
  t.match(
    cel.check("flows.a.output.matches('[^c]{1,1000}[^d]{1,1000}')").problem,
    /size once repeats are expanded, [0-9]+, is over 1000/
  )
  const built = cel.evaluate("flows.a.output.matches('(a)' + '\\\\1')", { flows: FLOWS })
  t.equal(built.ok, false)
  t.match(!built.ok && String((built.error as Error).message), /^Invalid regular expression: \(a\)\\1/)
  t.equal(!built.ok && built.overLimit, false)
})

t.test('the expanded size of a pattern multiplies nested repeats', async t => {
  t.equal(expandedSize('abc'), 3)
  t.equal(expandedSize('x{1000}'), 1000)
  t.ok(expandedSize('(ab){10}') >= 20)
  t.ok(expandedSize('((a){10}){10}') >= 100)
  t.ok(expandedSize('\\d{5}') >= 5)
})

t.test('answers and errors are the library\'s own on ordinary expressions', async t => {
  const plain = new Environment({ limits: LIMITS }).registerVariable('flows', 'map')
  const expressions = [
    "flows.a.phase == 'Succeeded'", "flows.b.phase == 'Failed' && flows.a.output.startsWith('aaa')",
    'flows.b.outputJSON.ok', 'flows.a.outputJSON.ok', "flows.c.phase == 'x'", 'flows.a.phase',
    "size(flows.a.output) > 1000 ? 'big' : 'small'", "flows.a.matches('x')", '1 / 0 == 1'
  ]
  for (const expression of expressions) {
    let expected: unknown
    try {
      expected = { value: plain.evaluate(expression, { flows: FLOWS }) }
    } catch (error) {
      expected = { error: (error as Error).message.split('\n')[0] }
    }
    const got = cel.evaluate(expression, { flows: FLOWS })
    const answer = got.ok ? { value: got.value } : { error: (got.error as Error).message.split('\n')[0] }
    t.same(answer, expected, expression)
  }
})
