// Bytes of hook requests in flight, kept under a budget. A request carries every child and related
// object whole: at 5,000 Nodes a DaemonJob sync is tens of MiB, and Metacontroller runs several
// workers per controller, so a burst of them, read side by side, is what takes the process past
// its memory limit. A call that would pass the budget is not read at all: the route answers 429
// with Retry-After, which Metacontroller (v4.17) takes as "come back later" — it requeues the
// parent after that many seconds, with no error event and no backoff.
//
// Charged by Content-Length (Metacontroller always sends one); a body without one is charged the
// body limit, its worst case. A call alone is always admitted, whatever its size: otherwise a
// request larger than the budget would never be served. The body limit bounds it.
import { getHeapStatistics } from 'node:v8'

/** What a shed call is told: come back in this many seconds. */
export const SHED_RETRY_AFTER_SECONDS = 2

/**
 * The default budget: three quarters of the heap the process may grow to, less what the memo of
 * built objects may hold (`memoLimit`, src/protocol/object-memo.ts). The bytes of a request are
 * held outside the heap, once, from the moment they are read until what the hooks read is built
 * from them (src/protocol/body-reader.ts keeps one buffer for the next body only while no other
 * is read, so it never adds to the bytes in flight); what the hooks build of them in the heap is
 * a small part (a tenth for a DaemonJob's Nodes: see src/k8s/reads.ts). The memo holds copies of
 * objects' bytes outside the heap too. So the process needs about its heap, the bytes in flight
 * and the memo: with the Deployment's Node options (a 576 MiB heap limit, a 36 MiB memo) and its
 * 1 GiB memory limit, that leaves about 396 MiB for requests, five DaemonJob syncs of 5,000 busy
 * Nodes at once (bench/scale.ts measures it).
 */
export function defaultInflightBudget (memoLimit: number): number {
  return Math.max(0, Math.floor(getHeapStatistics().heap_size_limit * 3 / 4) - memoLimit)
}

export class InflightBudget {
  private bytes = 0
  private calls = 0

  constructor (readonly budget: number) {}

  /** Takes `bytes` from the budget unless that would pass it (a call alone always passes). */
  admit (bytes: number): boolean {
    if (this.calls > 0 && this.bytes + bytes > this.budget) return false
    this.bytes += bytes
    this.calls++
    return true
  }

  /** Gives back what `admit` took, once the call is answered or abandoned. */
  release (bytes: number): void {
    this.bytes = Math.max(0, this.bytes - bytes)
    this.calls = Math.max(0, this.calls - 1)
  }

  /** Bytes of the calls admitted and not yet released. */
  get inflight (): number {
    return this.bytes
  }
}

/** The bytes a call is charged: its Content-Length, or `bodyLimit` when it has none. */
export function chargeOf (contentLength: string | undefined, bodyLimit: number): number {
  const length = Number(contentLength)
  const given = contentLength !== undefined && contentLength !== '' && Number.isSafeInteger(length) && length >= 0
  return given ? Math.min(length, bodyLimit) : bodyLimit
}
