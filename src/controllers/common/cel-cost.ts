// The cost of an expression estimated when the spec is read, in the units the run-time meter
// (cel.ts) charges: one per node evaluated, plus the weight of what each operation reads whole or
// builds. Each value gets a bound (its most weight, and how many elements a loop over it can see);
// a comprehension (map, filter, all, exists, exists_one) costs its body's cost times that count, so
// macros nested over lists multiply. In the spirit of the API server's estimate for CRD rules.
import {
  ALLOCATING, BINARY_OPERATORS, childrenOf, countedUnits, evaluated, isCall, stringUnits, CHARS_PER_UNIT,
  type CelNode, type Comprehension
} from './cel-ast.js'
import { expandedSize, regexUnits, REGEX_MAX_SIZE } from './cel-regex.js'

/** The most a value can weigh (cel-ast.ts `weigh`) and what reading into it gives. */
export interface Bound {
  /** Its weight in cost units at most. */
  size: number
  /** How many elements (list items, map keys) a loop over it sees at most. */
  items: number
  /** What a loop over it binds, and what indexing a list gives. */
  element?: Bound
  /** What any field or key of it gives, unless `fields` names it. */
  value?: Bound
  fields?: Readonly<Record<string, Bound>>
}

export const SCALAR: Bound = { size: 1, items: 0 }

/** A string of at most `length` characters. */
export function stringBound (length: number): Bound {
  return { size: stringUnits(length), items: 0 }
}

/**
 * Anything read from JSON of at most `bytes` bytes: every value in it weighs no more than the
 * text it came from (a unit per scalar, per ten characters of a string, per entry, each at least a
 * byte of JSON), and a list in it has at most half as many elements as bytes (`[1,1]`).
 */
export function jsonBound (bytes: number): Bound {
  const bound: { size: number, items: number, element?: Bound, value?: Bound } = {
    size: bytes,
    items: Math.ceil(bytes / 2)
  }
  bound.element = bound
  bound.value = bound
  return bound
}

/** A map whose keys are unknown: at most `entries` of them, each of `key` and holding `value`. */
export function mapBound (entries: number, key: Bound, value: Bound): Bound {
  return { size: 1 + entries * (key.size + value.size), items: entries, element: key, value }
}

/** A map with known fields. */
export function recordBound (fields: Record<string, Bound>): Bound {
  const entries = Object.entries(fields)
  const size = 1 + entries.reduce((sum, [key, bound]) => sum + stringUnits(key.length) + bound.size, 0)
  return { size, items: entries.length, element: stringBound(Math.max(0, ...entries.map(([k]) => k.length))), fields }
}

/** The larger of two bounds, part by part. */
function join (a: Bound | undefined, b: Bound | undefined): Bound | undefined {
  if (a === undefined || b === undefined) return a ?? b
  if (a === b) return a
  return {
    size: Math.max(a.size, b.size),
    items: Math.max(a.items, b.items),
    element: widest(a.element, b.element),
    value: widest(a.value, b.value)
  }
}

/** Either bound when one is missing, else a bound of both that does not recurse forever. */
function widest (a: Bound | undefined, b: Bound | undefined): Bound | undefined {
  if (a === undefined || b === undefined || a === b) return a ?? b
  return { size: Math.max(a.size, b.size), items: Math.max(a.items, b.items) }
}

/** What reading a field or key of a value of `bound` gives: no more than the whole. */
function inside (bound: Bound, key?: string): Bound {
  const known = key === undefined ? undefined : bound.fields?.[key]
  return known ?? bound.value ?? bound.element ?? { size: bound.size, items: bound.size }
}

interface Estimate { cost: number, bound: Bound }

/** Where an estimate stands: the bounds of the names in scope. */
interface Scope {
  names: ReadonlyMap<string, Bound>
  /** In a comprehension: what its steps push onto the list it builds. */
  pushed?: { bound?: Bound }
}

