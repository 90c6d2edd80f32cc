// A CronJobFlow's schedule: the five-field cron expression read as robfig/cron's ParseStandard
// reads it for Kubernetes' CronJob (every field syntax, names, macros, every refusal), and nextTime,
// the first matching instant after another, across daylight-saving changes as robfig's
// SpecSchedule.Next finds it (its own New York cases), against a minute-by-minute scan of the
// definition, and within its time budget.
import t from 'tap'
import fc from 'fast-check'
import { dayMatches, parseCron, type CronSchedule } from '../../../src/controllers/common/cron.js'
import { nextTime } from '../../../src/controllers/common/cron-next.js'
import { timeZoneNamed, type TimeZone, type WallClock } from '../../../src/controllers/common/time-zone.js'
import { fuzzSettings } from '../../helpers/fuzz.js'

function schedule (text: string): CronSchedule {
  const parsed = parseCron(text)
  if ('problem' in parsed) throw new Error(parsed.problem)
  return parsed.schedule
}

function problemOf (text: string): string {
  const parsed = parseCron(text)
  return 'problem' in parsed ? parsed.problem : 'no problem'
}

function zone (name?: string): TimeZone {
  const named = timeZoneNamed(name)
  if ('problem' in named) throw new Error(named.problem)
  return named.zone
}

/** An instant written with its offset, as the ISO string (UTC) the assertions compare. */
function iso (text: string): string {
  return new Date(Date.parse(text)).toISOString()
}

/** nextTime of `text` in `zoneName` after the instant `after`, as an ISO string (or 'none'). */
function next (text: string, zoneName: string | undefined, after: string): string {
  const ms = nextTime(schedule(text), zone(zoneName), Date.parse(after))
  return ms === undefined ? 'none' : new Date(ms).toISOString()
}

/** The first `count` times after `after`, in UTC. */
function times (text: string, after: string, count: number): string[] {
  const found: string[] = []
  let ms = Date.parse(after)
  for (let i = 0; i < count; i++) {
    const at = nextTime(schedule(text), zone(), ms)
    if (at === undefined) break
    found.push(new Date(at).toISOString())
    ms = at
  }
  return found
}

t.test('each field syntax: *, ?, a, a-b, */n, a-b/n, a/n and lists', async t => {
  const s = schedule('*/15 0-6/2 1,15,31 ? 5/1')
  t.same(s.minutes, [0, 15, 30, 45])
  t.same(s.hours, [0, 2, 4, 6])
  t.same(s.daysOfMonth, [1, 15, 31])
  t.same(s.months, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], '? is every month')
  t.same(s.daysOfWeek, [5, 6], 'a/n runs from a to the end of the field')
  t.same(schedule('5/20 * * * *').minutes, [5, 25, 45])
  t.same(schedule('59,0,30,0 * * * *').minutes, [0, 30, 59], 'a list, sorted, without repeats')
  t.same(schedule('0 9-17 * * *').hours, [9, 10, 11, 12, 13, 14, 15, 16, 17])
  t.same(schedule('0 0 */10 * *').daysOfMonth, [1, 11, 21, 31])
  t.same(schedule('0 0 1 */4 *').months, [1, 5, 9])
  t.same(schedule('0 0 1 1 0-6/3').daysOfWeek, [0, 3, 6])
  t.same(schedule('00 07 * * *').hours, [7], 'leading zeros')
  t.equal(schedule('  0 0 * * *\t').text, '0 0 * * *', 'blanks around the expression go')
  t.same(schedule('0\t0  *   * *').hours, [0], 'fields split on any blanks')
})

t.test('stars: * and ? (with a step of 1 at most) make a day field a star; */2 does not', async t => {
  const star = (text: string): boolean[] => {
    const s = schedule(text)
    return [s.dayOfMonthStar, s.dayOfWeekStar]
  }
  t.same(star('0 0 * * *'), [true, true])
  t.same(star('0 0 ? * ?'), [true, true])
  t.same(star('0 0 */1 * *'), [true, true])
  t.same(star('0 0 */2 * MON'), [false, false])
  t.same(star('0 0 1-31 * 0-6'), [false, false], 'every value, but not written as a star')
  t.same(star('0 0 *,5 * 1'), [true, false], 'a star anywhere in the list')
})

