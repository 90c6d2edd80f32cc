// A CronJobFlow's `spec.schedule`: the standard five-field cron expression that Kubernetes' CronJob
// takes (robfig/cron v3's ParseStandard), read by a parser of our own, so that a schedule means here
// what it means in a CronJob, without a dependency.
//
// Accepted as robfig accepts it: minute, hour, day-of-month, month (1-12 or JAN-DEC) and
// day-of-week (0-6 or SUN-SAT, names in any case; 7 is refused); per field `*`, `?`, `a`, `a-b`,
// `*/n`, `a-b/n`, `a/n` (from a to the field's end) and comma lists; the macros @yearly,
// @annually, @monthly, @weekly, @daily, @midnight and @hourly.
// Refused though robfig takes it: `@every` (no cron expression: its times hang on when the
// schedule was read), a `TZ=` or `CRON_TZ=` prefix (Kubernetes' own validation sends the zone to
// spec.timeZone), `*-5` (robfig reads it as `*`), an empty list item (`1,,2`), a signed number.
// Blanks around the whole expression are dropped (robfig refuses ` @daily`, a slip no one means).
// Every problem is one short sentence for the tenant's status.

/** Longer than any real schedule: a tenant's text is bounded before it is split. */
const MAX_LENGTH = 256

/** A parsed schedule: each field's allowed values, ascending, and whether the day fields were stars. */
export interface CronSchedule {
  /** The expression as written, less surrounding blanks. */
  readonly text: string
  readonly minutes: readonly number[]
  readonly hours: readonly number[]
  readonly daysOfMonth: readonly number[]
  readonly months: readonly number[]
  /** 0 is Sunday. */
  readonly daysOfWeek: readonly number[]
  /**
   * Day-of-month (and below, day-of-week) was a star: `*` or `?`, alone or with a step of 1 (robfig's
   * star bit). A day must then match both day fields; when neither is a star, either one.
   */
  readonly dayOfMonthStar: boolean
  readonly dayOfWeekStar: boolean
}

interface FieldSpec {
  readonly name: string
  readonly min: number
  readonly max: number
  /** Names for the values from `min` on, lower case. */
  readonly names?: readonly string[]
  /** Said after an out-of-range value. */
  readonly note?: string
}

const FIELDS: readonly FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  {
    name: 'month',
    min: 1,
    max: 12,
    names: ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']
  },
  {
    name: 'day-of-week',
    min: 0,
    max: 6,
    names: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'],
    note: ' (Sunday is 0, as in Kubernetes)'
  }
]

/** robfig's macros, as the expressions they stand for (the same sets, the same star fields). */
const MACROS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *'
}

/** One field read: its values, ascending, and whether it was a star. */
interface Field {
  values: number[]
  star: boolean
}

/** `spec.schedule` read into its sets, or the first problem with it. */
export function parseCron (text: string): { schedule: CronSchedule } | { problem: string } {
  if (text.length > MAX_LENGTH) {
    return { problem: `schedule is ${text.length} characters long; at most ${MAX_LENGTH} are allowed` }
  }
  const trimmed = text.trim()
  if (trimmed === '') return { problem: 'schedule is empty: write a cron expression such as "0 * * * *"' }
  const why = expressionProblem(trimmed)
  if (why !== undefined) return { problem: `schedule ${JSON.stringify(trimmed)}: ${why}` }
  const expression = Object.hasOwn(MACROS, trimmed) ? MACROS[trimmed] as string : trimmed
  const parts = expression.split(/\s+/)
  if (parts.length !== FIELDS.length) {
    return {
      problem: `schedule ${JSON.stringify(trimmed)}: expected 5 fields (minute hour day-of-month month ` +
        `day-of-week), found ${parts.length}`
    }
  }
  const fields: Field[] = []
  for (const [index, spec] of FIELDS.entries()) {
    const field = parseField(parts[index] as string, spec)
    if (typeof field === 'string') return { problem: `schedule ${JSON.stringify(trimmed)}: ${field}` }
    fields.push(field)
  }
  const [minute, hour, dayOfMonth, month, dayOfWeek] = fields as [Field, Field, Field, Field, Field]
  return {
    schedule: {
      text: trimmed,
      minutes: minute.values,
      hours: hour.values,
      daysOfMonth: dayOfMonth.values,
      months: month.values,
      daysOfWeek: dayOfWeek.values,
      dayOfMonthStar: dayOfMonth.star,
      dayOfWeekStar: dayOfWeek.star
    }
  }
}

