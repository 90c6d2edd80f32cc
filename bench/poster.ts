// The client of a timed sync, in a worker thread of its own (bench/poster-worker.ts): Metacontroller
// is another process, so the server's thread pays only for reading the request and writing its
// answer. Used by bench/kinds.ts and bench/jobflow-size.ts.
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { packageRoot } from '../src/scripts/library.js'
import type { PosterData, PosterMessage, PosterReply } from './poster-worker.js'

/** The client's worker, as `npm run bench` compiles it (like bench/scale.ts's service, dist/bench/serve.js). */
const POSTER_WORKER = join(packageRoot(), 'dist', 'bench', 'poster-worker.js')

/**
 * The client of one target, in its worker thread (bench/poster-worker.ts): one call at a time,
 * each answered by the worker's next message.
 */
export class Poster {
  private readonly worker: Worker
  private pending: { resolve: (reply: PosterReply) => void; reject: (error: Error) => void } | undefined
  private failure: Error | undefined

  constructor (url: URL, body: Buffer, variant: Buffer) {
    this.worker = new Worker(POSTER_WORKER, { workerData: { url: url.href, body, variant } satisfies PosterData })
    this.worker.on('message', (reply: PosterReply) => {
      const pending = this.pending
      this.pending = undefined
      pending?.resolve(reply)
    })
    this.worker.on('error', (error) => {
      this.fail(error)
    })
    this.worker.on('exit', (code) => {
      this.fail(new Error(`the client's worker exited (code ${code})`))
    })
  }

  private fail (error: Error): void {
    this.failure ??= error
    const pending = this.pending
    this.pending = undefined
    pending?.reject(error)
  }

  private async call (message: PosterMessage): Promise<PosterReply> {
    if (this.failure !== undefined) throw this.failure
    if (this.pending !== undefined) throw new Error('one call at a time')
    return await new Promise((resolve, reject) => {
      this.pending = { resolve, reject }
      this.worker.postMessage(message)
    })
  }

  /** One POST (of the variant, when `variant`); resolves with the answer's bytes. */
  async fetch (variant = false): Promise<Buffer> {
    const reply = await this.call({ type: 'fetch', variant })
    if ('error' in reply) throw new Error(reply.error)
    if (!('answer' in reply)) throw new Error("the client's worker gave no answer's bytes")
    return Buffer.from(reply.answer.buffer, reply.answer.byteOffset, reply.answer.byteLength)
  }

  /** The bytes every later answer must be. */
  expect (answer: Buffer): void {
    this.worker.postMessage({ type: 'expect', answer } satisfies PosterMessage)
  }

  /** One POST (of the variant, when `variant`), timed by the worker; whether its answer was the expected bytes. */
  async sync (variant = false): Promise<{ ms: number; same: boolean }> {
    const reply = await this.call({ type: 'sync', variant })
    if ('error' in reply) throw new Error(reply.error)
    if (!('same' in reply)) throw new Error("the client's worker did not compare the answer")
    return reply
  }

  async close (): Promise<void> {
    this.failure ??= new Error('the client is closed')
    await this.worker.terminate()
  }
}
