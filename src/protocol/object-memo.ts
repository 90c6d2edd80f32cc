// What was built of an object, kept for the next request that carries the same object byte for
// byte. Metacontroller sends every child and related object on every sync, and between two syncs
// of a parent most of them have not changed: at 5,000 Pods, building what a hook reads of each
// costs more than the hook itself. The projection (src/protocol/projection.ts) looks an object up
// by what identifies it (docs/wire.md, "The memo"): a child or related object by its group and
// its key in the group's map (`namespace/name`), a part of the parent (its spec, its status) by
// the parent's UID and the part's name; each for one shape, since another shape builds another
// object. It compares the body's bytes with the bytes the object was built from (a memcmp, far
// faster than walking them), and on a match gives the object built before. Each app has a memo
// of its own (src/protocol/wire-state.ts).
//
// Why this keeps the hooks' answers a function of the request (law 3): an object is reused only
// for exactly the bytes it was built from, never on the word of a resourceVersion or a hash, so a
// fixture edited by hand and sent again is built anew. What is reused is frozen for good
// (src/k8s/derived.ts): a hook that wrote into what it was given would throw, not change the next
// request.
//
// Memory: an entry holds a copy of the object's bytes and what was built of them, counted
// against a limit (a sixteenth of the heap limit, at most 64 MiB: 36 MiB with the Deployment's
// Node options). To make room the least recently used entries go, but never one used in the last
// RECENT_MS: a request larger than the memo fills it and builds the rest as before, rather than
// pushing out, object by object, what it will ask for again on its next sync (with least
// recently used alone, a cluster a little larger than the memo would miss on every object).
//
// An object the hooks read a fair share of (WORTH_REMEMBERING) is remembered by its bytes:
// comparing them saves walking them. One read to a sliver (a Node: of its 11 KiB a DaemonJob reads
// the labels and taints) is remembered by the text kept of it instead: holding its bytes would
// cost a whole Node for a few hundred bytes built, and skipping what is not read is fast. It is
// walked as before, and when what is kept of it is byte for byte what was kept last time, what
// was built of that text is given again: not parsing it and not building it saves what the walk
// costs a second time. Its answer is the same for the same reason: built from the same text.
import { getHeapStatistics } from 'node:v8'
import { freezeForGood } from '../k8s/derived.js'

/** An object is remembered by its bytes when what is built of it is at least this share of them, else by its text. */
export const WORTH_REMEMBERING = 1 / 8

/**
 * An entry used this recently stays: longer than any one sync takes, shorter than a parent's
 * resync period (45 s), so that what one parent last used makes way for what another asks for.
 */
export const RECENT_MS = 10_000
/** How stale an entry's place in the order may grow before a use moves it: one sync uses thousands. */
const REORDER_MS = 1_000

export interface Entry {
  /** The bytes the object was built from: its own, or (`byText`) the text kept of them. */
  readonly bytes: Buffer
  /** Whether `bytes` is the text kept of the object rather than the object's bytes. */
  readonly byText: boolean
  readonly built: unknown
  /** What the entry counts against the limit: its bytes and the text what was built came from. */
  readonly size: number
  used: number
}

export class ObjectMemo {
  private readonly entries = new Map<string, Entry>()
  private held = 0
  /** Lookups that gave an object built before, and lookups that did not, since the start. */
  hits = 0
  misses = 0

  constructor (private bytesLimit: number = defaultMemoLimit()) {}

  /** The bytes the memo may hold. */
  get limit (): number {
    return this.bytesLimit
  }

  /** Sets the bytes the memo may hold, dropping the least recently used entries past it; 0 turns it off. */
  resize (limit: number): void {
    this.bytesLimit = limit
    for (const [key, entry] of this.entries) {
      if (this.held <= limit) break
      this.entries.delete(key)
      this.held -= entry.size
    }
  }

  /** The bytes the memo holds, counted as `size` was given to `remember`. */
  get size (): number {
    return this.held
  }

