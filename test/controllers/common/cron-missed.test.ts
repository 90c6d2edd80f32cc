// Kubernetes' CronJob rules for missed schedules, for a CronJobFlow: only the most recent missed
// time starts; more than 100 missed is 'many' (TooManyMissedTimes); startingDeadlineSeconds raises
// the earliest time and makes older ones too late; the next time is for the resync. Every answer
// is bounded in time, a schedule ten years behind included, and the most recent time is exact
// where Kubernetes' estimate overshoots it.
import t from 'tap'
import fc from 'fast-check'
import { parseCron, type CronSchedule } from '../../../src/controllers/common/cron.js'
import { nextTime } from '../../../src/controllers/common/cron-next.js'
import { dueSchedule, type Due } from '../../../src/controllers/common/cron-missed.js'
import { timeZoneNamed, type TimeZone } from '../../../src/controllers/common/time-zone.js'
import { fuzzSettings } from '../../helpers/fuzz.js'

const HOUR = 3_600_000

function schedule (text: string): CronSchedule {
  const parsed = parseCron(text)
  if ('problem' in parsed) throw new Error(parsed.problem)
  return parsed.schedule
}

function zone (name?: string): TimeZone {
  const named = timeZoneNamed(name)
  if ('problem' in named) throw new Error(named.problem)
  return named.zone
}

const iso = (text: string): string => new Date(Date.parse(text)).toISOString()

/** dueSchedule with its instants as ISO strings, so a failure shows the times. */
function due (
  text: string, earliest: string, now: string, startingDeadlineSeconds?: number, zoneName?: string
): object {
  const answer: Due = dueSchedule({
    schedule: schedule(text),
    zone: zone(zoneName),
    earliestMs: Date.parse(earliest),
    nowMs: Date.parse(now),
    ...(startingDeadlineSeconds === undefined ? {} : { startingDeadlineSeconds })
  })
  const shown = (ms?: number): string | undefined => ms === undefined ? undefined : new Date(ms).toISOString()
  return Object.fromEntries(Object.entries({
    scheduled: shown(answer.scheduledMs),
    missed: answer.missed,
    next: shown(answer.nextMs),
    tooLate: answer.tooLate
  }).filter(([, value]) => value !== undefined))
}

t.test('nothing due before the first time after earliest; due from that instant on', async t => {
  t.same(due('0 * * * *', '2024-05-01T10:00:00Z', '2024-05-01T10:30:00Z'),
    { missed: 'none', next: '2024-05-01T11:00:00.000Z' })
  t.same(due('0 * * * *', '2024-05-01T10:00:00Z', '2024-05-01T11:00:00Z'),
    { scheduled: '2024-05-01T11:00:00.000Z', missed: 'none', next: '2024-05-01T12:00:00.000Z' }, 'at the instant')
  t.same(due('0 * * * *', '2024-05-01T10:00:00Z', '2024-05-01T11:00:05Z'),
    { scheduled: '2024-05-01T11:00:00.000Z', missed: 'none', next: '2024-05-01T12:00:00.000Z' })
  t.same(due('0 * * * *', '2024-05-01T12:00:00Z', '2024-05-01T11:00:05Z'),
    { missed: 'none', next: '2024-05-01T12:00:00.000Z' }, 'an earliest time ahead of now (clock skew): nothing')
})

t.test('missed times: only the most recent starts; a few are "few"', async t => {
  t.same(due('0 * * * *', '2024-05-01T10:00:00Z', '2024-05-01T15:30:00Z'),
    { scheduled: '2024-05-01T15:00:00.000Z', missed: 'few', next: '2024-05-01T16:00:00.000Z' })
})

