// A hook call may pin the clock the hooks see: header `x-jobhooks-now` or query `?now=`, an
// RFC 3339 time. The answers to a fixture then stay what they were when it was made (a TTL of
// 30 minutes since January has long passed by now), so a curl in the README or docs/ gives their
// answer whatever the date. Only a service without cluster credentials honours it: one that
// applies effects must never be told what time it is by a caller.

export const NOW_HEADER = 'x-jobhooks-now'

/** RFC 3339, as Kubernetes writes times (fractions and offsets allowed). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

export type PinnedClock = { pinned: false } | { pinned: true, now: Date } | { pinned: true, problem: string }

/**
 * The time a call pins, if any. `header` is the `x-jobhooks-now` header's value, `query` the
 * `now` query parameter's; `allowed` whether this service honours them (it has no credentials).
 */
export function pinnedClock (
  header: string | string[] | undefined, query: string | undefined, allowed: boolean
): PinnedClock {
  const given = (Array.isArray(header) ? header[0] : header) ?? query
  if (given === undefined) return { pinned: false }
  if (!allowed) {
    return {
      pinned: true,
      problem: `${NOW_HEADER} (or ?now=) pins the clock only on a service without cluster credentials ` +
        '(local runs, tests); this one applies effects to a cluster'
    }
  }
  const ms = RFC3339.test(given) ? Date.parse(given) : NaN
  if (Number.isNaN(ms)) {
    const problem = `${NOW_HEADER} (or ?now=) must be an RFC 3339 time such as 2026-01-02T03:04:05Z, ` +
      `not ${JSON.stringify(given)}`
    return { pinned: true, problem }
  }
  return { pinned: true, now: new Date(ms) }
}
