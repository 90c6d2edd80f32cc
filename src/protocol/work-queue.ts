// The work waiting for the event loop, in expected milliseconds. A hook runs synchronously as soon
// as its body is built, so a burst of calls queues unseen in the sockets; each call is registered
// here before it runs (and yields once, so that the other bodies read meanwhile register too), and
// one whose expected wait plus its own time would pass the budget is shed with 429 at once: a call
// answered after Metacontroller's 10 s timeout is work thrown away, and it is sent again anyway.
//
// A call's cost is its body's bytes plus ANSWER_WEIGHT times the bytes of the new children its
// answer will carry (src/controllers/answer-size.ts): a body is mostly skipped unparsed, an answer
// is built and serialised whole. The rate turning cost into milliseconds is learnt from the calls
// answered (an EWMA of busy time per cost byte), seeded with what bench/shed.ts measures.

/**
 * How many body bytes a byte of expected new children weighs. A body is built before the call
 * queues, and the wire skips most of it; its new children are built, checked and serialised in the
 * call's turn. Measured (docs/performance.md): a JobFlow first sync of 10,000 Jobs (72 KB in,
 * 6 MB of new children) is busy about 900 ms, a DaemonJob sync of 5,000 Nodes (70 MiB in, 2 MB) 300.
 */
export const ANSWER_WEIGHT = 64
/** Milliseconds per cost byte before any call was measured: those two calls at about 970 and 500 ms. */
export const SEED_MS_PER_BYTE = 2.5e-6
/** The default expected wait past which calls are shed: well under Metacontroller's 10 s with a call's own time. */
export const DEFAULT_WAIT_BUDGET_MS = 5_000
/** Turns of the event loop without a call arriving before the next call runs, and at most. */
const IDLE_TURNS = 3
const MAX_TURNS = 64
/** How much the last call moves the rate. */
const LEARNING = 0.2

export interface WorkQueueOptions {
  /** Expected milliseconds of work ahead of a call plus its own, at most. */
  waitBudgetMs: number
  /** Milliseconds per cost byte to start with. */
  msPerByte?: number
  /** Whether answered calls move the rate (tests fix it). */
  learn?: boolean
}

/** What a call admitted to the queue holds until it is answered. */
export interface Ticket {
  cost: number
  released: boolean
  /** Whether it holds the event loop's turn (see `turn`). */
  turn: boolean
}

export class WorkQueue {
  readonly waitBudgetMs: number
  private rate: number
  private readonly learn: boolean
  private bytes = 0
  private calls = 0
  /** The calls waiting for their turn, in arrival order. */
  private readonly turns: Array<() => void> = []
  private running = false
  /** Calls seen arriving (their headers read), to tell whether the loop still has sockets to read. */
  private arrivals = 0

  constructor (options: WorkQueueOptions) {
    this.waitBudgetMs = options.waitBudgetMs
    this.rate = options.msPerByte ?? SEED_MS_PER_BYTE
    this.learn = options.learn ?? true
  }

  /** The cost of a call from its body's bytes and the new child bytes expected in its answer. */
  static costOf (bodyBytes: number, newChildBytes: number): number {
    return bodyBytes + ANSWER_WEIGHT * newChildBytes
  }

  /** Expected milliseconds of `cost`. */
  ms (cost: number): number {
    return cost * this.rate
  }

  /**
   * A ticket for a call of `cost`, or the expected wait (ms) it was refused for: the calls admitted
   * and not yet answered plus its own pass the budget. A call with nothing ahead is always admitted.
   */
  admit (cost: number): Ticket | { waitMs: number } {
    const waitMs = this.ms(this.bytes)
    if (this.calls > 0 && waitMs + this.ms(cost) > this.waitBudgetMs) return { waitMs }
    this.bytes += cost
    this.calls++
    return { cost, released: false, turn: false }
  }

  /**
   * Resolves when it is the ticket's call's turn to run: one call at a time, in arrival order, and
   * never in the same turn of the event loop as the one before, so that the bodies read meanwhile
   * are queued (or shed) while the calls ahead of them run, not after. False when the ticket was
   * released while it waited (its caller went away): the call must not run.
   */
  async turn (ticket: Ticket): Promise<boolean> {
    await new Promise<void>(resolve => {
      this.turns.push(resolve)
      if (!this.running) this.next()
    })
    // Its caller went away while it waited: the turn passes on at once, or no call would run again.
    if (ticket.released) {
      this.next()
      return false
    }
    ticket.turn = true
    return true
  }

  /** Ends the ticket's turn, if it holds it: the next call runs on the loop's next turn. */
  endTurn (ticket: Ticket): void {
    if (!ticket.turn) return
    ticket.turn = false
    this.next()
  }

  /** A call's headers were read: there may be more where it came from. */
  arrived (): void {
    this.arrivals++
  }

  /**
   * Runs the next call once the loop has turned without a call arriving for IDLE_TURNS turns (at
   * most MAX_TURNS): Node reads new connections one a turn while a call runs in every turn, so a
   * burst would otherwise be read (and shed) a call's time apart, seconds after it was sent.
   */
  private next (): void {
    const resolve = this.turns.shift()
    this.running = resolve !== undefined
    if (resolve === undefined) return
    let turns = 0
    let quiet = 0
    let seen = this.arrivals
    const hop = (): void => {
      turns++
      quiet = this.arrivals === seen ? quiet + 1 : 0
      seen = this.arrivals
      if (quiet >= IDLE_TURNS || turns >= MAX_TURNS) resolve()
      else setImmediate(hop)
    }
    setImmediate(hop)
  }

  /** Gives back a ticket's cost, once; with the milliseconds the call kept the loop busy, to learn from. */
  release (ticket: Ticket, busyMs?: number): void {
    if (ticket.released) return
    this.endTurn(ticket)
    ticket.released = true
    this.bytes = Math.max(0, this.bytes - ticket.cost)
    this.calls = Math.max(0, this.calls - 1)
    if (this.learn && busyMs !== undefined && ticket.cost > 0 && Number.isFinite(busyMs) && busyMs >= 0) {
      this.rate += LEARNING * (busyMs / ticket.cost - this.rate)
    }
  }

  /** Expected milliseconds of the calls admitted and not yet answered. */
  get waitingMs (): number {
    return this.ms(this.bytes)
  }

  /** Calls admitted and not yet answered. */
  get waiting (): number {
    return this.calls
  }

  get msPerByte (): number {
    return this.rate
  }
}
