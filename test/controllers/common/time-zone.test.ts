// spec.timeZone: IANA names through Intl (UTC when unset; `Local`, unknown names and odd characters
// refused), each zone's wall clock and offsets, and the 0, 1 or 2 instants a wall time names
// across daylight-saving changes.
import t from 'tap'
import { calendarDate, dayNumber, timeZoneNamed, type TimeZone } from '../../../src/controllers/common/time-zone.js'

const HOUR = 3_600_000

function zone (name?: string): TimeZone {
  const named = timeZoneNamed(name)
  if ('problem' in named) throw new Error(named.problem)
  return named.zone
}

function problemOf (name: string): string {
  const named = timeZoneNamed(name)
  return 'problem' in named ? named.problem : 'no problem'
}

/** A wall time as local milliseconds. */
const local = (text: string): number => Date.parse(`${text}Z`)
const isoAll = (instants: number[]): string[] => instants.map(ms => new Date(ms).toISOString())

t.test('no zone, or an empty one, is UTC', async t => {
  t.equal(zone().name, 'UTC')
  t.equal(zone('').name, 'UTC')
  t.same(zone().wallClock(Date.parse('2024-06-30T23:59:59Z')),
    { year: 2024, month: 6, day: 30, hour: 23, minute: 59, dayOfWeek: 0 })
  t.equal(zone().offsetAt(Date.parse('2024-06-30T12:00:00Z')), 0)
})

t.test('IANA names are known zones; the name is kept as written', async t => {
  for (const name of ['Europe/Berlin', 'America/New_York', 'America/Argentina/Buenos_Aires', 'Etc/GMT+5', 'UTC',
    'America/Port-au-Prince', 'Asia/Kolkata']) {
    t.equal(zone(name).name, name, name)
  }
  t.equal(zone('Etc/GMT+5').offsetAt(0), -5 * HOUR, 'Etc/GMT+5 is five hours behind UTC (POSIX signs)')
})

t.test('unknown names, Local and odd characters are refused', async t => {
  t.equal(problemOf('Mars/Base'), 'spec.timeZone "Mars/Base" is not a known IANA time zone (such as ' +
    '"Europe/Berlin" or "UTC")')
  t.match(problemOf('Local'), /^spec\.timeZone "Local" is not a known IANA time zone/, 'the controller\'s own zone')
  t.match(problemOf('local'), /"local" is not a known IANA time zone/)
  t.match(problemOf('Europe/Berlin '), /"Europe\/Berlin " is not a known/, 'a blank')
  t.match(problemOf('../etc/passwd'), /is not a known/)
  t.match(problemOf('Europe\\Berlin'), /is not a known/)
  t.match(problemOf('+01:00'), /"\+01:00" is not a known/, 'an offset is no zone name')
  t.match(problemOf('+0100'), /"\+0100" is not a known/)
  t.equal(problemOf('A'.repeat(100)), `spec.timeZone "${'A'.repeat(64)}…" is not a known IANA time zone (such as ` +
    '"Europe/Berlin" or "UTC")', 'a long name, cut short')
})

t.test('each call makes its own zone', async t => {
  t.not(zone('Europe/Berlin'), zone('Europe/Berlin'))
})

t.test('wallClock: the date and time in the zone, with the day of the week', async t => {
  const ny = zone('America/New_York')
  t.same(ny.wallClock(Date.parse('2012-03-11T07:00:00Z')),
    { year: 2012, month: 3, day: 11, hour: 3, minute: 0, dayOfWeek: 0 }, '03:00 EDT, a Sunday')
  t.same(ny.wallClock(Date.parse('2012-03-11T06:59:59.999Z')),
    { year: 2012, month: 3, day: 11, hour: 1, minute: 59, dayOfWeek: 0 }, 'the last instant of EST')
  t.same(ny.wallClock(Date.parse('2025-01-01T04:30:00Z')),
    { year: 2024, month: 12, day: 31, hour: 23, minute: 30, dayOfWeek: 2 }, 'still the old year')
  t.same(zone('Asia/Tokyo').wallClock(Date.parse('2024-12-31T15:00:00Z')),
    { year: 2025, month: 1, day: 1, hour: 0, minute: 0, dayOfWeek: 3 }, 'midnight is hour 0, never 24')
})

