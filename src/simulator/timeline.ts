// What happened, for scenarios and reports (the timeline), and what the last steps did, for the
// message of a simulation that does not go quiet.
import { describeRef } from './objects.js'
import type { Clock } from './clock.js'
import type { TimelineEvent } from './types.js'

interface StepRecord {
  seconds: number
  what: string
  changes: string[]
}

export class Timeline {
  readonly events: TimelineEvent[] = []
  private readonly history: StepRecord[] = []

  constructor (private readonly clock: Clock) {}

  record (event: Omit<TimelineEvent, 'seconds'>): void {
    this.events.push({ seconds: this.clock.seconds(), ...event })
  }

  /** Notes a step of the run loop; the last 200 are kept. */
  note (what: string, changes: string[]): void {
    this.history.push({ seconds: this.clock.seconds(), what, changes })
    if (this.history.length > 200) this.history.splice(0, this.history.length - 200)
  }

  /** A plain-text timeline, one event a line, for test diagnostics. */
  text (): string {
    return this.events.map(e => {
      const extra = [
        e.owner !== undefined ? `owner ${e.owner.name}` : '',
        e.cause ?? '',
        e.phase !== undefined ? `${e.previousPhase ?? '-'} → ${e.phase}` : '',
        e.message ?? ''
      ].filter(s => s !== '').join(', ')
      return `t=${e.seconds}s ${e.type} ${describeRef(e.object)}${extra === '' ? '' : ` (${extra})`}`
    }).join('\n')
  }

  /** Why a run threw after `maxSteps` steps: what the last steps did, grouped. */
  notQuietMessage (maxSteps: number): string {
    const recent = this.history.slice(-40)
    const grouped = new Map<string, { count: number, changes: Set<string> }>()
    for (const step of recent) {
      const entry = grouped.get(step.what) ?? { count: 0, changes: new Set<string>() }
      entry.count += 1
      for (const change of step.changes) entry.changes.add(change)
      grouped.set(step.what, entry)
    }
    const lines = [...grouped].map(([what, { count, changes }]) =>
      `  ${what} ×${count}${changes.size > 0 ? `: ${[...changes].slice(0, 12).join('; ')}` : ': no change'}`)
    return `the simulation is not quiet after ${maxSteps} steps (t=${this.clock.seconds()}s); ` +
      `what the last ${recent.length} steps did:\n${lines.join('\n')}`
  }
}