t.test('names: months and days of the week, in any case, in ranges and steps', async t => {
  t.same(schedule('0 0 1 JAN-MAR *').months, [1, 2, 3])
  t.same(schedule('0 0 1 jan,Jul,DEC *').months, [1, 7, 12])
  t.same(schedule('0 0 1 FEB/5 *').months, [2, 7, 12])
  t.same(schedule('0 0 * * MON-FRI').daysOfWeek, [1, 2, 3, 4, 5])
  t.same(schedule('0 0 * * sun,Sat').daysOfWeek, [0, 6])
})

t.test('macros: the sets robfig gives them, the text kept', async t => {
  const sets = (text: string): unknown => {
    const s = schedule(text)
    return [s.text, s.minutes, s.hours, s.daysOfMonth, s.months.length, s.daysOfWeek, s.dayOfMonthStar, s.dayOfWeekStar]
  }
  const all7 = [0, 1, 2, 3, 4, 5, 6]
  const all24 = Array.from({ length: 24 }, (_, i) => i)
  const all31 = Array.from({ length: 31 }, (_, i) => i + 1)
  t.same(sets('@yearly'), ['@yearly', [0], [0], [1], 1, all7, false, true])
  t.same(sets('@annually'), ['@annually', [0], [0], [1], 1, all7, false, true])
  t.same(sets('@monthly'), ['@monthly', [0], [0], [1], 12, all7, false, true])
  t.same(sets('@weekly'), ['@weekly', [0], [0], all31, 12, [0], true, false])
  t.same(sets('@daily'), ['@daily', [0], [0], all31, 12, all7, true, true])
  t.same(sets('@midnight'), ['@midnight', [0], [0], all31, 12, all7, true, true])
  t.same(sets('@hourly'), ['@hourly', [0], all24, all31, 12, all7, true, true])
  t.same(times('@weekly', '2024-01-01T00:00:00Z', 2), ['2024-01-07T00:00:00.000Z', '2024-01-14T00:00:00.000Z'],
    'Sundays at midnight')
  t.same(times('@yearly', '2024-06-01T00:00:00Z', 1), ['2025-01-01T00:00:00.000Z'])
})

t.test('every refusal says what is wrong in a sentence', async t => {
  t.equal(problemOf('61 * * * *'), 'schedule "61 * * * *": minute 61 is out of range 0-59')
  t.equal(problemOf('0 24 * * *'), 'schedule "0 24 * * *": hour 24 is out of range 0-23')
  t.equal(problemOf('0 0 0 * *'), 'schedule "0 0 0 * *": day-of-month 0 is out of range 1-31')
  t.equal(problemOf('0 0 32 * *'), 'schedule "0 0 32 * *": day-of-month 32 is out of range 1-31')
  t.equal(problemOf('0 0 1 13 *'), 'schedule "0 0 1 13 *": month 13 is out of range 1-12')
  t.equal(problemOf('0 0 * * 7'), 'schedule "0 0 * * 7": day-of-week 7 is out of range 0-6 (Sunday is 0, ' +
    'as in Kubernetes)')
  t.equal(problemOf('0 0 * * 1-7'), 'schedule "0 0 * * 1-7": day-of-week 7 is out of range 0-6 (Sunday is 0, ' +
    'as in Kubernetes)')
  t.equal(problemOf('*/0 * * * *'), 'schedule "*/0 * * * *": minute step in "*/0" must be at least 1')
  t.equal(problemOf('0 1-5/0 * * *'), 'schedule "0 1-5/0 * * *": hour step in "1-5/0" must be at least 1')
  t.equal(problemOf('*/x * * * *'), 'schedule "*/x * * * *": minute step "x" in "*/x" is not a number')
  t.equal(problemOf('0 0 20-10 * *'), 'schedule "0 0 20-10 * *": day-of-month range "20-10" ends before it begins')
  t.equal(problemOf('0 0 * FOO *'), 'schedule "0 0 * FOO *": month "FOO" is not a number or a name (JAN-DEC)')
  t.equal(problemOf('0 0 * MON *'), 'schedule "0 0 * MON *": month "MON" is not a number or a name (JAN-DEC)')
  t.equal(problemOf('0 0 * * JAN'), 'schedule "0 0 * * JAN": day-of-week "JAN" is not a number or a name (SUN-SAT)')
  t.equal(problemOf('+5 * * * *'), 'schedule "+5 * * * *": minute "+5" is not a number')
  t.equal(problemOf('1,,2 * * * *'), 'schedule "1,,2 * * * *": minute "1,,2" has an empty list item')
  t.equal(problemOf('*-5 * * * *'), 'schedule "*-5 * * * *": minute "*-5" is not a value, a range a-b or a step */n')
  t.equal(problemOf('1-2-3 * * * *'), 'schedule "1-2-3 * * * *": minute "1-2-3" is not a value, a range a-b or a ' +
    'step */n')
  t.equal(problemOf('1/2/3 * * * *'), 'schedule "1/2/3 * * * *": minute "1/2/3" is not a value, a range a-b or a ' +
    'step */n')
})