/**
 * Whether a calendar day matches the day fields, as robfig decides: both must match when either was
 * a star, else one is enough (`0 0 1,15 * MON`: the 1st, the 15th and every Monday).
 */
export function dayMatches (schedule: CronSchedule, dayOfMonth: number, dayOfWeek: number): boolean {
  const domMatch = schedule.daysOfMonth.includes(dayOfMonth)
  const dowMatch = schedule.daysOfWeek.includes(dayOfWeek)
  return schedule.dayOfMonthStar || schedule.dayOfWeekStar ? domMatch && dowMatch : domMatch || dowMatch
}

/** What the whole expression asks for that is refused before its fields are read, if anything. */
function expressionProblem (text: string): string | undefined {
  if (/^(CRON_)?TZ=/.test(text)) {
    return 'a TZ= or CRON_TZ= prefix is not allowed; set spec.timeZone instead (as Kubernetes requires)'
  }
  if (!text.startsWith('@') || Object.hasOwn(MACROS, text)) return undefined
  if (/^@every(\s|$)/.test(text)) return '@every is not supported; use a cron expression such as "*/15 * * * *"'
  return `not a known macro (known: ${Object.keys(MACROS).join(', ')}; a macro stands alone)`
}

/** A field's values (a comma list), or the problem with it. */
function parseField (text: string, spec: FieldSpec): Field | string {
  const values = new Set<number>()
  let star = false
  for (const item of text.split(',')) {
    if (item === '') return `${spec.name} ${JSON.stringify(text)} has an empty list item`
    const range = parseRange(item, spec)
    if (typeof range === 'string') return range
    for (let value = range.start; value <= range.end; value += range.step) values.add(value)
    star ||= range.star
  }
  return { values: [...values].sort((a, b) => a - b), star }
}

interface Range {
  start: number
  end: number
  step: number
  star: boolean
}

/** One list item: `*`, `?`, `a` or `a-b`, each with an optional `/step`; or the problem with it. */
function parseRange (item: string, spec: FieldSpec): Range | string {
  const slashes = item.split('/')
  const bounds = (slashes[0] as string).split('-')
  // `*-5` too: robfig reads it as `*`, which is not what it says.
  if (slashes.length > 2 || bounds.length > 2 || (bounds.length === 2 && bounds.some(isStar))) {
    return `${spec.name} ${JSON.stringify(item)} is not a value, a range a-b or a step */n`
  }
  const step = slashes.length === 2 ? parseStep(slashes[1] as string, item, spec) : 1
  if (typeof step === 'string') return step
  if (isStar(bounds[0] as string)) {
    // robfig: a star with a step over 1 (`*/2`) is no star: its days are only some days.
    return { start: spec.min, end: spec.max, step, star: step === 1 }
  }
  const start = parseValue(bounds[0] as string, spec)
  if (typeof start === 'string') return start
  // `a/n` runs from a to the field's end.
  const end = bounds.length === 2 ? parseValue(bounds[1] as string, spec) : slashes.length === 2 ? spec.max : start
  if (typeof end === 'string') return end
  if (start > end) return `${spec.name} range ${JSON.stringify(item)} ends before it begins`
  return { start, end, step, star: false }
}

function isStar (text: string): boolean {
  return text === '*' || text === '?'
}

/** A step: a whole number of at least 1. */
function parseStep (text: string, item: string, spec: FieldSpec): number | string {
  if (!/^\d+$/.test(text)) return `${spec.name} step ${JSON.stringify(text)} in ${JSON.stringify(item)} is not a number`
  const step = Number(text)
  return step >= 1 ? step : `${spec.name} step in ${JSON.stringify(item)} must be at least 1`
}

/** A value in the field's range: digits, or a name where the field has names. */
function parseValue (text: string, spec: FieldSpec): number | string {
  const named = spec.names?.indexOf(text.toLowerCase()) ?? -1
  if (named >= 0) return spec.min + named
  if (!/^\d+$/.test(text)) {
    const names = spec.names === undefined
      ? ''
      : ` or a name (${spec.names[0]?.toUpperCase()}-${spec.names[spec.names.length - 1]?.toUpperCase()})`
    return `${spec.name} ${JSON.stringify(text)} is not a number${names}`
  }
  const value = Number(text)
  if (value < spec.min || value > spec.max) {
    return `${spec.name} ${text} is out of range ${spec.min}-${spec.max}${spec.note ?? ''}`
  }
  return value
}
