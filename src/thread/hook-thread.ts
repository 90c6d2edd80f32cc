// The hook thread, from the app's side: sync and finalize hooks run there, so that however long
// one runs, the app's own event loop goes on reading calls, shedding, and answering /readyz. One
// thread: the work queue (src/protocol/work-queue.ts) runs one hook at a time anyway, and a
// second heap would double what the hooks may hold. Its event loop is pinged every second; one
// that has not answered for the deadline is stopped (whatever froze it: no budget is perfect),
// every call in it answered 503, and a new thread started for the next call. One that dies (out
// of memory) is replaced the same way: the process, and the calls queued in it, live on.
import { Worker } from 'node:worker_threads'
import type { Effect, EffectOutcome, ObjectRef } from '../effects/types.js'
import {
  handOver, type AnswerMessage, type ApplyAsk, type BodyRef, type FromThread, type MemoReport, type ThreadSetup,
  type ToThread, type TurnAsk
} from './messages.js'

/** How long the thread may hold a call unanswered: past Metacontroller's 10 s timeout, an answer is thrown away. */
export const DEFAULT_DEADLINE_MS = 10_000
const PING_MS = 1_000

/** What a call asks of the app while the hook thread answers it. */
export interface CallPorts {
  turn: (cost: number) => Promise<string | undefined>
  apply: (parent: ObjectRef | undefined, effects: Effect[]) => Promise<EffectOutcome[]>
}

/** The clock the watchdog reads and ticks by: the time of day, or a test's. */
export interface WatchdogClock {
  now: () => number
  repeat: (tick: () => void, ms: number) => { stop: () => void }
}

const realClock: WatchdogClock = {
  now: () => performance.now(),
  repeat: (tick, ms) => {
    const timer = setInterval(() => { tick() }, ms)
    timer.unref()
    return { stop: () => { clearInterval(timer) } }
  }
}

export interface HookThreadOptions {
  setup: ThreadSetup
  /** How long the hook thread's event loop may go unanswered while calls are in it. */
  deadlineMs?: number
  /** Where the hook thread's log lines go, as written. */
  log: (line: string) => void
  /** The app's logger, for what becomes of the thread. */
  warn: (message: string) => void
  clock?: WatchdogClock
}

/** A call the hook thread could not answer: it stopped. Every child is kept: the call gets a 503. */
export class ThreadStopped extends Error {}

interface Pending {
  ports: CallPorts
  /** Called once the call's body is no longer needed: built, or the call ended. */
  release: () => void
  resolve: (answer: AnswerMessage) => void
  reject: (error: Error) => void
}

export class HookThread {
  private worker: Worker | undefined
  private started: Promise<void> | undefined
  private readonly pending = new Map<number, Pending>()
  private nextId = 1
  private lastPong = 0
  private closing = false
  /** The hook thread's memo of built objects as last reported (with each answer to a ping). */
  readonly memo: MemoReport = { size: 0, count: 0, limit: 0, hits: 0, misses: 0 }
  private readonly deadlineMs: number
  private readonly clock: WatchdogClock
  private readonly watchdog: { stop: () => void }

  constructor (private readonly options: HookThreadOptions) {
    this.deadlineMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS
    this.clock = options.clock ?? realClock
    this.watchdog = this.clock.repeat(() => { this.check() }, PING_MS)
  }

  /** Starts the thread, if it is not running, and resolves once it serves calls. */
  async ready (): Promise<void> {
    if (this.started === undefined) this.start()
    await this.started
  }

  /**
   * Answers a call on the hook thread, asking `ports` what it needs of the app; rejects with
   * ThreadStopped when the thread stops first. `release` is called once, when the thread has
   * built what it reads of the body (its bytes may be read into again) or the call has ended.
   */
  async call (
    url: string, headers: Record<string, string>, body: BodyRef, ports: CallPorts, release: () => void
  ): Promise<AnswerMessage> {
    await this.ready()
    const worker = this.worker as Worker
    const id = this.nextId++
    let released = false
    const once = (): void => {
      if (released) return
      released = true
      release()
    }
    try {
      return await new Promise<AnswerMessage>((resolve, reject) => {
        this.pending.set(id, { ports, release: once, resolve, reject })
        if (this.pending.size === 1) this.lastPong = this.clock.now()
        const transfer = 'bytes' in body ? handOver(body.bytes) : undefined
        const handed = transfer !== undefined ? { bytes: transfer.bytes } : body
        this.post(worker, { type: 'call', id, url, headers, body: handed }, transfer?.transfer)
      })
    } finally {
      once()
    }
  }

