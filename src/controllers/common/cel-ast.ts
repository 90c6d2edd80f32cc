// The parts of @marcbachmann/cel-js's parsed expressions that the budget reads: which nodes a node
// evaluates, which of them an operation traverses, and how much a value weighs. The library does
// not type its AST's internals, so they are described here once; package.json pins its version
// and test/controllers/common/cel.test.ts fails if the shape moves.

/** A node of a parsed expression, as far as the budget reads it. */
export interface CelNode {
  op: string
  args: unknown
  /** Set by the library: the node a macro (map, exists, ...) expands into, or a macro's own parts. */
  readonly meta: { alternate?: CelNode, macro?: CelMacro }
  /** Set by the library's type check on calls: how the call dispatches on its arguments. */
  handle?: (...args: unknown[]) => unknown
  /** Set by the library's type check on method calls: the receiver, then the arguments. */
  receiverWithArgs?: CelNode[]
  evaluate: (evaluator: unknown, node: CelNode, context: unknown) => unknown
}

/** `has(x.f)` and `cel.bind(v, value, expression)`, which the library keeps as macros. */
export interface CelMacro {
  args?: CelNode[]
  var?: string
  val?: CelNode
  exp?: CelNode
}

/** The parts of a comprehension (what map, filter, all, exists and exists_one expand into). */
export interface Comprehension {
  kind?: string
  iterable: CelNode
  iterVarName: string
  init: CelNode
  step: CelNode
}

/** The binary operators: each traverses both operands. */
export const BINARY_OPERATORS = new Set(['!=', '==', 'in', '+', '-', '*', '/', '%', '<', '<=', '>', '>='])

/** Operations whose operands' whole values are read (compared, searched, copied). */
const TRAVERSING = new Set([...BINARY_OPERATORS, 'call', 'rcall', '!_', '-_'])

/** Operations that build a new value: what they give is charged as allocated. */
export const ALLOCATING = new Set(['+', 'call', 'rcall', 'list', 'map', 'comprehension'])

/** The node that is evaluated in place of `node`: a macro's expansion, or the node itself. */
export function evaluated (node: CelNode): CelNode {
  return node.meta.alternate ?? node
}

/** The nodes `node` evaluates directly, in no particular order. */
export function childrenOf (node: CelNode): CelNode[] {
  const macro = node.meta.macro
  if (macro !== undefined) return [...(macro.args ?? []), macro.val, macro.exp].filter(isNode)
  const args = node.args
  switch (node.op) {
    case 'value': case 'id': case 'accuValue': case 'accuInc': return []
    case '.': case '.?': return [(args as [CelNode])[0]]
    case 'call': return (args as [string, CelNode[]])[1]
    case 'rcall': return [(args as [string, CelNode])[1], ...(args as [string, CelNode, CelNode[]])[2]]
    case 'map': return (args as Array<[CelNode, CelNode]>).flat()
    case 'comprehension': {
      const parts = args as Comprehension
      return [parts.iterable, parts.init, parts.step]
    }
    case 'accuPush': case '!_': case '-_': return [args as CelNode]
    default: return Array.isArray(args) ? args.filter(isNode) : []
  }
}

function isNode (value: unknown): value is CelNode {
  return typeof value === 'object' && value !== null && 'op' in value && 'meta' in value
}

/** What the meter charges by weight, beyond a unit per node: what is read whole, and what is built. */
export interface Charged {
  /** Nodes whose value an operation reads whole (compares, searches, copies, loops over). */
  read: WeakSet<CelNode>
  /** Nodes that build a new value. */
  built: WeakSet<CelNode>
  /** Strings given to `size`, which the library counts code point by code point. */
  counted: WeakSet<CelNode>
}

/**
 * The nodes of an expression that the meter charges by weight. A node is marked as its parent
 * names it, since that is the node the evaluator is asked to run. Macros (has, cel.bind) are
 * charged a unit per node only: they read no value whole.
 */
export function chargedNodes (root: CelNode): Charged {
  const charged: Charged = { read: new WeakSet(), built: new WeakSet(), counted: new WeakSet() }
  const visit = (node: CelNode): void => {
    const own = evaluated(node)
    const children = childrenOf(own)
    if (own.meta.macro === undefined) {
      if (ALLOCATING.has(own.op)) charged.built.add(node)
      if (TRAVERSING.has(own.op)) for (const child of children) charged.read.add(child)
      if (own.op === 'comprehension') charged.read.add((own.args as Comprehension).iterable)
      if (isCall(own, 'size')) for (const child of children) charged.counted.add(child)
    }
    for (const child of children) visit(child)
  }
  visit(root)
  return charged
}

/** Whether `node` calls the function or method `name`. */
export function isCall (node: CelNode, name: string): boolean {
  return (node.op === 'call' || node.op === 'rcall') && (node.args as [string])[0] === name
}

/**
 * Characters `size` counts per unit: the library walks a string code point by code point, about
 * two and a half times slower per character than the evaluator per unit (docs/security.md).
 */
export const COUNTED_CHARS_PER_UNIT = 4

/** What `size` charges for counting a string of `length` characters. */
export function countedUnits (length: number): number {
  return Math.ceil(length / COUNTED_CHARS_PER_UNIT)
}

/** Characters of a string that weigh one unit, as Kubernetes charges a tenth per character. */
export const CHARS_PER_UNIT = 10

/** A string's weight in cost units. */
export function stringUnits (length: number): number {
  return 1 + Math.floor(length / CHARS_PER_UNIT)
}

/**
 * A value's weight in cost units: one per scalar, per string's ten characters, per list element and
 * map entry, all the way down. Lists and maps are weighed once (`weights`): a loop that reads one
 * again is charged again without walking it again. An empty list is not remembered: the library
 * fills a comprehension's empty accumulator in place.
 */
export function weigh (value: unknown, weights: WeakMap<object, number>): number {
  if (typeof value === 'string') return stringUnits(value.length)
  if (typeof value !== 'object' || value === null) return 1
  const known = weights.get(value)
  if (known !== undefined) return known
  let units = 1
  if (Array.isArray(value) || value instanceof Set) {
    for (const element of value) units += weigh(element, weights)
  } else if (value instanceof Map) {
    for (const [key, element] of value) units += weigh(key, weights) + weigh(element, weights)
  } else if (value instanceof Uint8Array) {
    units = stringUnits(value.length)
  } else if (value.constructor === Object || value.constructor === undefined) {
    for (const [key, element] of Object.entries(value)) units += weigh(key, weights) + weigh(element, weights)
  }
  if (units > 1) weights.set(value, units)
  return units
}
