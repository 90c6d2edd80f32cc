// When a CronJobFlow's schedule next fires: the first whole minute after an instant whose wall clock,
// in the flow's time zone, matches the schedule. The same answer as robfig/cron's SpecSchedule.Next,
// which Kubernetes' CronJob asks: a wall time that a spring-forward skips does not fire that day,
// and one in a fall-back's repeated hour fires at both of its instants; nothing within five years
// (robfig's limit: `0 0 30 2 *`) is no time at all.
//
// Why not step minute by minute as a reader of the definition would: a tenant's `0 0 29 2 *` can be
// millions of minutes away, and the hook must answer in milliseconds. So days are walked on the
// calendar alone, without the zone; only a matching day asks the zone (two offsets: does the day
// hold a change?), and only its matching hours and minutes become instants. A day without a change
// (nearly all) turns each wall time into its one instant by subtraction.
//
// Where robfig strays from that definition, this does not: on a day whose midnight a change skips
// (Beirut, Havana, Asuncion, Tehran) robfig can land on a day that does not match or skip months,
// and after a change that is no whole hour (Lord Howe's half hour, Chatham at 02:45) it misses the
// first matching minutes; around the day Samoa skipped in 2011 it never returns. A tenant there
// gets the times the schedule says.
import { dayMatches, type CronSchedule } from './cron.js'
import { calendarDate, dayNumber, type TimeZone } from './time-zone.js'

const MINUTE = 60_000
const HOUR = 3_600_000
const DAY = 86_400_000
/** robfig gives up past the fifth year after the one it starts in. */
const YEARS_AHEAD = 5
/**
 * The instants with a next time: from the year 1 to some 250,000 years on, inside the range a Date
 * can hold (8.64e15 ms) with years to spare, so that no search runs past it.
 */
const FIRST_MS = -62_135_596_800_000
const LAST_MS = 8e15
/** More days than the search can visit: the day before, and up to six years of days. */
const MAX_STEPS = (YEARS_AHEAD + 2) * 366

/** The search for the earliest matching instant after `afterMs`. */
interface Search {
  schedule: CronSchedule
  zone: TimeZone
  afterMs: number
  /** The earliest matching instant found so far. */
  best?: number
}

/**
 * The first instant (a whole minute, epoch milliseconds) strictly after `afterMs` whose wall clock
 * in `zone` matches `schedule`; undefined when none falls within five years (or `afterMs` is no
 * instant of the years 1 to 250,000).
 */
export function nextTime (schedule: CronSchedule, zone: TimeZone, afterMs: number): number | undefined {
  if (!(afterMs >= FIRST_MS && afterMs <= LAST_MS)) return undefined
  const start = zone.wallClock(afterMs)
  const lastYear = start.year + YEARS_AHEAD
  const search: Search = { schedule, zone, afterMs }
  // From the day before: after a fall-back, wall times of the day before can still lie ahead.
  let days = dayNumber(start.year, start.month, start.day) - 1
  // Bounded twice over: by the last year, and by the steps (a day, or a month skipped) six years hold.
  for (let step = 0; step < MAX_STEPS; step++) {
    if (search.best !== undefined && days * DAY - DAY >= search.best) break
    const date = calendarDate(days)
    if (date.year > lastYear) break
    if (!schedule.months.includes(date.month)) {
      days = Math.max(days + 1, dayNumber(date.year, date.month + 1, 1))
      continue
    }
    if (dayMatches(schedule, date.day, date.dayOfWeek)) searchDay(search, days * DAY)
    days++
  }
  return search.best
}

/**
 * The matching wall times of one day (`dayLocal`: its midnight in local milliseconds) turned into
 * instants, keeping the earliest after `afterMs`. Every instant of the day lies within a day of its
 * midnight, so the offsets a day before and two days after tell whether the day holds a change.
 */
function searchDay (search: Search, dayLocal: number): void {
  const { schedule, zone, afterMs } = search
  const before = zone.offsetAt(dayLocal - DAY)
  const after = zone.offsetAt(dayLocal + 2 * DAY)
  const uniform = before === after
  // A wall time w has its instants at w - offset: none after afterMs when w <= afterMs + each offset,
  // and none before the best so far when w - each offset >= best.
  const lowest = afterMs + Math.min(before, after)
  const highest = Math.max(before, after)
  for (const hour of schedule.hours) {
    const hourLocal = dayLocal + hour * HOUR
    if (hourLocal + 59 * MINUTE <= lowest) continue
    for (const minute of schedule.minutes) {
      const wall = hourLocal + minute * MINUTE
      if (wall <= lowest) continue
      if (search.best !== undefined && wall - highest >= search.best) return
      for (const instant of uniform ? [wall - before] : zone.instantsAt(wall)) {
        if (instant > afterMs && (search.best === undefined || instant < search.best)) search.best = instant
      }
      // Without a change, later wall times are later instants.
      if (uniform) return
    }
  }
}
