// Label selectors as the API server reads them: what makes one invalid (reported, never acted
// on), and whether one matches a set of labels.
import { isRecord } from './types.js'

export interface LabelSelectorRequirement {
  key: string
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'
  values?: string[]
}

export interface LabelSelector {
  matchLabels?: Record<string, string>
  matchExpressions?: LabelSelectorRequirement[]
}

const OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist']
// A qualified name with an optional DNS-subdomain prefix, and a label value (may be empty).
const LABEL_KEY =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/

/**
 * What is wrong with a selector. An empty selector would select every Pod of the namespace: it
 * is refused, so that a forgotten selector never injects into everything.
 */
export function selectorProblems (value: unknown, where: string): string[] {
  if (!isRecord(value)) return [`${where} must be a label selector (matchLabels and/or matchExpressions)`]
  const problems: string[] = []
  const { matchLabels, matchExpressions } = value
  let requirements = 0
  if (matchLabels !== undefined && matchLabels !== null) {
    if (!isRecord(matchLabels)) {
      problems.push(`${where}.matchLabels must map label keys to values`)
    } else {
      for (const [key, label] of Object.entries(matchLabels)) {
        requirements++
        if (!LABEL_KEY.test(key)) problems.push(`${where}.matchLabels: ${JSON.stringify(key)} is not a valid label key`)
        if (typeof label !== 'string' || !LABEL_VALUE.test(label)) {
          problems.push(`${where}.matchLabels: the value of ${JSON.stringify(key)} is not a valid label value`)
        }
      }
    }
  }
  if (matchExpressions !== undefined && matchExpressions !== null) {
    if (!Array.isArray(matchExpressions)) {
      problems.push(`${where}.matchExpressions must be a list`)
    } else {
      matchExpressions.forEach((raw, i) => {
        requirements++
        const at = `${where}.matchExpressions[${i}]`
        if (!isRecord(raw)) {
          problems.push(`${at} must be {key, operator, values}`)
          return
        }
        if (typeof raw.key !== 'string' || !LABEL_KEY.test(raw.key)) {
          problems.push(`${at}: ${JSON.stringify(raw.key)} is not a valid label key`)
        }
        if (typeof raw.operator !== 'string' || !OPERATORS.includes(raw.operator)) {
          problems.push(`${at}: operator ${JSON.stringify(raw.operator)} must be one of ${OPERATORS.join(', ')}`)
          return
        }
        const values = raw.values ?? []
        if (!Array.isArray(values) || !values.every(v => typeof v === 'string' && LABEL_VALUE.test(v))) {
          problems.push(`${at}: values must be a list of label values`)
        } else if ((raw.operator === 'In' || raw.operator === 'NotIn') && values.length === 0) {
          problems.push(`${at}: operator ${raw.operator} needs at least one value`)
        } else if ((raw.operator === 'Exists' || raw.operator === 'DoesNotExist') && values.length > 0) {
          problems.push(`${at}: operator ${raw.operator} takes no values`)
        }
      })
    }
  }
  if (problems.length === 0 && requirements === 0) {
    problems.push(`${where} is empty: it would select every Pod of the namespace; ` +
      'name the Pods with matchLabels or matchExpressions')
  }
  return problems
}

/** Whether `labels` satisfy a valid selector (check it with selectorProblems first). */
export function selectorMatches (selector: LabelSelector, labels: Record<string, string> | undefined): boolean {
  const have = labels ?? {}
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (have[key] !== value) return false
  }
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const present = Object.hasOwn(have, key)
    switch (operator) {
      case 'In': if (!present || !values.includes(have[key] as string)) return false; break
      case 'NotIn': if (present && values.includes(have[key] as string)) return false; break
      case 'Exists': if (!present) return false; break
      case 'DoesNotExist': if (present) return false; break
    }
  }
  return true
}

/** The selector with only the fields a related-resource rule carries, in a stable key order. */
export function plainSelector (selector: LabelSelector): LabelSelector {
  const plain: LabelSelector = {}
  if (selector.matchLabels !== undefined && selector.matchLabels !== null) plain.matchLabels = selector.matchLabels
  if (selector.matchExpressions !== undefined && selector.matchExpressions !== null) {
    plain.matchExpressions = selector.matchExpressions.map(e => ({
      key: e.key,
      operator: e.operator,
      ...(e.values !== undefined && e.values !== null ? { values: e.values } : {})
    }))
  }
  return plain
}

/**
 * A selector as `kubectl get -l` spells it: what CollaSet's scale subresource reports, and the
 * `labelSelector` of a list request.
 */
export function selectorString (selector: LabelSelector): string {
  const parts = Object.entries(selector.matchLabels ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
  for (const r of selector.matchExpressions ?? []) {
    const values = [...(r.values ?? [])].sort().join(',')
    if (r.operator === 'In') parts.push(`${r.key} in (${values})`)
    else if (r.operator === 'NotIn') parts.push(`${r.key} notin (${values})`)
    else if (r.operator === 'Exists') parts.push(r.key)
    else parts.push(`!${r.key}`)
  }
  return parts.join(',')
}