/** The estimated cost of a parsed expression whose variables have the given bounds. */
export function estimateCost (root: CelNode, variables: ReadonlyMap<string, Bound>): number {
  return estimate(root, { names: variables }).cost
}

function estimate (node: CelNode, scope: Scope): Estimate {
  const own = evaluated(node)
  if (own.meta.macro !== undefined) return macroEstimate(own, scope)
  if (own.op === 'comprehension') return comprehensionEstimate(own.args as Comprehension, scope)
  const parts = childrenOf(own).map(child => ({ child, ...estimate(child, scope) }))
  const childCost = parts.reduce((sum, part) => sum + part.cost, 0)
  const bound = boundOf(own, parts.map(p => p.bound), scope)
  const traverses = BINARY_OPERATORS.has(own.op) || ['call', 'rcall', '!_', '-_'].includes(own.op)
  const read = traverses ? parts.reduce((sum, part) => sum + part.bound.size, 0) : 0
  const built = ALLOCATING.has(own.op) ? bound.size : 0
  if (own.op === '?:') {
    const [condition, yes, no] = parts as unknown as [Estimate, Estimate, Estimate]
    return { cost: 1 + condition.cost + Math.max(yes.cost, no.cost), bound }
  }
  const counted = isCall(own, 'size') ? parts.reduce((sum, part) => sum + countedUnits(chars(part.bound)), 0) : 0
  return { cost: 1 + childCost + read + built + counted + regexCost(own, parts), bound }
}

/** The most characters a string of this bound has. */
function chars (bound: Bound): number {
  return bound.size * CHARS_PER_UNIT
}

/**
 * `s.matches(re)`: compiling the pattern, then searching the subject. A pattern built at run time
 * may expand to the largest size compiled, whatever its length.
 */
function regexCost (node: CelNode, parts: Array<Estimate & { child: CelNode }>): number {
  if (node.op !== 'rcall' || !isCall(node, 'matches') || parts.length !== 2) return 0
  const [subject, pattern] = parts as [Estimate, Estimate & { child: CelNode }]
  const literal = evaluated(pattern.child)
  const size = literal.op === 'value' && typeof literal.args === 'string'
    ? expandedSize(literal.args)
    : REGEX_MAX_SIZE
  return regexUnits(chars(subject.bound), size)
}

/** The bound of what `node` gives, from the bounds of what it evaluates. */
function boundOf (node: CelNode, children: Bound[], scope: Scope): Bound {
  switch (node.op) {
    case 'value': return valueBound(node.args)
    case 'id': return scope.names.get(node.args as string) ?? SCALAR
    case '.': case '.?': return inside(children[0] as Bound, (node.args as [unknown, string])[1])
    case '[]': case '[?]': return indexBound(node, children)
    case 'list': return listBound(children)
    case 'map': return mapLiteralBound(node, children)
    case 'accuPush': {
      if (scope.pushed !== undefined) scope.pushed.bound = join(scope.pushed.bound, children[0])
      return SCALAR
    }
    case '?:': return join(children[1], children[2]) as Bound
    case '+': return sumBound(children)
    case 'call': case 'rcall': return callBound((node.args as [string])[0], children)
    default: return SCALAR
  }
}

function valueBound (value: unknown): Bound {
  return typeof value === 'string' ? stringBound(value.length) : SCALAR
}

/** `x[k]`: the field a literal key names, else whatever any key of `x` holds. */
function indexBound (node: CelNode, children: Bound[]): Bound {
  const keyNode = evaluated((node.args as [CelNode, CelNode])[1])
  const literal = keyNode.op === 'value' && typeof keyNode.args === 'string' ? keyNode.args : undefined
  return inside(children[0] as Bound, literal)
}

function listBound (elements: Bound[]): Bound {
  const element = elements.reduce<Bound | undefined>((all, bound) => join(all, bound), undefined)
  const size = 1 + elements.reduce((sum, bound) => sum + bound.size, 0)
  return element === undefined ? { size, items: 0 } : { size, items: elements.length, element }
}

