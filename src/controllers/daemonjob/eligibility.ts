// Which nodes a DaemonJob runs on: the checks the scheduler would make for its pod that do not
// depend on what else runs there (after OpenKruise BroadcastJob's fitness test): the exclude
// list, nodeName, nodeSelector, required node affinity, cordoning and NoSchedule/NoExecute taints.
import type { NodeSelectorRequirement, NodeSelectorTerm, PodSpec, Toleration } from 'kubernetes-types/core/v1.js'
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'

export const UNSCHEDULABLE_TAINT = 'node.kubernetes.io/unschedulable'
const LABEL_OPERATORS = new Set(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'])
const FIELD_OPERATORS = new Set(['In', 'NotIn'])
const INTEGER = /^-?\d+$/

interface Taint {
  key: string
  value?: string
  effect: string
}

/** The required node-selector terms of a pod, or undefined when it has no required affinity. */
export function requiredTerms (pod: PodSpec): NodeSelectorTerm[] | undefined {
  return pod.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms
}

/**
 * What in the pod's node constraints the API server would refuse (and so no node could ever
 * match): unknown operators, Gt/Lt without one integer, matchFields on anything but the name.
 */
export function affinityProblems (pod: PodSpec, at: string): string[] {
  const problems: string[] = []
  if (pod.nodeSelector !== undefined && !(isRecord(pod.nodeSelector) && Object.values(pod.nodeSelector).every(
    v => typeof v === 'string'
  ))) {
    problems.push(`${at}: nodeSelector must map label names to strings`)
  }
  const required = pod.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution
  if (required === undefined || required === null) return problems
  const terms: unknown = required.nodeSelectorTerms
  if (!Array.isArray(terms) || terms.length === 0) {
    return [...problems, `${at}: required node affinity needs at least one nodeSelectorTerm`]
  }
  terms.forEach((term: unknown, i) => {
    const where = `${at}: nodeSelectorTerms[${i}]`
    if (!isRecord(term)) {
      problems.push(`${where} must be an object`)
      return
    }
    for (const [list, operators] of [
      ['matchExpressions', LABEL_OPERATORS],
      ['matchFields', FIELD_OPERATORS]
    ] as const) {
      const requirements = term[list]
      if (requirements === undefined || requirements === null) continue
      if (!Array.isArray(requirements)) {
        problems.push(`${where}.${list} must be a list`)
        continue
      }
      requirements.forEach((r: unknown, j) => {
        const problem = requirementProblem(r, operators, list === 'matchFields')
        if (problem !== undefined) problems.push(`${where}.${list}[${j}]: ${problem}`)
      })
    }
  })
  return problems
}

function requirementProblem (r: unknown, operators: Set<string>, field: boolean): string | undefined {
  if (!isRecord(r) || typeof r.key !== 'string' || typeof r.operator !== 'string') return 'needs a key and an operator'
  if (field && r.key !== 'metadata.name') return `matchFields supports only metadata.name, not ${JSON.stringify(r.key)}`
  if (!operators.has(
    r.operator
  )) return `unknown operator ${JSON.stringify(r.operator)} (use ${[...operators].join(', ')})`
  const values = r.values ?? []
  if (!Array.isArray(values) || !values.every(v => typeof v === 'string')) return 'values must be a list of strings'
  if ((r.operator === 'Gt' || r.operator === 'Lt') && !(values.length === 1 && INTEGER.test(values[0] as string))) {
    return `${r.operator} needs exactly one integer value`
  }
  const listed = r.operator === 'In' || r.operator === 'NotIn'
  if (listed && values.length === 0) return `${r.operator} needs at least one value`
  const unlisted = r.operator === 'Exists' || r.operator === 'DoesNotExist'
  if (unlisted && values.length > 0) return `${r.operator} takes no values`
  return undefined
}

/**
 * Why `node` cannot run the DaemonJob's pod, or undefined when it can. `pod` is the pod spec as
 * the Job will carry it (globals applied), before it is pinned.
 */
export function ineligibility (node: KubeObject, pod: PodSpec, excluded: ReadonlySet<string>): string | undefined {
  return eligibilityCheck(pod, excluded)(node)
}

const NO_LABELS: Record<string, string> = Object.freeze({})
const NO_SPEC: Record<string, unknown> = Object.freeze({})
const UNSCHEDULABLE: Taint = Object.freeze({ key: UNSCHEDULABLE_TAINT, effect: 'NoSchedule' })

/**
 * `ineligibility` for many nodes and one pod, answer for answer: what depends on the pod alone is
 * read once, and a node costs no copies (a DaemonJob checks every Node of the cluster each sync).
 * Only the fields the checks need are read from a node: its name, labels, `spec.unschedulable`
 * and `spec.taints`.
 */
export function eligibilityCheck (
  pod: PodSpec,
  excluded: ReadonlySet<string>
): (node: KubeObject) => string | undefined {
  const nodeName = typeof pod.nodeName === 'string' && pod.nodeName !== '' ? pod.nodeName : undefined
  const selector = Object.entries(pod.nodeSelector ?? {})
  const terms = requiredTerms(pod)
  const tolerations = pod.tolerations ?? []
  // Whether the pod tolerates cordoning: asked on the first cordoned node, then remembered.
  let cordonTolerated: boolean | undefined
  return node => {
    const name = node.metadata.name
    const labels = node.metadata.labels ?? NO_LABELS
    if (excluded.has(name)) return 'excluded by excludeNodeList'
    if (nodeName !== undefined && nodeName !== name) return `the pod template names node ${nodeName}`
    for (let i = 0; i < selector.length; i++) {
      const entry = selector[i] as [string, string]
      const key = entry[0]
      const value = entry[1]
      if (labels[key] !== value) return `does not match nodeSelector ${key}=${value}`
    }
    if (terms !== undefined && !terms.some(
      term => matchesTerm(term, name, labels)
    )) return 'does not match the required node affinity'
    const spec = isRecord(node.spec) ? node.spec : NO_SPEC
    if (spec.unschedulable === true && !(cordonTolerated ??= tolerations.some(
      t => tolerates(t, UNSCHEDULABLE)
    ))) return 'cordoned (spec.unschedulable)'
    const taints = spec.taints
    if (!Array.isArray(taints)) return undefined
    for (const taint of taints) {
      if (!isTaint(taint) || (taint.effect !== 'NoSchedule' && taint.effect !== 'NoExecute')) continue
      if (tolerations.some(t => tolerates(t, taint))) continue
      const value = taint.value !== undefined && taint.value !== '' ? `=${taint.value}` : ''
      return `taint ${taint.key}${value}:${taint.effect} is not tolerated`
    }
    return undefined
  }
}

/** A term matches when all of its requirements do; a term with none matches no node. */
export function matchesTerm (term: NodeSelectorTerm, nodeName: string, labels: Record<string, string>): boolean {
  const expressions = term.matchExpressions ?? []
  const fields = term.matchFields ?? []
  if (expressions.length === 0 && fields.length === 0) return false
  return expressions.every(r => matchesRequirement(r, labels[r.key])) &&
    fields.every(r => r.key === 'metadata.name' && matchesRequirement(r, nodeName))
}

/** One requirement against the value the node has for its key (undefined: no such label). */
export function matchesRequirement (r: NodeSelectorRequirement, value: string | undefined): boolean {
  const values = r.values ?? []
  switch (r.operator) {
    case 'In': return value !== undefined && values.includes(value)
    case 'NotIn': return value === undefined || !values.includes(value)
    case 'Exists': return value !== undefined
    case 'DoesNotExist': return value === undefined
    case 'Gt':
    case 'Lt': {
      if (value === undefined || !INTEGER.test(value) || values.length !== 1 || !INTEGER.test(
        values[0] as string
      )) return false
      const have = BigInt(value)
      const bound = BigInt(values[0] as string)
      return r.operator === 'Gt' ? have > bound : have < bound
    }
    default: return false
  }
}

/**
 * The scheduler's toleration rule: the effect must match unless the toleration names none; the
 * key must match unless it is empty (with Exists: every taint); Equal compares values.
 */
export function tolerates (toleration: Toleration, taint: Taint): boolean {
  if (toleration.effect !== undefined && toleration.effect !== '' && toleration.effect !== taint.effect) return false
  if (toleration.key !== undefined && toleration.key !== '' && toleration.key !== taint.key) return false
  const operator = toleration.operator ?? 'Equal'
  if (operator === 'Exists') return true
  if (operator !== 'Equal') return false
  if (toleration.key === undefined || toleration.key === '') return false
  return (toleration.value ?? '') === (taint.value ?? '')
}

function isTaint (value: unknown): value is Taint {
  return isRecord(value) && typeof value.key === 'string' && typeof value.effect === 'string'
}