t.test('offsetAt: the offset in force, in milliseconds', async t => {
  const ny = zone('America/New_York')
  t.equal(ny.offsetAt(Date.parse('2024-01-15T12:00:00Z')), -5 * HOUR)
  t.equal(ny.offsetAt(Date.parse('2024-07-15T12:00:00Z')), -4 * HOUR)
  t.equal(zone('Asia/Kolkata').offsetAt(0), 5.5 * HOUR)
  t.equal(zone('Pacific/Chatham').offsetAt(Date.parse('2024-01-15T12:00:00Z')), 13.75 * HOUR)
  t.equal(ny.offsetAt(Date.parse('2024-01-15T12:00:00.999Z')), -5 * HOUR, 'milliseconds do not count')
})

t.test('instantsAt: none in a gap, two in a repeated hour, else one', async t => {
  const ny = zone('America/New_York')
  t.same(isoAll(ny.instantsAt(local('2012-03-11T02:30:00'))), [], 'spring forward: 02:30 does not exist')
  t.same(isoAll(ny.instantsAt(local('2012-03-11T01:59:00'))), ['2012-03-11T06:59:00.000Z'])
  t.same(isoAll(ny.instantsAt(local('2012-03-11T03:00:00'))), ['2012-03-11T07:00:00.000Z'])
  t.same(isoAll(ny.instantsAt(local('2012-11-04T01:30:00'))), ['2012-11-04T05:30:00.000Z', '2012-11-04T06:30:00.000Z'],
    'fall back: 01:30 EDT, then 01:30 EST')
  t.same(isoAll(ny.instantsAt(local('2012-11-04T02:00:00'))), ['2012-11-04T07:00:00.000Z'])
  const berlin = zone('Europe/Berlin')
  t.same(isoAll(berlin.instantsAt(local('2024-03-31T02:30:00'))), [])
  t.same(isoAll(berlin.instantsAt(local('2024-10-27T02:30:00'))),
    ['2024-10-27T00:30:00.000Z', '2024-10-27T01:30:00.000Z'])
  t.same(isoAll(zone('Australia/Lord_Howe').instantsAt(local('2023-10-01T02:15:00'))), [],
    'a half-hour change: 02:00 to 02:30')
  t.same(isoAll(zone().instantsAt(local('2024-03-31T02:30:00'))), ['2024-03-31T02:30:00.000Z'])
})

t.test('dayNumber and calendarDate: plain calendar arithmetic', async t => {
  t.equal(dayNumber(1970, 1, 1), 0)
  t.same(calendarDate(0), { year: 1970, month: 1, day: 1, dayOfWeek: 4 }, 'a Thursday')
  t.equal(dayNumber(2000, 3, 1) - dayNumber(2000, 2, 28), 2, '2000 is a leap year')
  t.equal(dayNumber(2100, 3, 1) - dayNumber(2100, 2, 28), 1, '2100 is not')
  t.equal(dayNumber(2024, 13, 1), dayNumber(2025, 1, 1), 'month 13 is next January')
  t.same(calendarDate(dayNumber(2024, 2, 29)), { year: 2024, month: 2, day: 29, dayOfWeek: 4 })
  t.same(calendarDate(-1), { year: 1969, month: 12, day: 31, dayOfWeek: 3 })
  t.same(calendarDate(dayNumber(50, 6, 15)), { year: 50, month: 6, day: 15, dayOfWeek: 3 }, 'a year below 100')
  t.same(calendarDate(dayNumber(1, 13, 1)), { year: 2, month: 1, day: 1, dayOfWeek: 2 }, 'and its month 13')
})
