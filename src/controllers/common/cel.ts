// CEL within a budget, for the expressions any tenant writes in a spec (a JobFlow's `when`). The
// API server guards CRD rules three ways, and so does this: a cost estimated when the expression
// is read (cel-cost.ts), a cost limit while it runs, and regexes in linear time (RE2). The meter
// is the library's own evaluator with its `run`, through which every node is evaluated, shadowed
// on our instance: a unit per node, plus the weight of what an operation reads whole or builds.
import { Environment } from '@marcbachmann/cel-js'
import {
  chargedNodes, childrenOf, countedUnits, evaluated, isCall, weigh, type CelNode, type Charged
} from './cel-ast.js'
import { estimateCost, type Bound } from './cel-cost.js'
import { expandedSize, patternProblem, PatternCache, regexUnits, REGEX_MAX_SIZE } from './cel-regex.js'

export { jsonBound, mapBound, recordBound, stringBound, SCALAR, type Bound } from './cel-cost.js'

/**
 * The most an expression may cost, estimated or run, in units of one node evaluated (a string's
 * ten characters, a list's element). Kubernetes' per-expression runtime limit is 1,000,000 of its
 * units; ours is a fifth of that: at the slowest rate measured (about 200 ns a unit, loops over
 * JSON) the costliest expressions stop after 42 ms at the median, 73 ms at worst (docs/security.md).
 */
export const CEL_COST_LIMIT = 200_000

/** The library's evaluator, as far as the meter uses it. */
interface Evaluator {
  run: (node: CelNode, context: unknown) => unknown
}

/** What the meter knows while one expression runs. */
interface Meter {
  spent: number
  limit: number
  charged: Charged
  weights: WeakMap<object, number>
  /** Set once the limit is passed: every node from then on fails at once with it. */
  over?: CostLimitError
}

/** An expression that passed its cost limit while running. */
export class CostLimitError extends Error {}

/** What checking an expression found: its type and estimated cost, or why it cannot run. */
export interface CelCheck {
  /** Why it cannot run: not CEL, a literal pattern RE2 refuses, or an estimate over the limit. */
  problem?: string
  /** Its type, once it is valid CEL. */
  type?: string
  /** Its estimated cost, once it is valid CEL with patterns RE2 runs. */
  cost?: number
}

/** What running an expression gave: its value, or why it gave none (and whether that was the limit). */
export type CelResult = { ok: true, value: unknown } | { ok: false, error: unknown, overLimit: boolean }

interface Parsed {
  (context: Record<string, unknown>): unknown
  ast: CelNode
}

export interface CelOptions {
  /** The variables' CEL types ('map', 'string', ...) and bounds, for checking and estimating. */
  variables: Record<string, { type: string, bound: Bound }>
  /** The library's structural limits (nodes, depth, literal sizes). */
  limits: Record<string, number>
  costLimit?: number
}

/** A CEL environment whose expressions are estimated when read and metered when run. */
export class BudgetedCel {
  readonly costLimit: number
  readonly #environment: Environment
  readonly #evaluator: Evaluator
  readonly #bounds: ReadonlyMap<string, Bound>
  readonly #patterns = new PatternCache()
  #meter: Meter | undefined

  constructor (options: CelOptions) {
    this.costLimit = options.costLimit ?? CEL_COST_LIMIT
    let environment = new Environment({ limits: options.limits })
    for (const [name, { type }] of Object.entries(options.variables)) {
      environment = environment.registerVariable(name, type)
    }
    this.#environment = environment
    this.#bounds = new Map(Object.entries(options.variables).map(([name, { bound }]) => [name, bound]))
    this.#evaluator = evaluatorOf(environment)
    const library = this.#evaluator.run.bind(this.#evaluator)
    this.#evaluator.run = (node, context) => this.#metered(node, context, library)
  }

  /**
   * The expression's type and estimated cost, or its problem: not CEL, a literal pattern RE2
   * refuses, or an estimate over the limit. `variables` narrows the bounds given at construction.
   */
  check (expression: string, variables?: ReadonlyMap<string, Bound>): CelCheck {
    const checked: { valid: boolean, type?: string, error?: unknown } = this.#environment.check(expression)
    if (!checked.valid) return { problem: `not valid CEL: ${firstLine(checked.error)}` }
    const type = String(checked.type)
    const { ast } = this.#environment.parse(expression) as unknown as Parsed
    const badPattern = literalPatternProblem(ast)
    if (badPattern !== undefined) return { type, problem: badPattern }
    const bounds = new Map([...this.#bounds, ...(variables ?? [])])
    const cost = estimateCost(ast, bounds)
    if (cost > this.costLimit) {
      return {
        type,
        cost,
        problem: `costs an estimated ${cost.toLocaleString('en-US')}, over the limit of ` +
          `${this.costLimit.toLocaleString('en-US')}`
      }
    }
    return { type, cost }
  }

  /** The expression's value over `variables`, stopped once it has cost `limit` (at most `costLimit`). */
  evaluate (
    expression: string,
    variables: Record<string, unknown>,
    limit = this.costLimit
  ): CelResult & { cost: number } {
    const meter: Meter = {
      spent: 0,
      limit: Math.min(limit, this.costLimit),
      charged: emptyCharged(),
      weights: new WeakMap()
    }
    this.#meter = meter
    try {
      const parsed = this.#environment.parse(expression) as unknown as Parsed
      meter.charged = chargedNodes(parsed.ast)
      this.#meterRoot(parsed.ast)
      const value = parsed(variables)
      // An error inside `||`, `&&` or a quantifier can be passed over: the limit still stands.
      if (meter.over !== undefined) return { ok: false, error: meter.over, overLimit: true, cost: meter.spent }
      return { ok: true, value, cost: meter.spent }
    } catch (error) {
      return { ok: false, error: meter.over ?? error, overLimit: meter.over !== undefined, cost: meter.spent }
    } finally {
      this.#meter = undefined
    }
  }

  /** The root is evaluated by the library directly, not through `run`: it is routed through the meter too. */
  #meterRoot (root: CelNode): void {
    const evaluate = root.evaluate
    root.evaluate = (evaluator, node, context) =>
      this.#metered(node, context, (own, ownContext) => evaluate.call(own, evaluator, own, ownContext))
  }

  #metered (node: CelNode, context: unknown, library: Evaluator['run']): unknown {
    const meter = this.#meter
    if (meter === undefined) return library(node, context)
    this.#charge(meter, 1)
    const value = isRegexSearch(node) ? this.#regexSearch(meter, node, context) : library(node, context)
    const { read, built, counted } = meter.charged
    if (read.has(node) || built.has(node)) {
      const units = weigh(value, meter.weights)
      this.#charge(meter, read.has(node) && built.has(node) ? 2 * units : units)
    }
    if (typeof value === 'string' && counted.has(node)) this.#charge(meter, countedUnits(value.length))
    return value
  }

