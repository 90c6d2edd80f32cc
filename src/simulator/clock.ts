// The simulated clock: nothing sleeps, `Date` comes only from here, so runs are deterministic.

const DEFAULT_START = '2026-01-01T00:00:00Z'

export class Clock {
  readonly startMs: number
  /** The simulated time, in milliseconds; only the run loop moves it. */
  nowMs: number

  constructor (start: Date | string | undefined) {
    const iso = typeof start === 'string' ? start : (start ?? new Date(DEFAULT_START)).toISOString()
    this.startMs = Date.parse(iso)
    this.nowMs = this.startMs
  }

  now (): Date {
    return new Date(this.nowMs)
  }

  /** Simulated seconds since the start. */
  seconds (): number {
    return (this.nowMs - this.startMs) / 1000
  }

  /** Simulated seconds since the start of an ISO time (e.g. a status time), for reports. */
  secondsAt (time: string): number {
    return (Date.parse(time) - this.startMs) / 1000
  }

  /** The time `seconds` from now, in milliseconds. */
  inSeconds (seconds: number): number {
    return this.nowMs + seconds * 1000
  }
}
