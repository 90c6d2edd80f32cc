// The metric selectors of a PromQL expression, as far as the chart's rules and dashboard need:
// `name{label="value", ...}` and bare names, without the functions, aggregations, keywords,
// grouping labels, ranges, numbers and strings around them. Not a parser: what it does not
// understand it leaves, so a name it cannot place is still reported (and the test fails on it).

export interface Selector {
  metric: string
  matchers: Array<{ label: string, op: string, value: string }>
}

/** Words of PromQL that are not metric names where they are not followed by `(`. */
const KEYWORDS = new Set([
  'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'offset', 'and', 'or', 'unless',
  'sum', 'min', 'max', 'avg', 'group', 'stddev', 'stdvar', 'count', 'count_values', 'bottomk', 'topk',
  'quantile', 'limitk', 'limit_ratio', 'inf', 'nan'
])

const MATCHER = /^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"\s*$/

function matchers (body: string, expr: string): Selector['matchers'] {
  if (body.trim() === '') return []
  return body.split(',').filter(part => part.trim() !== '').map(part => {
    const match = MATCHER.exec(part)
    if (match === null) throw new Error(`cannot read the matcher ${JSON.stringify(part)} of ${expr}`)
    return { label: String(match[1]), op: String(match[2]), value: String(match[3]) }
  })
}

export function selectors (expr: string): Selector[] {
  // Grouping labels and ranges name no metric.
  const text = expr
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
  const found: Selector[] = []
  const token = /([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\}|\()?|"(?:[^"\\]|\\.)*"|\{[^}]*\}|[0-9.]+(?:e[+-]?[0-9]+)?/g
  for (const match of text.matchAll(token)) {
    const [, name, after] = match
    if (name === undefined) {
      if (match[0].startsWith('{')) throw new Error(`a selector without a metric name in ${expr}`)
      continue
    }
    if (after === '(') continue
    if (after === undefined && KEYWORDS.has(name.toLowerCase())) continue
    found.push({ metric: name, matchers: after === undefined ? [] : matchers(after.slice(1, -1), expr) })
  }
  return found
}

/** The values a matcher names, to match or to leave out: `a`, or each of `a|b` of a regular expression. */
export function namedValues (matcher: Selector['matchers'][number]): string[] {
  return matcher.op.includes('~') ? matcher.value.split('|') : [matcher.value]
}
