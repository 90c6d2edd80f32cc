// `flows[].depends`: Argo Workflows' dependency expressions (its page "Enhanced Depends Logic"),
// e.g. `build.Succeeded && (test.Failed || lint)`. A bare name means the step succeeded or its own
// `when` skipped it, which is also what `dependencies: [name]` means. Parsed once when the spec is
// read, into a tree whose evaluation is linear in its size: no tenant's expression can cost more
// than its 1024 characters.

/** A dependency's result as an expression reads it (Argo's TaskResults). */
export const DEPENDS_RESULTS = [
  'Succeeded', 'Failed', 'Errored', 'Skipped', 'Omitted', 'Daemoned', 'AnySucceeded', 'AllFailed'
] as const
export type DependsResult = typeof DEPENDS_RESULTS[number]

import type { StepEnd } from '../../formats/jobflow-status.js'

export type { StepEnd }

/** A finished dependency: how it ended, and for a fan-out step how its items did. */
export interface SettledStep {
  end: StepEnd
  /** A fan-out step with at least one item succeeded (Argo's AnySucceeded). */
  anySucceeded?: boolean
  /** A fan-out step with items, every one failed (Argo's AllFailed). */
  allFailed?: boolean
}

export type DependsNode =
  | { op: 'ref', step: string, result?: DependsResult }
  | { op: 'not', arg: DependsNode }
  | { op: 'and' | 'or', args: DependsNode[] }

/** A parsed `depends`: its tree, the steps it names (in order of appearance), and its text. */
export interface DependsExpression {
  source: string
  tree: DependsNode
  steps: string[]
}

export const DEPENDS_MAX_LENGTH = 1024
const MAX_DEPTH = 32

/** Whether a dependency that ended so satisfies a bare `name` (and `dependencies: [name]`). */
export function satisfiesBareName (end: StepEnd): boolean {
  return end === 'Succeeded' || end === 'Skipped'
}

/** The expression parsed, or why it cannot be. */
export function parseDepends (source: string): DependsExpression | string {
  if (source.trim() === '') return 'depends is empty'
  if (source.length > DEPENDS_MAX_LENGTH) return `depends is longer than ${DEPENDS_MAX_LENGTH} characters`
  const tokens = tokenize(source)
  if (typeof tokens === 'string') return tokens
  const parser = new Parser(tokens)
  const tree = parser.expression(0)
  if (typeof tree === 'string') return tree
  const rest = parser.peek()
  if (rest !== undefined) return `depends: unexpected ${JSON.stringify(rest.text)} at character ${rest.at + 1}`
  const steps: string[] = []
  collectSteps(tree, steps)
  return { source, tree, steps: [...new Set(steps)] }
}

/** The value of an expression over its dependencies, each settled. */
export function evaluateDepends (node: DependsNode, settled: (step: string) => SettledStep): boolean {
  switch (node.op) {
    case 'ref': return refValue(settled(node.step), node.result)
    case 'not': return !evaluateDepends(node.arg, settled)
    case 'and': return node.args.every(arg => evaluateDepends(arg, settled))
    case 'or': return node.args.some(arg => evaluateDepends(arg, settled))
  }
}

/**
 * The value of an expression when only some of its steps have ended (`known` gives undefined for
 * the others): true or false when those decide it whatever the others do, else undefined. Kleene's
 * three-valued logic, linear in the expression's size: sound (a definite answer is the answer of
 * every run), not complete (`a.Failed || (b && !b)` is undefined, not false).
 */
export function dependsValue (
  node: DependsNode,
  known: (step: string) => SettledStep | undefined
): boolean | undefined {
  switch (node.op) {
    case 'ref': {
      const step = known(node.step)
      return step === undefined ? undefined : refValue(step, node.result)
    }
    case 'not': {
      const value = dependsValue(node.arg, known)
      return value === undefined ? undefined : !value
    }
    case 'and': case 'or': {
      // The value that decides (false for `and`, true for `or`) wins over any unknown.
      const decides = node.op === 'or'
      let unknown = false
      for (const arg of node.args) {
        const value = dependsValue(arg, known)
        if (value === decides) return decides
        if (value === undefined) unknown = true
      }
      return unknown ? undefined : !decides
    }
  }
}

