// The client of bench/kinds.ts, in a worker thread of its own: Metacontroller is another process,
// so writing a request of up to 70 MiB into the socket and reading the answer must not run on the
// server's thread, which should pay only for reading the request and writing its answer.
//
// One worker serves one target (one kind at one size): it is given the URL and the request's
// bytes once (workerData), posts them once per message, one call at a time, with a keep-alive
// agent of one socket, as Metacontroller's Go client does, and times the call itself. Messages:
// - { type: 'fetch' }: post, and answer { ms, answer } with the answer's bytes (to be checked by
//   the fixture on the main thread);
// - { type: 'expect', answer }: the bytes every later answer must be, byte for byte; no reply;
// - { type: 'sync', variant? }: post (the variant's bytes when `variant`), compare the answer
//   with the expected bytes chunk by chunk as it arrives, without keeping it, and answer
//   { ms, same }.
// The variant is the same request with a share of its objects changed where no hook reads
// (bench/kinds.ts): the same answer, other bytes.
// Anything but 200 (or a failed call) is answered { error }.
import http from 'node:http'
import { performance } from 'node:perf_hooks'
import { parentPort, workerData } from 'node:worker_threads'

export interface PosterData {
  url: string
  body: Uint8Array
  variant: Uint8Array
}

export type PosterMessage =
  { type: 'fetch'; variant?: boolean } | { type: 'expect'; answer: Uint8Array } | { type: 'sync'; variant?: boolean }

export type PosterReply = { ms: number; answer: Uint8Array } | { ms: number; same: boolean } | { error: string }

/** A Buffer over the same bytes: what crosses threads arrives as a plain Uint8Array. */
function buffer (bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

interface Answer {
  ms: number
  /** The answer's bytes, when no expected bytes were given. */
  bytes?: Buffer
  /** Whether the answer was the expected bytes, when they were given. */
  same?: boolean
}

/**
 * POSTs `body`, timed from the request to the answer's last byte. Without `expected`, resolves
 * with the answer's bytes; with it, compares the answer with `expected` as it arrives, without
 * keeping it. Anything but 200 is an error.
 */
async function post (url: URL, agent: http.Agent, body: Buffer, expected: Buffer | undefined): Promise<Answer> {
  return await new Promise((resolve, reject) => {
    const start = performance.now()
    const request = http.request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': body.length } },
      (response) => {
        const chunks: Buffer[] = []
        let at = 0
        let same = true
        response.on('data', (chunk: Buffer) => {
          if (response.statusCode !== 200 || expected === undefined) chunks.push(chunk)
          else {
            same &&= at + chunk.length <= expected.length && chunk.equals(expected.subarray(at, at + chunk.length))
            at += chunk.length
          }
        })
        response.on('error', reject)
        response.on('end', () => {
          const ms = performance.now() - start
          if (response.statusCode !== 200) {
            const text = Buffer.concat(chunks).toString('utf8', 0, 300)
            reject(new Error(`HTTP ${response.statusCode ?? '?'}: ${text}`))
          } else if (expected === undefined) resolve({ ms, bytes: Buffer.concat(chunks) })
          else resolve({ ms, same: same && at === expected.length })
        })
      }
    )
    request.on('error', reject)
    request.end(body)
  })
}

if (parentPort !== null) {
  const port = parentPort
  const data = workerData as PosterData
  const url = new URL(data.url)
  const body = buffer(data.body)
  const variant = buffer(data.variant)
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  let expected: Buffer | undefined
  port.on('message', (message: PosterMessage) => {
    if (message.type === 'expect') {
      expected = buffer(message.answer)
      return
    }
    const want = message.type === 'sync' ? expected : undefined
    if (message.type === 'sync' && want === undefined) {
      port.postMessage({ error: 'a sync before the expected answer was given' } satisfies PosterReply)
      return
    }
    post(url, agent, message.variant === true ? variant : body, want).then(
      (answer) =>
        port.postMessage(
          (answer.bytes !== undefined
            ? { ms: answer.ms, answer: answer.bytes }
            : { ms: answer.ms, same: answer.same === true }) satisfies PosterReply
        ),
      (error: unknown) =>
        port.postMessage({ error: error instanceof Error ? error.message : String(error) } satisfies PosterReply)
    )
  })
}
