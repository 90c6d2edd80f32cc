// What the app's thread and the hook thread say to each other (src/thread/hook-thread.ts, the
// app's side; src/thread-main.ts, the hook thread's): one typed set of messages, both ways.
import type { Effect, EffectOutcome, ObjectRef } from '../effects/types.js'
import type { Outcome } from '../protocol/hooks.js'
import type { BodyMemory } from '../protocol/skip-wasm.js'

/** What the hook thread is built from (its workerData): everything a function cannot carry across. */
export interface ThreadSetup {
  /** The module whose export `kindsExport` is the kinds to serve (src/controllers/kinds.ts by default). */
  kindsModule: string
  kindsExport: string
  /** The shipped scripts, by name. */
  scripts: Array<[string, string]>
  bodyLimit: number
  memoBytes?: number
  keepWhole?: boolean
  /** The log level; none: the hook thread logs nothing. */
  logLevel?: string
  /** Whether effects are applied to a cluster or only recorded: a caller may pin the clock only in dry-run. */
  effectsMode: 'cluster' | 'dry-run'
  /** A fixed clock for the hooks (tests); none: the time of day. */
  now?: string
  /** Anything else the kinds' module reads of workerData (tests). */
  extra?: unknown
}

/**
 * A call's body, read whole on the app's thread: a large one where it lies, in the shared memory
 * it was read into (src/protocol/skip-wasm.ts), so it is neither copied nor left behind as
 * garbage (at 15,000 Nodes, 209 MiB); a small one as bytes.
 */
export type BodyRef = { memory: BodyMemory, offset: number, length: number } | { bytes: Uint8Array }

/** A sync or finalize call, its body read. */
export interface CallMessage {
  type: 'call'
  id: number
  url: string
  headers: Record<string, string>
  body: BodyRef
}

/** The hook thread asks for a call's turn, with its expected cost (src/protocol/work-queue.ts). */
export interface TurnAsk { type: 'turn', id: number, cost: number }
/** The call's turn has come; or why it is shed. */
export interface TurnGiven { type: 'turn', id: number, refused?: string }

/** The hook thread asks for a call's effects to be applied (the app's executor). */
export interface ApplyAsk { type: 'apply', id: number, parent?: ObjectRef, effects: Effect[] }
/** What became of them. */
export interface Applied { type: 'applied', id: number, outcomes: EffectOutcome[] }

/** A call's answer, its body serialised and handed over whole. */
export interface AnswerMessage {
  type: 'answer'
  id: number
  statusCode: number
  headers: Record<string, string>
  body: Uint8Array
  /** What the call's record says: the metrics and the log line written on the app's side. */
  outcome?: Outcome
  parent?: string
  memo: MemoReport
}

/** The hook thread's memo of built objects, for the metrics (src/plugins/metrics.ts). */
export interface MemoReport { size: number, count: number, limit: number, hits: number, misses: number }

export type ToThread = CallMessage | TurnGiven | Applied | { type: 'ping' } | { type: 'close' }
export type FromThread =
  | TurnAsk | ApplyAsk | AnswerMessage | { type: 'log', line: string }
  /** What was built of a call's body holds none of its bytes: the app may read into them again. */
  | { type: 'built', id: number }
  | { type: 'pong', memo: MemoReport } | { type: 'ready', memo: MemoReport }

/** The header naming a call to the hook thread's own routes. */
export const CALL_HEADER = 'x-jobhooks-thread-call'

/** The bytes of `view`, and whether its memory can be handed over (transferred) rather than copied. */
export function handOver (view: Uint8Array): { bytes: Uint8Array, transfer: ArrayBuffer[] } {
  const { buffer } = view
  const whole = buffer instanceof ArrayBuffer && view.byteOffset === 0 && view.byteLength === buffer.byteLength
  if (whole) return { bytes: view, transfer: [buffer] }
  // A slice of Node's pool or of a memory others use: a copy of its own, handed over.
  const copy = new Uint8Array(view)
  return { bytes: copy, transfer: [copy.buffer] }
}