function refValue (step: SettledStep, result: DependsResult | undefined): boolean {
  switch (result) {
    case undefined: return satisfiesBareName(step.end)
    case 'Succeeded': case 'Failed': case 'Skipped': case 'Omitted': return step.end === result
    // A Job's failure is a Failed step: nothing of ours errs as Argo's pods can, or runs as a daemon.
    case 'Errored': case 'Daemoned': return false
    case 'AnySucceeded': return step.anySucceeded === true
    case 'AllFailed': return step.allFailed === true
  }
}

function collectSteps (node: DependsNode, into: string[]): void {
  if (node.op === 'ref') into.push(node.step)
  else if (node.op === 'not') collectSteps(node.arg, into)
  else node.args.forEach(arg => collectSteps(arg, into))
}

interface Token { kind: '(' | ')' | '!' | '&&' | '||' | 'ref', text: string, at: number }

const REF = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)(\.([A-Za-z]+))?/

function tokenize (source: string): Token[] | string {
  const tokens: Token[] = []
  let at = 0
  while (at < source.length) {
    const rest = source.slice(at)
    const space = /^\s+/.exec(rest)
    if (space !== null) {
      at += space[0].length
      continue
    }
    const operator = ['&&', '||', '(', ')', '!'].find(op => rest.startsWith(op)) as Token['kind'] | undefined
    if (operator !== undefined) {
      tokens.push({ kind: operator, text: operator, at })
      at += operator.length
      continue
    }
    const ref = REF.exec(rest)
    if (ref === null) return `depends: unexpected ${JSON.stringify(rest[0])} at character ${at + 1}`
    const result = ref[4]
    if (result !== undefined && !(DEPENDS_RESULTS as readonly string[]).includes(result)) {
      return `depends: ${JSON.stringify(ref[0])}: the result must be one of ${DEPENDS_RESULTS.join(', ')}`
    }
    tokens.push({ kind: 'ref', text: ref[0], at })
    at += ref[0].length
  }
  return tokens
}

/** Recursive descent: `||` binds looser than `&&`, `!` tighter, parentheses group. */
class Parser {
  private next = 0
  constructor (private readonly tokens: Token[]) {}

  peek (): Token | undefined {
    return this.tokens[this.next]
  }

  expression (depth: number): DependsNode | string {
    return this.chain('||', 'or', depth, d => this.chain('&&', 'and', d, d2 => this.unary(d2)))
  }

  private chain (
    kind: '&&' | '||',
    op: 'and' | 'or',
    depth: number,
    operand: (depth: number) => DependsNode | string
  ): DependsNode | string {
    const first = operand(depth)
    if (typeof first === 'string') return first
    const args = [first]
    while (this.peek()?.kind === kind) {
      this.next++
      const arg = operand(depth)
      if (typeof arg === 'string') return arg
      args.push(arg)
    }
    return args.length === 1 ? first : { op, args }
  }

  private unary (depth: number): DependsNode | string {
    if (depth > MAX_DEPTH) return `depends nests deeper than ${MAX_DEPTH}`
    const token = this.peek()
    if (token === undefined) return 'depends ends where a step name was expected'
    this.next++
    if (token.kind === '!') {
      const arg = this.unary(depth + 1)
      return typeof arg === 'string' ? arg : { op: 'not', arg }
    }
    if (token.kind === '(') {
      const inner = this.expression(depth + 1)
      if (typeof inner === 'string') return inner
      if (this.peek()?.kind !== ')') return `depends: the "(" at character ${token.at + 1} is not closed`
      this.next++
      return inner
    }
    if (token.kind !== 'ref') return `depends: unexpected ${JSON.stringify(token.text)} at character ${token.at + 1}`
    const [step, result] = token.text.split('.') as [string, DependsResult | undefined]
    return result === undefined ? { op: 'ref', step } : { op: 'ref', step, result }
  }
}