t.test('100 due times are "few", 101 are "many" (Kubernetes counts past 100)', async t => {
  // The first time after earliest is 01:00; 99 hours later is the 100th.
  t.same(due('0 * * * *', '2024-05-01T00:00:00Z', '2024-05-05T04:59:59Z'),
    { scheduled: '2024-05-05T04:00:00.000Z', missed: 'few', next: '2024-05-05T05:00:00.000Z' })
  t.same(due('0 * * * *', '2024-05-01T00:00:00Z', '2024-05-05T05:00:00Z'),
    { scheduled: '2024-05-05T05:00:00.000Z', missed: 'many', next: '2024-05-05T06:00:00.000Z' })
})

t.test('every minute, ten years behind: many, the last minute, at once', async t => {
  const started = performance.now()
  t.same(due('* * * * *', '2015-06-15T12:00:00Z', '2025-06-15T12:34:56Z'),
    { scheduled: '2025-06-15T12:34:00.000Z', missed: 'many', next: '2025-06-15T12:35:00.000Z' })
  t.same(due('* * * * *', '1970-01-01T00:00:00Z', '2025-06-15T12:34:56Z'),
    { scheduled: '2025-06-15T12:34:00.000Z', missed: 'many', next: '2025-06-15T12:35:00.000Z' }, 'from the epoch')
  t.same(due('0 0 29 2 *', '1970-01-01T00:00:00Z', '2025-06-15T12:34:56Z'),
    { scheduled: '2024-02-29T00:00:00.000Z', missed: 'few', next: '2028-02-29T00:00:00.000Z' })
  const took = performance.now() - started
  t.ok(took < 100, `three answers in ${took.toFixed(1)} ms`)
})

t.test('startingDeadlineSeconds raises earliest to now less the deadline', async t => {
  t.same(due('0 * * * *', '2024-05-01T10:00:00Z', '2024-05-01T15:05:00Z', 600),
    { scheduled: '2024-05-01T15:00:00.000Z', missed: 'none', next: '2024-05-01T16:00:00.000Z' },
    'in time: the 15:00 start, and no missed times before the deadline counted')
  t.same(due('0 * * * *', '2024-05-01T14:58:00Z', '2024-05-01T15:05:00Z', 3600),
    { scheduled: '2024-05-01T15:00:00.000Z', missed: 'none', next: '2024-05-01T16:00:00.000Z' },
    'a deadline longer than the wait changes nothing')
  t.same(due('* * * * *', '2015-06-15T12:00:00Z', '2025-06-15T12:34:56Z', 200),
    { scheduled: '2025-06-15T12:34:00.000Z', missed: 'few', next: '2025-06-15T12:35:00.000Z' },
    'the count starts at the deadline (Kubernetes: "set or decrease startingDeadlineSeconds")')
})

t.test('too late: a missed time older than the deadline is not started', async t => {
  t.same(due('0 * * * *', '2024-05-01T10:00:00Z', '2024-05-01T15:20:00Z', 600),
    { missed: 'none', next: '2024-05-01T16:00:00.000Z', tooLate: true })
  t.same(due('0 * * * *', '2024-05-01T10:00:00Z', '2024-05-01T15:10:00Z', 600),
    { missed: 'none', next: '2024-05-01T16:00:00.000Z', tooLate: true },
    'exactly at the deadline\'s edge: not started (Kubernetes\' earliest is exclusive)')
  t.same(due('0 * * * *', '2024-05-01T10:00:00Z', '2024-05-01T15:00:00Z', 0),
    { missed: 'none', next: '2024-05-01T16:00:00.000Z', tooLate: true }, 'a deadline of 0 is never in time')
  t.same(due('0 * * * *', '2024-05-01T15:01:00Z', '2024-05-01T15:20:00Z', 600),
    { missed: 'none', next: '2024-05-01T16:00:00.000Z' }, 'nothing missed: not too late either')
})