function mapLiteralBound (node: CelNode, children: Bound[]): Bound {
  const keys = children.filter((_, i) => i % 2 === 0)
  const values = children.filter((_, i) => i % 2 === 1)
  const fields: Record<string, Bound> = {}
  ;(node.args as Array<[CelNode, CelNode]>).forEach(([key], i) => {
    const own = evaluated(key)
    if (own.op === 'value' && typeof own.args === 'string') fields[own.args] = values[i] as Bound
  })
  const value = values.reduce<Bound | undefined>((all, bound) => join(all, bound), undefined)
  const element = keys.reduce<Bound | undefined>((all, bound) => join(all, bound), undefined)
  const size = 1 + children.reduce((sum, bound) => sum + bound.size, 0)
  return {
    size,
    items: keys.length,
    ...(element !== undefined ? { element } : {}),
    ...(value !== undefined ? { value } : {}),
    fields
  }
}

/** `a + b`: numbers, or strings and lists joined (their weights and lengths add up). */
function sumBound (children: Bound[]): Bound {
  const [a, b] = children as [Bound, Bound]
  return { size: a.size + b.size, items: a.items + b.items, ...optional('element', join(a.element, b.element)) }
}

function optional (key: 'element', bound: Bound | undefined): Partial<Bound> {
  return bound === undefined ? {} : { [key]: bound }
}

/** What a function gives: a scalar, or a string or list no bigger than what it was given. */
function callBound (name: string, args: Bound[]): Bound {
  const all = args.reduce((sum, bound) => sum + bound.size, 0)
  switch (name) {
    case 'lowerAscii': case 'upperAscii': case 'trim': case 'substring': case 'dyn': case 'bytes':
      return args[0] ?? SCALAR
    case 'string': return { size: (args[0]?.size ?? 1) + 3, items: 0 }
    case 'split': {
      const pieces = (args[0]?.size ?? 1) * CHARS_PER_UNIT + 1
      return { size: pieces + all, items: pieces, element: args[0] ?? SCALAR }
    }
    case 'join': {
      const list = args[0] ?? SCALAR
      return { size: list.size + list.items * (args[1]?.size ?? 0), items: 0 }
    }
    default: return SCALAR
  }
}

/**
 * A comprehension: its iterable and first value once, then its step once per element at most.
 * map and filter build a list as long as the iterable, of what the step pushes.
 */
function comprehensionEstimate (parts: Comprehension, scope: Scope): Estimate {
  const iterable = estimate(parts.iterable, scope)
  const init = estimate(parts.init, scope)
  const names = new Map(scope.names).set(parts.iterVarName, iterable.bound.element ?? SCALAR)
  const pushed: { bound?: Bound } = {}
  const step = estimate(parts.step, { ...scope, names, pushed })
  const count = iterable.bound.items
  const bound: Bound = parts.kind === 'quantifier'
    ? SCALAR
    : { size: 1 + count * (pushed.bound?.size ?? 1), items: count, ...optional('element', pushed.bound) }
  const cost = 1 + iterable.cost + iterable.bound.size + init.cost + count * step.cost + bound.size
  return { cost, bound }
}

/** `has(x.f)` costs what reading `x` does; `cel.bind(v, value, e)` evaluates value once, then e. */
function macroEstimate (node: CelNode, scope: Scope): Estimate {
  const macro = node.meta.macro as NonNullable<CelNode['meta']['macro']>
  if (macro.val !== undefined && macro.exp !== undefined && macro.var !== undefined) {
    const value = estimate(macro.val, scope)
    const names = new Map(scope.names).set(macro.var, value.bound)
    const body = estimate(macro.exp, { ...scope, names })
    return { cost: 1 + value.cost + body.cost, bound: body.bound }
  }
  const cost = (macro.args ?? []).reduce((sum, arg) => sum + estimate(arg, scope).cost, 1)
  return { cost, bound: SCALAR }
}