  /** Stops the thread once it has closed its app (its calls are answered by then), or at once. */
  async close (): Promise<void> {
    this.closing = true
    this.watchdog.stop()
    const worker = this.worker
    if (worker === undefined) return
    const exited = new Promise<void>(resolve => { worker.once('exit', () => { resolve() }) })
    this.post(worker, { type: 'close' })
    const timer = setTimeout(() => { void worker.terminate() }, 5_000)
    await exited
    clearTimeout(timer)
  }

  private start (): void {
    const entry = threadEntry()
    const worker = new Worker(entry.script, { workerData: { ...this.options.setup, entry: entry.module } })
    this.worker = worker
    this.started = new Promise<void>((resolve, reject) => {
      worker.on('message', (message: FromThread) => {
        if (message.type === 'ready' || message.type === 'pong' || message.type === 'answer') {
          Object.assign(this.memo, message.memo)
        }
        if (message.type === 'ready') resolve()
        else this.receive(worker, message)
      })
      worker.once('error', error => { this.stopped(worker, `the hook thread failed: ${error.message}`); reject(error) })
      worker.once('exit', code => {
        this.stopped(worker, `the hook thread exited (code ${code})`)
        reject(new ThreadStopped('the hook thread exited before it served a call'))
      })
    })
    // Noticed by ready(); here only so that no rejection goes unhandled.
    this.started.catch(() => {})
  }

  private receive (worker: Worker, message: Exclude<FromThread, { type: 'ready' }>): void {
    if (message.type === 'pong') {
      this.lastPong = this.clock.now()
      return
    }
    if (message.type === 'log') {
      this.options.log(message.line)
      return
    }
    const pending = this.pending.get(message.id)
    if (pending === undefined) return
    if (message.type === 'built') {
      pending.release()
    } else if (message.type === 'answer') {
      this.pending.delete(message.id)
      pending.resolve(message)
    } else {
      this.ask(worker, message.id, pending.ports, message)
    }
  }

  /** Answers the thread's question about a call: its turn, or its effects applied. */
  private ask (worker: Worker, id: number, ports: CallPorts, ask: TurnAsk | ApplyAsk): void {
    if (ask.type === 'turn') {
      void ports.turn(ask.cost).then(refused => {
        this.post(worker, { type: 'turn', id, ...(refused !== undefined ? { refused } : {}) })
        // The wait for a turn is the app's, not the thread's: the deadline counts from here.
        this.lastPong = this.clock.now()
      })
    } else {
      void ports.apply(ask.parent, ask.effects).then(outcomes => {
        this.post(worker, { type: 'applied', id, outcomes })
      })
    }
  }

  /** Every second: a thread with calls in it that has not answered a ping for the deadline is stopped. */
  private check (): void {
    const worker = this.worker
    if (worker === undefined || this.pending.size === 0) return
    if (this.clock.now() - this.lastPong > this.deadlineMs) {
      const seconds = Math.round(this.deadlineMs / 100) / 10
      this.stopped(worker, `a hook held the hook thread for over ${seconds} s: stopped`)
      void worker.terminate()
      return
    }
    this.post(worker, { type: 'ping' })
  }

  /** The thread is gone: its calls fail, and the next call starts another. */
  private stopped (worker: Worker, why: string): void {
    if (this.worker !== worker) return
    this.worker = undefined
    this.started = undefined
    if (!this.closing) this.options.warn(`${why}; ${this.pending.size} call(s) answered 503, a new thread starts`)
    for (const pending of this.pending.values()) pending.reject(new ThreadStopped(why))
    this.pending.clear()
  }

  private post (worker: Worker, message: ToThread, transfer: ArrayBuffer[] = []): void {
    worker.postMessage(message, transfer)
  }
}

/**
 * The hook thread's entry: src/thread-main.ts, compiled; from the sources (tests, through tsx), a
 * script that loads tsx in the thread first, which a worker does not inherit. Found when a thread
 * starts, not on import: the single-file plugin (no module URL) imports this module and never starts one.
 */
function threadEntry (): { script: URL, module: string } {
  const fromSources = import.meta.url.endsWith('.ts')
  const module = new URL(fromSources ? '../thread-main.ts' : '../thread-main.js', import.meta.url)
  return { script: fromSources ? new URL('../../scripts/ts-thread.mjs', import.meta.url) : module, module: module.href }
}