  #charge (meter: Meter, units: number): void {
    if (meter.over !== undefined) throw meter.over
    meter.spent += units
    if (meter.spent <= meter.limit) return
    meter.over = new CostLimitError(`it passed its cost limit of ${meter.limit.toLocaleString('en-US')} units`)
    throw meter.over
  }

  /**
   * `subject.matches(pattern)` by RE2: a search, like the library's RegExp.test, in linear time.
   * Anything but two strings goes to the library, which refuses it as no matching overload.
   */
  #regexSearch (meter: Meter, node: CelNode, context: unknown): unknown {
    const nodes = node.receiverWithArgs ?? []
    const args: unknown[] = new Array(nodes.length)
    // Last to first, as the library evaluates arguments (the same error comes first).
    for (let i = nodes.length - 1; i >= 0; i--) args[i] = this.#evaluator.run(nodes[i] as CelNode, context)
    const [subject, pattern] = args
    if (typeof subject !== 'string' || typeof pattern !== 'string' || node.handle === undefined) {
      return node.handle?.(args, this.#evaluator, node)
    }
    this.#charge(meter, regexUnits(subject.length, Math.min(expandedSize(pattern), REGEX_MAX_SIZE)))
    const compiled = this.#patterns.get(pattern)
    if (compiled instanceof Error) throw compiled
    return compiled.test(subject)
  }
}

function emptyCharged (): Charged {
  return { read: new WeakSet(), built: new WeakSet(), counted: new WeakSet() }
}

function isRegexSearch (node: CelNode): boolean {
  return node.op === 'rcall' && isCall(node, 'matches')
}

/** A `matches` whose pattern is a literal that RE2 refuses (backreferences, lookaround, ...). */
function literalPatternProblem (root: CelNode): string | undefined {
  const visit = (node: CelNode): string | undefined => {
    const own = evaluated(node)
    if (isRegexSearch(own)) {
      const pattern = (own.args as [string, CelNode, CelNode[]])[2][0]
      if (pattern !== undefined && pattern.op === 'value' && typeof pattern.args === 'string') {
        const problem = patternProblem(pattern.args)
        if (problem !== undefined) return `has a pattern RE2 cannot run (${JSON.stringify(pattern.args)}): ${problem}`
      }
    }
    for (const child of childrenOf(own)) {
      const problem = visit(child)
      if (problem !== undefined) return problem
    }
    return undefined
  }
  return visit(root)
}

/** The library's evaluator of an environment: the one its parsed expressions are evaluated with. */
function evaluatorOf (environment: Environment): Evaluator {
  const probe = environment.parse('true') as unknown as Parsed
  let found: Evaluator | undefined
  probe.ast.evaluate = (evaluator: unknown) => {
    found = evaluator as Evaluator
    return true
  }
  probe({})
  if (typeof found?.run !== 'function') {
    throw new Error('@marcbachmann/cel-js has no evaluator with run(): the CEL meter cannot count')
  }
  return found
}

export function firstLine (error: unknown): string {
  const message = error instanceof Error
    ? error.message
    : typeof (error as { message?: unknown })?.message === 'string'
      ? (error as { message: string }).message
      : String(error)
  return message.split('\n')[0] ?? message
}

/**
 * The keys of a map variable an expression reads, by a scan of its text: `flows.name` and
 * `flows['name-with-dashes']`; not `item.flows.x`, another variable's field. For checks made when
 * a spec is read (only dependencies in `flows`, only given arguments in `args`); linear.
 */
export function keysRead (expression: string, variable: 'flows' | 'args' | 'flow'): string[] {
  const names = new Set<string>()
  const dotted = new RegExp(`(?<![.\\w])${variable}\\s*\\.\\s*([A-Za-z_][A-Za-z0-9_]*)`, 'g')
  const indexed = new RegExp(`(?<![.\\w])${variable}\\s*\\[\\s*(['"])([^'"]*)\\1\\s*\\]`, 'g')
  for (const match of expression.matchAll(dotted)) names.add(match[1] as string)
  for (const match of expression.matchAll(indexed)) names.add(match[2] as string)
  return [...names]
}