t.test('an irregular schedule: the most recent time exactly, where Kubernetes\' estimate overshoots', async t => {
  // Weekdays at 09:00 from a Sunday: the first two times are a day apart, so 20 days and 23 hours
  // hold 21 gaps by Kubernetes' estimate, which starts looking on Saturday and finds Monday's 09:00
  // ahead of now; the most recent time was Friday's.
  t.same(due('0 9 * * 1-5', '2024-04-28T12:00:00Z', '2024-05-20T08:00:00Z'),
    { scheduled: '2024-05-17T09:00:00.000Z', missed: 'few', next: '2024-05-20T09:00:00.000Z' })
})

t.test('a schedule without times is never due', async t => {
  t.same(due('0 0 30 2 *', '2020-01-01T00:00:00Z', '2025-01-01T00:00:00Z'), { missed: 'none' })
  t.same(due('0 0 30 2 *', '2020-01-01T00:00:00Z', '2025-01-01T00:00:00Z', 60), { missed: 'none' })
})

t.test('across daylight-saving changes, in the schedule\'s zone', async t => {
  const ny = 'America/New_York'
  t.same(due('0 * * * *', '2012-03-11T00:30:00-05:00', '2012-03-11T03:30:00-04:00', undefined, ny), {
    scheduled: iso('2012-03-11T03:00:00-04:00'), missed: 'few', next: iso('2012-03-11T04:00:00-04:00')
  }, '01:00 EST and 03:00 EDT were due: an hour apart')
  t.same(due('30 1 * * *', '2012-11-04T01:30:00-04:00', '2012-11-04T01:45:00-05:00', undefined, ny), {
    scheduled: iso('2012-11-04T01:30:00-05:00'), missed: 'none', next: iso('2012-11-05T01:30:00-05:00')
  }, 'the repeated 01:30 is due again, as a CronJob runs twice')
})

const denseSchedule = fc.tuple(
  fc.constantFrom('*', '0', '*/7', '15,45', '59'),
  fc.constantFrom('*', '*/3', '1-4', '23'),
  fc.constantFrom('*', '1-10', '*/2'),
  fc.constantFrom('*'),
  fc.constantFrom('*', '1-5', '0')
).map(fields => fields.join(' '))

t.test('the scheduled time is the last of the times, one by one, after the raised earliest', async t => {
  const zones = ['UTC', 'America/New_York', 'Europe/Berlin']
  const property = fc.property(
    denseSchedule, fc.constantFrom(...zones), fc.integer({ min: 0, max: 12 * 60 }), fc.integer({ min: 0, max: 59_999 }),
    fc.option(fc.integer({ min: 0, max: 7200 })), fc.integer({ min: -2 * 24, max: 2 * 24 }),
    (text, zoneName, minutesBehind, ms, deadline, hours) => {
      const s = schedule(text)
      const z = zone(zoneName)
      const nowMs = Date.parse('2024-10-27T01:00:00Z') + hours * HOUR + ms
      const earliestMs = nowMs - minutesBehind * 60_000 - ms
      const input = { schedule: s, zone: z, earliestMs, nowMs }
      const answer = dueSchedule(deadline === null ? input : { ...input, startingDeadlineSeconds: deadline })
      const from = deadline === null ? earliestMs : Math.max(earliestMs, nowMs - deadline * 1000)
      let last: number | undefined
      for (let at = nextTime(s, z, from); at !== undefined && at <= nowMs; at = nextTime(s, z, at)) last = at
      if (answer.scheduledMs !== last) {
        throw new Error(`${text} in ${zoneName}: ${String(answer.scheduledMs)}, not ${String(last)}`)
      }
      const missedBefore = nextTime(s, z, earliestMs)
      const tooLate = last === undefined && deadline !== null && missedBefore !== undefined &&
        missedBefore <= nowMs - deadline * 1000
      if ((answer.tooLate ?? false) !== tooLate) throw new Error(`${text} in ${zoneName}: tooLate ${String(tooLate)}`)
      if (answer.nextMs !== nextTime(s, z, nowMs)) throw new Error(`${text} in ${zoneName}: next`)
    }
  )
  await t.resolves(async () => fc.assert(property, fuzzSettings(100)))
})
