// Which schedule time a CronJobFlow is to start now, by Kubernetes' CronJob rules for missed
// schedules (pkg/controller/cronjob: mostRecentScheduleTime, nextScheduleTime, and syncCronJob's
// startingDeadlineSeconds check):
//
// - Only the most recent missed time starts, never a backlog: a controller that was down for a
//   weekend starts one flow, not sixty.
// - Times before `earliestMs` (status.lastScheduleTime, else the creation time) were handled or
//   never wanted; with startingDeadlineSeconds, times before now less the deadline are too late.
// - More than 100 missed times is worth a warning (Kubernetes' TooManyMissedTimes event: a clock
//   off by years, or a controller down for long). Kubernetes counts them, as here, from the gap
//   between the first two times, never one by one: `* * * * *` ten years late is five million.
//
// Why every step is bounded: the spec is a tenant's, and no schedule may freeze the hook's event
// loop. Where Kubernetes walks from its estimate to now, time by time, this module finds the most
// recent time by bisection over whole minutes, asking nextTime: a few dozen questions at most,
// whatever the schedule and the gap, and the exact answer where the estimate of an irregular
// schedule (`0 9 * * 1-5`) could overshoot it.
import type { CronSchedule } from './cron.js'
import { nextTime } from './cron-next.js'
import type { TimeZone } from './time-zone.js'

const MINUTE = 60_000
/** Kubernetes' threshold for its TooManyMissedTimes warning. */
const MANY_MISSED = 100
/** Bisection over whole minutes: 2^64 minutes is far more than any two instants apart. */
const MAX_BISECTIONS = 64

export interface DueInput {
  schedule: CronSchedule
  zone: TimeZone
  /** status.lastScheduleTime, else the creation time (epoch milliseconds) */
  earliestMs: number
  nowMs: number
  startingDeadlineSeconds?: number
}

export interface Due {
  /**
   * The most recent schedule time at or before now that is after earliest (and after now -
   * startingDeadlineSeconds, as Kubernetes raises its earliest to that point), if any: the time to start.
   */
  scheduledMs?: number
  /** 'many' = more than 100 missed start times: Kubernetes' TooManyMissedTimes warning. */
  missed: 'none' | 'few' | 'many'
  /** The next schedule time strictly after now (for the resync), undefined if none within 5 years. */
  nextMs?: number
  /**
   * Set when a schedule time after earliest was missed and startingDeadlineSeconds makes it too late
   * to start (no scheduledMs then): Kubernetes' MissSchedule.
   */
  tooLate?: boolean
}

/** What is due now: the time to start (if any), how many were missed, and when to look again. */
export function dueSchedule (input: DueInput): Due {
  const { schedule, zone, nowMs } = input
  const nextMs = nextTime(schedule, zone, nowMs)
  const due: Due = nextMs === undefined ? { missed: 'none' } : { missed: 'none', nextMs }
  const deadlineMs = input.startingDeadlineSeconds === undefined
    ? undefined
    : nowMs - input.startingDeadlineSeconds * 1000
  // Kubernetes: "controller is not going to schedule anything below this point".
  const earliestMs = deadlineMs !== undefined && deadlineMs > input.earliestMs ? deadlineMs : input.earliestMs
  const first = nextTime(schedule, zone, earliestMs)
  if (first === undefined || first > nowMs) {
    return deadlineMs !== undefined && missedBefore(input, deadlineMs) ? { ...due, tooLate: true } : due
  }
  const second = nextTime(schedule, zone, first)
  if (second === undefined || second > nowMs) return { ...due, scheduledMs: first }
  const missed = estimatedMissed(first, second, nowMs) > MANY_MISSED ? 'many' : 'few'
  return { ...due, scheduledMs: latestAtOrBefore(schedule, zone, first, nowMs), missed }
}

/**
 * Kubernetes' count of missed times, two or more of them known to be due: how many gaps between the
 * first two fit between the first and now, plus the first. Exact for a regular schedule; an
 * estimate, as Kubernetes' own, for an irregular one (weekdays only, say).
 */
function estimatedMissed (firstMs: number, secondMs: number, nowMs: number): number {
  const gapSeconds = Math.max(1, Math.round((secondMs - firstMs) / 1000))
  const elapsedSeconds = Math.trunc((nowMs - firstMs) / 1000)
  return Math.floor(elapsedSeconds / gapSeconds) + 1
}

/**
 * Whether the deadline dropped a time: one after `earliestMs` but not after now less the deadline.
 * Kubernetes' own check (scheduled + deadline before now) never fires once its earliest has been
 * raised to that point; it is the question that check means to answer (its MissSchedule event).
 */
function missedBefore (input: DueInput, deadlineMs: number): boolean {
  const missed = nextTime(input.schedule, input.zone, input.earliestMs)
  return missed !== undefined && missed <= deadlineMs && missed <= input.nowMs
}

/**
 * The last schedule time at or before `nowMs`, given `firstMs`, a schedule time with another after
 * it at or before now. Bisection over whole minutes: a time lies after `low` (and at or before now),
 * none after `high`; when they are a minute apart, `high` is that time.
 */
function latestAtOrBefore (schedule: CronSchedule, zone: TimeZone, firstMs: number, nowMs: number): number {
  let low = firstMs
  let high = Math.floor(nowMs / MINUTE) * MINUTE
  for (let i = 0; i < MAX_BISECTIONS && high - low > MINUTE; i++) {
    const middle = low + Math.floor((high - low) / MINUTE / 2) * MINUTE
    const next = nextTime(schedule, zone, middle)
    if (next !== undefined && next <= nowMs) low = middle
    else high = middle
  }
  return high
}
