// Argo's dependency expressions: parsed once (precedence, parentheses, the results a step can
// have), refused with the place of the mistake, and evaluated over settled steps.
import t from 'tap'
import {
  dependsValue, evaluateDepends, parseDepends, type DependsExpression, type SettledStep
} from '../../../src/controllers/jobflow/depends.js'

function parsed (source: string): DependsExpression {
  const value = parseDepends(source)
  if (typeof value === 'string') throw new Error(value)
  return value
}

function holds (source: string, steps: Record<string, SettledStep>): boolean {
  return evaluateDepends(parsed(source).tree, name => steps[name] as SettledStep)
}

t.test('the steps an expression names, once each, in order', async t => {
  t.same(parsed('b.Failed && (c || !a.Skipped) || b').steps, ['b', 'c', 'a'])
  t.same(parsed('build-image.Succeeded').steps, ['build-image'])
})

t.test('a bare name: succeeded, or skipped by its own when; never failed or omitted', async t => {
  t.ok(holds('a', { a: { end: 'Succeeded' } }))
  t.ok(holds('a', { a: { end: 'Skipped' } }))
  t.notOk(holds('a', { a: { end: 'Failed' } }))
  t.notOk(holds('a', { a: { end: 'Omitted' } }))
})

t.test('results, negation, and && binding tighter than ||', async t => {
  const steps: Record<string, SettledStep> = { a: { end: 'Failed' }, b: { end: 'Succeeded' }, c: { end: 'Omitted' } }
  t.ok(holds('a.Failed && b', steps))
  t.ok(holds('c.Omitted', steps))
  t.notOk(holds('a.Errored || a.Daemoned', steps), 'nothing of ours errs or runs as a daemon')
  t.ok(holds('b.Failed && c.Failed || b.Succeeded', steps), '(b.Failed && c.Failed) || b.Succeeded')
  t.notOk(holds('b.Failed && (c.Failed || b.Succeeded)', steps))
  t.ok(holds('!a.Succeeded', steps))
  t.ok(holds('!!b', steps))
  t.ok(holds('s.AnySucceeded && !s.AllFailed', { s: { end: 'Failed', anySucceeded: true, allFailed: false } }))
  t.notOk(holds('a.AnySucceeded', steps), 'a step that is no fan-out has no AnySucceeded')
})

t.test('mistakes are named with their place', async t => {
  t.equal(parseDepends(''), 'depends is empty')
  t.equal(parseDepends('a &&'), 'depends ends where a step name was expected')
  t.equal(parseDepends('a b'), 'depends: unexpected "b" at character 3')
  t.equal(parseDepends('(a || b'), 'depends: the "(" at character 1 is not closed')
  t.equal(parseDepends('a.Done'), 'depends: "a.Done": the result must be one of Succeeded, Failed, Errored, ' +
    'Skipped, Omitted, Daemoned, AnySucceeded, AllFailed')
  t.equal(parseDepends('a == b'), 'depends: unexpected "=" at character 3')
  t.equal(parseDepends('Build'), 'depends: unexpected "B" at character 1', 'step names are lowercase labels')
  t.equal(parseDepends('('.repeat(40) + 'a' + ')'.repeat(40)), 'depends nests deeper than 32')
  t.equal(parseDepends('a'.repeat(1025)), 'depends is longer than 1024 characters')
})

t.test('with only some steps ended: true or false when they decide it, else unknown', async t => {
  const value = (source: string): boolean | undefined =>
    dependsValue(parsed(source).tree, step => (step === 'x' ? { end: 'Succeeded' } : undefined))
  t.equal(value('x.Failed'), false)
  t.equal(value('x.Failed || x.Omitted || x.Skipped || x.Errored'), false)
  t.equal(value('x.Failed && y'), false, 'a false operand decides an and')
  t.equal(value('!x || y.Failed && x.Skipped'), false)
  t.equal(value('x.AnySucceeded || x.AllFailed'), false, 'a step that is no fan-out has neither')
  t.equal(value('x'), true)
  t.equal(value('x.Failed || !x.Failed'), true)
  t.equal(value('x.Succeeded || y'), true, 'a true operand decides an or')
  t.equal(value('x.Failed || y'), undefined)
  t.equal(value('!(x && y)'), undefined)
  t.equal(value('x.Failed || (y && !y)'), undefined, 'sound, not complete: y against itself is not seen')
})
