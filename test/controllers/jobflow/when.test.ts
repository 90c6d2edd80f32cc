// flows[].when: what is refused when the spec is read, and what an expression gives.
import t from 'tap'
import { evaluateWhen, flowsRead, whenProblem } from '../../../src/controllers/jobflow/when.js'

t.test('the flows an expression reads, in both spellings', async t => {
  t.same(
    flowsRead("flows.build.phase == 'Failed' || flows['unit-tests'].phase == 'Succeeded'").sort(),
    ['build', 'unit-tests']
  )
  t.same(flowsRead('true'), [])
})

t.test('refused when the spec is read: not CEL, not a boolean, reading a flow that is not a dependency, too ' +
  'long', async t => {
  t.equal(whenProblem("flows.build.phase == 'Failed'", ['build'], 'flow "notify"'), undefined)
  t.equal(
    whenProblem("flows.a.phase == 'Succeeded' || flows.b.phase == 'Succeeded'", ['a', 'b'], 'flow "x"'),
    undefined
  )
  t.match(
    whenProblem('flows.build.phase ==', ['build'], 'flow "notify"'),
    /^flow "notify": when "flows.build.phase ==" is not valid CEL: /
  )
  t.match(whenProblem('1 + 2', [], 'flow "x"'), /when must give true or false, not a int/)
  t.match(
    whenProblem("flows.deploy.phase == 'Failed'", ['build'], 'flow "notify"'),
    /when reads flows.deploy, which is not a dependency of the flow/
  )
  t.match(whenProblem(`true${' && true'.repeat(200)}`, [], 'flow "x"'), /longer than 1024 characters/)
  t.match(whenProblem(' ', [], 'flow "x"'), /when is empty/)
})

t.test('evaluated over the dependencies\' outcomes', async t => {
  const outcomes = new Map([
    ['build', { phase: 'Failed' as const, message: 'BackoffLimitExceeded' }],
    ['lint', { phase: 'Succeeded' as const }]
  ])
  t.equal(evaluateWhen("flows.build.phase == 'Failed'", outcomes), true)
  t.equal(evaluateWhen("flows.build.phase == 'Succeeded' && flows.lint.phase == 'Succeeded'", outcomes), false)
  t.equal(
    evaluateWhen("flows.build.message.contains('Backoff')", outcomes),
    true,
    'the failure\'s message is there too'
  )
  t.match(
    evaluateWhen('flows.build.phase', outcomes),
    /gave a string, not true or false/,
    'a value that is not a boolean is no answer'
  )
})

const HUNDRED = `[${Array(100).fill('1').join(',')}]`
const FOUR_EXISTS = `${HUNDRED}.exists(a, ${HUNDRED}.exists(b, ${HUNDRED}.exists(c, ` +
  `${HUNDRED}.exists(d, a + b + c + d == 5))))`

t.test('a when too costly is refused when read, naming its estimate and the limit', async t => {
  t.match(
    whenProblem(FOUR_EXISTS, [], 'flow "notify"'),
    /^flow "notify": when costs an estimated [0-9,]+, over the limit of 200,000$/
  )
  t.equal(whenProblem("flows.a.output.matches('^(a+)+$')", ['a'], 'flow "x"'), undefined, 'RE2 runs it in linear time')
  t.match(
    whenProblem("flows.a.output.matches('(a)\\\\1')", ['a'], 'flow "x"'),
    /^flow "x": when has a pattern RE2 cannot run/
  )
})

t.test('at run time a when stops at its cost limit, and says so', async t => {
  const outcomes = new Map([['a', { phase: 'Succeeded' as const, output: `${'a'.repeat(1000)}!` }]])
  t.same(evaluateWhen(FOUR_EXISTS, outcomes), { overLimit: 'it passed its cost limit of 200,000 units' })
  t.equal(evaluateWhen("flows.a.output.matches('^(a+)+$')", outcomes), false, 'the 1,000-character output returns')
})
