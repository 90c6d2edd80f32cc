// The time zone a CronJobFlow's schedule is read in (`spec.timeZone`, an IANA name, UTC when
// unset), through the runtime's own time zone data (`Intl.DateTimeFormat`): no dependency, and the
// same data the rest of Node uses.
//
// Why not the process's local zone as Kubernetes' default: the service runs in a container whose
// zone says nothing to a tenant, and a schedule must read the same on every replica. So no zone is
// UTC, and `Local` is refused as Kubernetes refuses it.
//
// The schedule arithmetic (cron-next.ts) works on wall times written as if they were UTC ("local
// milliseconds": the wall clock 2024-03-31 02:30 is Date.UTC(2024, 2, 31, 2, 30)); this module
// turns instants into wall clocks and wall times back into the 0, 1 or 2 instants they name.

const DAY = 86_400_000
/** Long enough for every IANA name (the longest has 32 characters), short enough to quote in a problem. */
const MAX_NAME_LENGTH = 64
/** The characters of IANA names; the first a letter, so no numeric offset such as `+0100` slips in. */
const NAME = /^[A-Za-z][A-Za-z0-9_+\-/]*$/

/** The wall clock of an instant in a zone, to the minute. `month` is 1-12; `dayOfWeek` 0 (Sunday) to 6. */
export interface WallClock {
  year: number
  month: number
  day: number
  hour: number
  minute: number
  dayOfWeek: number
}

/** An IANA time zone, read through one `Intl.DateTimeFormat` of its own. */
export interface TimeZone {
  /** The name as written (`UTC` when none was). */
  readonly name: string
  /** The wall clock at `ms` (epoch milliseconds). */
  wallClock: (ms: number) => WallClock
  /** The zone's offset from UTC at `ms`, in milliseconds (the wall clock minus UTC; New York in winter: -5 h). */
  offsetAt: (ms: number) => number
  /**
   * The instants, ascending, at which the wall clock reads `localMs` (a wall time as local
   * milliseconds): none in a spring-forward gap, two in a fall-back's repeated hour, else one.
   */
  instantsAt: (localMs: number) => number[]
}

/** `spec.timeZone` read: UTC when unset or empty, a problem when the runtime knows no such zone. */
export function timeZoneNamed (name: string | undefined): { zone: TimeZone } | { problem: string } {
  const zoneName = name === undefined || name === '' ? 'UTC' : name
  const problem = {
    problem: `spec.timeZone ${quoted(zoneName)} is not a known IANA time zone (such as "Europe/Berlin" or "UTC")`
  }
  // Kubernetes refuses `Local` too: the controller's own zone is no zone a tenant can know.
  if (zoneName.length > MAX_NAME_LENGTH || !NAME.test(zoneName) || zoneName.toLowerCase() === 'local') return problem
  try {
    return { zone: zoneOf(zoneName, formatterFor(zoneName)) }
  } catch (error) {
    if (error instanceof RangeError) return problem
    throw error
  }
}

/** The days since 1970-01-01 of a calendar date (no zone): plain calendar arithmetic. */
export function dayNumber (year: number, month: number, day: number): number {
  return Math.floor(utcMs(year, month, day, 0, 0, 0) / DAY)
}

/** The calendar date of a day number: year, month 1-12, day, and day of week 0 (Sunday) to 6. */
export function calendarDate (days: number): { year: number, month: number, day: number, dayOfWeek: number } {
  const date = new Date(days * DAY)
  return {
    year: date.getUTCFullYear(),
    month: date.getUTCMonth() + 1,
    day: date.getUTCDate(),
    dayOfWeek: date.getUTCDay()
  }
}

function formatterFor (zoneName: string): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat('en-US', {
    timeZone: zoneName,
    // h23: some runtimes write midnight as 24:00 under `hour12: false`.
    hourCycle: 'h23',
    numberingSystem: 'latn',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric'
  })
}

/** The zone behind one formatter: the formatter is made once, here, and never shared between zones. */
function zoneOf (name: string, formatter: Intl.DateTimeFormat): TimeZone {
  const offsetAt = (ms: number): number => {
    const [year, month, day, hour, minute, second] = fieldsAt(formatter, ms)
    // The formatter drops milliseconds: compare with the instant's own whole second.
    return utcMs(year, month, day, hour, minute, second) - Math.floor(ms / 1000) * 1000
  }
  return {
    name,
    wallClock: (ms: number): WallClock => {
      const [year, month, day, hour, minute] = fieldsAt(formatter, ms)
      return { year, month, day, hour, minute, dayOfWeek: calendarDate(dayNumber(year, month, day)).dayOfWeek }
    },
    offsetAt,
    instantsAt: (localMs: number): number[] => instantsOf(localMs, offsetAt)
  }
}

/**
 * The instants whose wall clock reads `localMs`. An instant t reads t + offset(t), so the candidates
 * are `localMs` less each offset in force around it: the one a day before and the one a day after
 * (time zones change their offset at most once in such a stretch). A candidate that does not read
 * `localMs` fell in a gap.
 */
function instantsOf (localMs: number, offsetAt: (ms: number) => number): number[] {
  const before = offsetAt(localMs - DAY)
  const after = offsetAt(localMs + DAY)
  const candidates = before === after ? [localMs - before] : [localMs - before, localMs - after]
  return candidates.filter(ms => ms + offsetAt(ms) === localMs).sort((a, b) => a - b)
}

/** Year, month, day, hour, minute and second. */
type Fields = [number, number, number, number, number, number]

/** The fields of `ms` in the formatter's zone. */
function fieldsAt (formatter: Intl.DateTimeFormat, ms: number): Fields {
  // `format` costs a third of `formatToParts`; its en-US shape is "3/11/2012, 01:00:00".
  const match = /^(\d+)\/(\d+)\/(\d+), (\d+):(\d+):(\d+)$/.exec(formatter.format(ms))
  if (match !== null) {
    const [month, day, year, hour, minute, second] = match.slice(1).map(Number)
    return [year, month, day, hour, minute, second] as Fields
  }
  // A runtime whose data writes the date otherwise: its parts, by name.
  const parts = Object.fromEntries(formatter.formatToParts(ms).map(part => [part.type, Number(part.value)]))
  return [parts.year, parts.month, parts.day, parts.hour, parts.minute, parts.second].map(Number) as Fields
}

/** Date.UTC without its quirk of reading years 0-99 as 1900-1999 (months past 12 run on into the next year). */
function utcMs (year: number, month: number, day: number, hour: number, minute: number, second: number): number {
  if (year >= 100 || year < 0) return Date.UTC(year, month - 1, day, hour, minute, second)
  const date = new Date(0)
  date.setUTCFullYear(year, month - 1, day)
  date.setUTCHours(hour, minute, second, 0)
  return date.getTime()
}

/** A name quoted for a problem, cut short when it is long. */
function quoted (text: string): string {
  return JSON.stringify(text.length > MAX_NAME_LENGTH ? `${text.slice(0, MAX_NAME_LENGTH)}…` : text)
}
