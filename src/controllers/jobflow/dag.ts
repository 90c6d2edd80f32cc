// The dependency graph of a JobFlow: unknown names and cycles make a spec invalid, and the
// message names the cycle so a person can find it.

export interface Node {
  name: string
  dependencies: string[]
}

/**
 * Checks the graph and returns its nodes in dependency order (Kahn's algorithm, ties in spec
 * order) or the problems that prevent one. Runs in time linear in nodes plus edges.
 */
export function orderByDependencies<T extends Node> (nodes: T[]): { order: T[], problems: string[] } {
  // By index rather than by name: a fan-out makes 10,000 nodes, ordered at every sync.
  const indexOf = new Map<string, number>()
  nodes.forEach((node, i) => indexOf.set(node.name, i))
  const problems: string[] = []
  for (const node of nodes) {
    for (const dep of node.dependencies) {
      if (dep === node.name) problems.push(`flow ${JSON.stringify(node.name)} depends on itself`)
      else if (!indexOf.has(dep)) {
        problems.push(
        `flow ${JSON.stringify(node.name)} depends on unknown flow ${JSON.stringify(dep)}`
        )
      }
    }
  }
  if (problems.length > 0) return { order: [], problems }

  const waitingOn = new Int32Array(nodes.length)
  const dependants: Array<number[] | undefined> = new Array(nodes.length)
  nodes.forEach((node, i) => {
    const deps = node.dependencies.length > 1 ? [...new Set(node.dependencies)] : node.dependencies
    waitingOn[i] = deps.length
    for (const dep of deps) {
      const at = indexOf.get(dep) as number
      const list = dependants[at]
      if (list === undefined) dependants[at] = [i]
      else list.push(i)
    }
  })
  const ready: number[] = []
  nodes.forEach((_, i) => { if (waitingOn[i] === 0) ready.push(i) })
  const order: T[] = []
  for (let r = 0; r < ready.length; r++) {
    const at = ready[r] as number
    order.push(nodes[at] as T)
    for (const next of dependants[at] ?? []) {
      const left = (waitingOn[next] as number) - 1
      waitingOn[next] = left
      if (left === 0) ready.push(next)
    }
  }
  if (order.length < nodes.length) {
    const placed = new Set(order.map(n => n.name))
    const byName = new Map(nodes.map(n => [n.name, n]))
    problems.push(`dependency cycle: ${findCycle(nodes.filter(n => !placed.has(n.name)), byName).join(' → ')}`)
  }
  return { order, problems }
}

/** One cycle among `rest` (nodes that Kahn's algorithm could not place), as a closed path. */
function findCycle<T extends Node> (rest: T[], byName: Map<string, T>): string[] {
  const left = new Set(rest.map(n => n.name))
  // Every unplaced node has an unplaced dependency; following those must revisit a node.
  const path: string[] = []
  const seenAt = new Map<string, number>()
  let current = rest[0]?.name
  while (current !== undefined && !seenAt.has(current)) {
    seenAt.set(current, path.length)
    path.push(current)
    current = byName.get(current)?.dependencies.find(d => left.has(d))
  }
  if (current === undefined) return path
  return [...path.slice(seenAt.get(current)), current]
}

/**
 * The names reachable from `from` (themselves included) by `next`: a step's dependencies, or its
 * dependants. Iterative, each name visited once: a chain of 2,000 steps recurses nowhere.
 */
export function reachable (from: Iterable<string>, next: (name: string) => readonly string[]): Set<string> {
  const seen = new Set<string>(from)
  const queue = [...seen]
  for (let i = 0; i < queue.length; i++) {
    for (const other of next(queue[i] as string)) {
      if (seen.has(other)) continue
      seen.add(other)
      queue.push(other)
    }
  }
  return seen
}