  get count (): number {
    return this.entries.size
  }

  /**
   * The entry of the object under `key` when its bytes are those of `body` from `start` on (a
   * complete JSON value: equal bytes there are that value whole), else undefined.
   */
  recall (key: string, body: Buffer, start: number, now: number): Entry | undefined {
    const entry = this.entries.get(key)
    // An entry of kept text is looked up by recallText, once the object is walked.
    if (entry?.byText === true) return undefined
    const length = entry?.bytes.length ?? 0
    const end = start + length
    if (entry === undefined || end > body.length || body.compare(entry.bytes, 0, length, start, end) !== 0) {
      this.misses++
      return undefined
    }
    return this.used(key, entry, now)
  }

  /**
   * The entry under `key` of an object whose kept text is the bytes of `text` from `start` to
   * `end`, when it was remembered by that text, else undefined.
   */
  recallText (key: string, text: Buffer, start: number, end: number, now: number): Entry | undefined {
    const entry = this.entries.get(key)
    // No entry, or one by the object's bytes: recall, which looks first, counted the miss.
    if (entry === undefined || !entry.byText) return undefined
    const length = end - start
    if (entry.bytes.length !== length || text.compare(entry.bytes, 0, length, start, end) !== 0) {
      this.misses++
      return undefined
    }
    return this.used(key, entry, now)
  }

  private used (key: string, entry: Entry, now: number): Entry {
    this.hits++
    if (now - entry.used >= REORDER_MS) {
      // Last in the map's order: the map runs from the least recently used (to within REORDER_MS).
      this.entries.delete(key)
      this.entries.set(key, entry)
    }
    entry.used = now
    return entry
  }

  /**
   * Keeps what was built (`built`, frozen here) of the bytes of `body` from `start` to `end` under
   * `key`, if there is room; `textLength` is the length of the text it was built from. With
   * `byText` those bytes are that text (recallText finds the entry); else they are the object's
   * own (recall finds it). Which one is the projection's choice (worthRemembering).
   */
  remember (
    key: string, body: Buffer, start: number, end: number,
    built: unknown, textLength: number, now: number, byText = false
  ): void {
    const old = this.entries.get(key)
    if (old !== undefined) {
      this.entries.delete(key)
      this.held -= old.size
    }
    const size = end - start + textLength
    if (this.held + size > this.limit && !this.makeRoom(size, now)) return
    const bytes = Buffer.from(body.subarray(start, end))
    this.entries.set(key, { bytes, byText, built: freezeForGood(built), size, used: now })
    this.held += size
  }

  /** Drops the least recently used entries not used in RECENT_MS until `size` more bytes fit; whether they do. */
  private makeRoom (size: number, now: number): boolean {
    if (size > this.limit) return false
    for (const [key, entry] of this.entries) {
      if (this.held + size <= this.limit || now - entry.used < RECENT_MS) break
      this.entries.delete(key)
      this.held -= entry.size
    }
    return this.held + size <= this.limit
  }

  /** Whether anything more may be remembered now: room, or an entry that may make way. */
  hasRoom (now: number): boolean {
    if (this.held < this.limit) return true
    // The first entry in the order is the one that would make way.
    const first = this.entries.values().next()
    return first.done !== true && now - first.value.used >= RECENT_MS
  }

  clear (): void {
    this.entries.clear()
    this.held = 0
  }
}

/** Whether an object of `bytes` whose kept text is `textLength` long is worth its place in a memo. */
export function worthRemembering (bytes: number, textLength: number): boolean {
  return textLength >= bytes * WORTH_REMEMBERING
}

/** The memo's default limit in this process: memoLimitFor its heap limit. */
export function defaultMemoLimit (): number {
  return memoLimitFor(getHeapStatistics().heap_size_limit)
}

/** A sixteenth of the heap a process may grow to, at most 64 MiB. */
export function memoLimitFor (heapLimit: number): number {
  return Math.min(64 * 1024 * 1024, Math.floor(heapLimit / 16))
}