t.test('refused: wrong field counts, @every, a TZ prefix, unknown macros, empty and overlong text', async t => {
  t.equal(problemOf('* * * *'), 'schedule "* * * *": expected 5 fields (minute hour day-of-month month ' +
    'day-of-week), found 4')
  t.equal(problemOf('0 * * * * *'), 'schedule "0 * * * * *": expected 5 fields (minute hour day-of-month month ' +
    'day-of-week), found 6', 'no seconds field')
  t.equal(problemOf('@every 1h'), 'schedule "@every 1h": @every is not supported; use a cron expression such as ' +
    '"*/15 * * * *"')
  t.equal(problemOf('TZ=Europe/Berlin 0 * * * *'), 'schedule "TZ=Europe/Berlin 0 * * * *": a TZ= or CRON_TZ= ' +
    'prefix is not allowed; set spec.timeZone instead (as Kubernetes requires)')
  t.match(problemOf('CRON_TZ=UTC 0 * * * *'), /set spec\.timeZone instead/)
  t.match(problemOf('@reboot'), /^schedule "@reboot": not a known macro \(known: @yearly, @annually, @monthly, /)
  t.match(problemOf('@Daily'), /not a known macro/, 'macros are written in lower case, as robfig reads them')
  t.match(problemOf('@daily 5'), /not a known macro .*a macro stands alone/)
  t.equal(problemOf(''), 'schedule is empty: write a cron expression such as "0 * * * *"')
  t.equal(problemOf('   '), 'schedule is empty: write a cron expression such as "0 * * * *"')
  t.equal(problemOf(`0 0 * * ${'1,'.repeat(130)}1`), 'schedule is 269 characters long; at most 256 are allowed')
  t.equal(problemOf('__proto__'), 'schedule "__proto__": expected 5 fields (minute hour day-of-month month ' +
    'day-of-week), found 1')
  t.equal(problemOf('0 "x" * * *'), 'schedule "0 \\"x\\" * * *": hour "\\"x\\"" is not a number', 'quotes escaped')
})

t.test('day fields: both must match when either is a star, else either one', async t => {
  const monday = 1
  const friday = 5
  t.ok(dayMatches(schedule('0 0 1,15 * MON'), 15, friday), 'the 15th, a Friday: the day of the month is enough')
  t.ok(dayMatches(schedule('0 0 1,15 * MON'), 8, monday), 'the 8th, a Monday: the day of the week is enough')
  t.notOk(dayMatches(schedule('0 0 1,15 * MON'), 9, friday))
  t.notOk(dayMatches(schedule('0 0 * * MON'), 15, friday), 'a star day-of-month: the Monday must match')
  t.notOk(dayMatches(schedule('0 0 1,15 * *'), 8, monday), 'a star day-of-week: the date must match')
  t.ok(dayMatches(schedule('0 0 */2 * SUN'), 15, 0), '*/2 is no star (robfig #70): either one')
  t.ok(dayMatches(schedule('0 0 */2 * SUN'), 8, 0), 'the 8th, not in */2, but a Sunday')
  t.same(times('0 0 1,15 * MON', '2024-07-01T00:00:00Z', 5), [
    '2024-07-08T00:00:00.000Z', '2024-07-15T00:00:00.000Z', '2024-07-22T00:00:00.000Z',
    '2024-07-29T00:00:00.000Z', '2024-08-01T00:00:00.000Z'
  ])
  t.same(times('0 0 13 * FRI', '2024-09-01T00:00:00Z', 3), [
    '2024-09-06T00:00:00.000Z', '2024-09-13T00:00:00.000Z', '2024-09-20T00:00:00.000Z'
  ], 'the 13th or a Friday, not Friday the 13th')
  t.same(times('0 0 ? * FRI', '2024-09-01T00:00:00Z', 2), ['2024-09-06T00:00:00.000Z', '2024-09-13T00:00:00.000Z'])
})

t.test('nextTime: strictly after, to the minute, in UTC when no zone is named', async t => {
  t.equal(next('0 * * * *', undefined, '2024-05-01T10:00:00Z'), '2024-05-01T11:00:00.000Z', 'not the instant itself')
  t.equal(next('* * * * *', undefined, '2024-05-01T10:00:30.500Z'), '2024-05-01T10:01:00.000Z')
  t.equal(next('30 2 * * *', '', '2024-05-01T10:00:00Z'), '2024-05-02T02:30:00.000Z', "'' is UTC too")
  t.equal(next('59 23 31 12 *', undefined, '2024-12-31T23:59:00Z'), '2025-12-31T23:59:00.000Z')
  t.equal(next('0 0 * * *', undefined, '2024-02-28T12:00:00Z'), '2024-02-29T00:00:00.000Z')
  t.equal(next('15 10 * * *', 'Asia/Kolkata', '2024-05-01T00:00:00Z'), iso('2024-05-01T10:15:00+05:30'))
  t.equal(next('0 0 1 1 *', undefined, '0001-06-01T00:00:00Z'), '0002-01-01T00:00:00.000Z', 'the year 1')
  t.equal(nextTime(schedule('* * * * *'), zone(), Number.NaN), undefined, 'no instant')
  t.equal(nextTime(schedule('* * * * *'), zone(), 8.64e15), undefined, 'the last instant a Date holds')
})

t.test('nextTime: no time within five years is none; a leap day waits for its year', async t => {
  t.equal(next('0 0 30 2 *', undefined, '2024-01-01T00:00:00Z'), 'none')
  t.equal(next('0 0 31 4,6,9,11 *', undefined, '2024-01-01T00:00:00Z'), 'none')
  t.equal(next('0 0 29 2 *', undefined, '2025-03-01T00:00:00Z'), '2028-02-29T00:00:00.000Z')
  t.equal(next('0 0 29 2 *', undefined, '2028-02-29T00:00:00Z'), '2032-02-29T00:00:00.000Z')
  t.equal(next('0 0 29 2 *', undefined, '2096-03-01T00:00:00Z'), 'none', '2100 is no leap year; 2104 is too far')
  t.equal(next('0 0 29 2 1', undefined, '2025-03-01T00:00:00Z'), '2026-02-02T00:00:00.000Z',
    'a Monday in February will do as well as the 29th')
})

t.test("nextTime across New York's daylight-saving changes: robfig's own cases", async t => {
  const ny = 'America/New_York'
  t.equal(next('0 * * * *', ny, '2012-03-11T01:00:00-05:00'), iso('2012-03-11T03:00:00-04:00'), '2:00 does not exist')
  t.equal(next('0 * * * *', ny, '2012-11-04T01:00:00-04:00'), iso('2012-11-04T01:00:00-05:00'), '1:00 comes twice')
  t.equal(next('0 * * * *', ny, '2012-11-04T01:00:00-05:00'), iso('2012-11-04T02:00:00-05:00'))
  t.equal(next('30 2 11 3 *', ny, '2012-03-11T00:00:00-05:00'), iso('2013-03-11T02:30:00-04:00'),
    'the only 2:30 of the year is skipped')
  t.equal(next('30 1 4 11 *', ny, '2012-11-04T01:45:00-04:00'), iso('2012-11-04T01:30:00-05:00'),
    'the second 1:30 comes after the first 1:45')
  t.equal(next('30,50 1 4 11 *', ny, '2012-11-04T01:45:00-04:00'), iso('2012-11-04T01:50:00-04:00'),
    'the first 1:50 comes before the second 1:30')
  t.equal(next('0 2 * * *', ny, '2012-03-11T00:00:00-05:00'), iso('2012-03-12T02:00:00-04:00'), 'skipped that day')
  t.equal(next('0 1 * * *', ny, '2012-11-04T01:00:00-04:00'), iso('2012-11-04T01:00:00-05:00'), 'runs twice')
  t.equal(next('0 1 * * *', ny, '2012-11-04T01:00:00-05:00'), iso('2012-11-05T01:00:00-05:00'))
  t.equal(next('0 3 * * *', ny, '2012-11-04T00:00:00-04:00'), iso('2012-11-04T03:00:00-05:00'))
  t.equal(next('0 3 3 * *', ny, '2012-11-04T00:00:00-04:00'), iso('2012-12-03T03:00:00-05:00'))
  t.equal(next('0 9 10 * *', 'America/Sao_Paulo', '2018-10-17T05:00:00-04:00'), iso('2018-11-10T06:00:00-05:00'),
    'a day whose midnight does not exist (robfig #157)')
})

t.test("nextTime across Berlin's changes: a daily 02:30 and an hourly schedule", async t => {
  const berlin = 'Europe/Berlin'
  // 2024-03-31: 02:00 CET becomes 03:00 CEST. 2024-10-27: 03:00 CEST becomes 02:00 CET.
  t.equal(next('30 2 * * *', berlin, '2024-03-30T02:30:00+01:00'), iso('2024-04-01T02:30:00+02:00'),
    'spring: no 02:30 on the 31st')
  t.equal(next('30 2 * * *', berlin, '2024-10-26T02:30:00+02:00'), iso('2024-10-27T02:30:00+02:00'))
  t.equal(next('30 2 * * *', berlin, '2024-10-27T02:30:00+02:00'), iso('2024-10-27T02:30:00+01:00'),
    'fall: 02:30 comes twice')
  t.equal(next('30 2 * * *', berlin, '2024-10-27T02:30:00+01:00'), iso('2024-10-28T02:30:00+01:00'))
  t.equal(next('0 * * * *', berlin, '2024-03-31T01:00:00+01:00'), iso('2024-03-31T03:00:00+02:00'))
  t.equal(next('0 * * * *', berlin, '2024-10-27T02:00:00+02:00'), iso('2024-10-27T02:00:00+01:00'))
  t.equal(next('0 * * * *', berlin, '2024-10-27T02:00:00+01:00'), iso('2024-10-27T03:00:00+01:00'))
  t.equal(next('*/20 * * * *', berlin, '2024-10-27T02:50:00+02:00'), iso('2024-10-27T02:00:00+01:00'),
    'every 20 minutes: on through the repeated hour')
})

t.test('nextTime stays well under 5 ms a call, however far the next time is', async t => {
  const utc = zone()
  const berlin = zone('Europe/Berlin')
  for (const [text, z] of [['0 0 29 2 *', utc], ['* * * * *', utc], ['0 0 30 2 *', berlin], ['0 0 29 2 *', berlin],
    ['59 23 31 12 SUN', berlin], ['* * * * *', berlin]] as const) {
    const s = schedule(text)
    const after = Date.parse('2025-03-01T00:00:00Z')
    nextTime(s, z, after)
    const started = performance.now()
    for (let i = 0; i < 20; i++) nextTime(s, z, after + i * 3_600_000)
    const each = (performance.now() - started) / 20
    t.ok(each < 5, `${text} in ${z.name}: ${each.toFixed(3)} ms a call`)
  }
})

/** The definition, read minute by minute: does the wall clock match the schedule? (Not the code's own.) */
function matches (s: CronSchedule, wall: WallClock): boolean {
  const dom = s.daysOfMonth.includes(wall.day)
  const dow = s.daysOfWeek.includes(wall.dayOfWeek)
  const day = s.dayOfMonthStar || s.dayOfWeekStar ? dom && dow : dom || dow
  return day && s.months.includes(wall.month) && s.hours.includes(wall.hour) && s.minutes.includes(wall.minute)
}

const ZONES = ['UTC', 'America/New_York', 'Europe/Berlin', 'America/Sao_Paulo', 'Australia/Lord_Howe',
  'Pacific/Chatham', 'Asia/Beirut', 'Asia/Kolkata']
/** Instants near daylight-saving changes of those zones (and some plain ones). */
const NEAR = ['2012-03-11T07:00:00Z', '2012-11-04T06:00:00Z', '2024-03-31T01:00:00Z', '2024-10-27T01:00:00Z',
  '2018-11-04T03:00:00Z', '2023-09-30T15:00:00Z', '2024-04-06T14:00:00Z', '2024-09-28T14:45:00Z',
  '2024-03-30T22:00:00Z', '2024-10-26T21:00:00Z', '2024-07-01T12:00:00Z'].map(Date.parse)
const SCAN_MINUTES = 3 * 24 * 60

const fieldText = (min: number, max: number): fc.Arbitrary<string> => fc.oneof(
  fc.constant('*'),
  fc.integer({ min, max }).map(String),
  fc.tuple(fc.integer({ min, max }), fc.integer({ min: 1, max: 7 })).map(([a, n]) => `${a}/${n}`),
  fc.tuple(fc.integer({ min, max }), fc.integer({ min, max })).map(([a, b]) => `${Math.min(a, b)}-${Math.max(a, b)}`),
  fc.array(fc.integer({ min, max }), { minLength: 2, maxLength: 4 }).map(list => list.join(','))
)
const scheduleText = fc.tuple(
  fc.oneof(fc.constantFrom('*', '0', '30', '*/15', '0,30', '59'), fieldText(0, 59)),
  fc.oneof(fc.constantFrom('*', '1', '2', '3', '0-3', '*/2'), fieldText(0, 23)),
  fc.oneof(fc.constant('*'), fieldText(1, 31)),
  fc.constant('*'),
  fc.oneof(fc.constant('*'), fieldText(0, 6))
).map(fields => fields.join(' '))

t.test('nextTime is the first minute-by-minute match, near daylight-saving changes in many zones', async t => {
  const property = fc.property(
    scheduleText, fc.constantFrom(...ZONES), fc.constantFrom(...NEAR), fc.integer({ min: -2880, max: 2880 }),
    fc.integer({ min: 0, max: 59_999 }),
    (text, zoneName, near, minutes, ms) => {
      const s = schedule(text)
      const z = zone(zoneName)
      const after = near + minutes * 60_000 + ms
      const found = nextTime(s, z, after)
      const first = Math.floor(after / 60_000) * 60_000 + 60_000
      for (let i = 0; i < SCAN_MINUTES; i++) {
        const at = first + i * 60_000
        if (matches(s, z.wallClock(at))) {
          if (found === at) return
          throw new Error(`${text} in ${zoneName} after ${new Date(after).toISOString()}: ` +
            `${found === undefined ? 'none' : new Date(found).toISOString()}, not ${new Date(at).toISOString()}`)
        }
      }
      if (found !== undefined && found < first + SCAN_MINUTES * 60_000) {
        throw new Error(`${text} in ${zoneName}: ${new Date(found).toISOString()} matches nothing`)
      }
    }
  )
  await t.resolves(async () => fc.assert(property, fuzzSettings(120)))
})
