// The hook thread (src/thread/hook-thread.ts): an app of its own that reads the sync and finalize
// calls handed to it, as the service's app would (the wire, the same handlers), and answers each
// with its serialised bytes. What a call needs of the service's app, its turn in the work queue
// and its effects applied, it asks for by message: the queue and the executor stay there.
import { parentPort, workerData, type MessagePort } from 'node:worker_threads'
import type { FastifyInstance } from 'fastify'
import { createFastify } from './app.js'
import type { HandedOver } from './plugins/wire.js'
import { metricsPlugin } from './plugins/metrics.js'
import { callsPlugin, type HookCall } from './plugins/calls.js'
import { addHookHandlers, type CallPorts, type HookRouteConfig } from './plugins/hook-handlers.js'
import type { KindHooks } from './protocol/hooks.js'
import type { EffectOutcome } from './effects/types.js'
import {
  CALL_HEADER, handOver, type AnswerMessage, type CallMessage, type FromThread, type MemoReport,
  type ThreadSetup, type ToThread
} from './thread/messages.js'

/** What the thread waits for from the service's app, by call, and each call's record as its answer goes. */
class Calls {
  /** The bodies handed over, until the wire takes them (src/plugins/wire.ts). */
  readonly bodies = new Map<number, Buffer>()
  readonly turns = new Map<number, (refused: string | undefined) => void>()
  readonly applied = new Map<number, (outcomes: EffectOutcome[]) => void>()
  readonly records = new Map<number, HookCall>()

  constructor (private readonly port: MessagePort) {}

  send (message: FromThread, transfer: ArrayBuffer[] = []): void {
    this.port.postMessage(message, transfer)
  }

  close (): void {
    this.port.close()
  }

  /** The wire's way to the bodies handed over: each taken once, and the app told once it is built. */
  handedOver (): HandedOver {
    return {
      take: request => {
        const id = callId(request.headers)
        const body = this.bodies.get(id)
        this.bodies.delete(id)
        return body
      },
      built: request => { this.send({ type: 'built', id: callId(request.headers) }) }
    }
  }

  /** The ports of the handlers: each question goes to the service's app, and waits for its answer. */
  ports (): CallPorts {
    return {
      turn: async (request, _reply, _call, cost) => {
        const id = callId(request.headers)
        return await new Promise<string | undefined>(resolve => {
          this.turns.set(id, resolve)
          this.send({ type: 'turn', id, cost })
        })
      },
      apply: async (request, _call, parent, effects) => {
        // Most syncs ask for none: no message.
        if (effects.length === 0) return []
        const id = callId(request.headers)
        return await new Promise<EffectOutcome[]>(resolve => {
          this.applied.set(id, resolve)
          this.send({ type: 'apply', id, ...(parent !== undefined ? { parent } : {}), effects })
        })
      }
    }
  }
}

const callId = (headers: Record<string, unknown>): number => Number(headers[CALL_HEADER])

async function buildThreadApp (setup: ThreadSetup, calls: Calls): Promise<FastifyInstance> {
  const kinds = (await import(setup.kindsModule) as Record<string, readonly KindHooks[]>)[setup.kindsExport]
  if (!Array.isArray(kinds)) throw new Error(`${setup.kindsModule} exports no kinds as ${setup.kindsExport}`)
  const logger = setup.logLevel === undefined
    ? false
    : { level: setup.logLevel, stream: { write: (line: string) => { calls.send({ type: 'log', line }) } } }
  const app = createFastify({
    logger,
    handedOver: calls.handedOver(),
    bodyLimit: setup.bodyLimit,
    ...(setup.memoBytes !== undefined ? { memoBytes: setup.memoBytes } : {}),
    ...(setup.keepWhole !== undefined ? { keepWhole: setup.keepWhole } : {})
  })
  const fixed = setup.now !== undefined ? new Date(setup.now) : undefined
  await app.register(metricsPlugin)
  // The call's log line and metrics are the service's app's: it is told the outcome with the answer.
  await app.register(callsPlugin, { kinds, log: false })
  app.addHook('onRequest', async request => {
    const { kind, hook } = (request.routeOptions.config as unknown as HookRouteConfig).call
    request.hookCall = { kind, hook, outcome: 'ok' }
  })
  app.addHook('onSend', async request => {
    if (request.hookCall !== undefined) calls.records.set(callId(request.headers), request.hookCall)
  })
  addHookHandlers(app, {
    kinds,
    scripts: new Map(setup.scripts),
    clock: () => fixed ?? new Date(),
    pinnable: setup.effectsMode === 'dry-run',
    bodyLimit: setup.bodyLimit,
    ports: calls.ports(),
    hooks: ['sync', 'finalize']
  })
  await app.ready()
  return app
}

/**
 * Answers one call: the app reads it as a request of its own, its body the one handed over, where
 * it lies (the request's own stream carries a placeholder), and its answer goes back whole.
 */
async function answer (app: FastifyInstance, calls: Calls, message: CallMessage): Promise<void> {
  const { id, url, headers, body } = message
  if ('bytes' in body) {
    calls.bodies.set(id, bufferOf(body.bytes))
  } else {
    // The skip runs on the memory where the app's thread read the body; without it, the slower one.
    app.wire.wasm.adopt(body.memory)
    calls.bodies.set(id, Buffer.from(body.memory.buffer, body.offset, body.length))
  }
  const named = { ...headers, [CALL_HEADER]: String(id) }
  const response = await withBodySeen(calls.bodies.get(id)?.length ?? 0, async () =>
    await app.inject({ method: 'POST', url, headers: named, payload: PLACEHOLDER }))
  const call = calls.records.get(id)
  calls.records.delete(id)
  const { bytes, transfer } = handOver(response.rawPayload)
  const answered: AnswerMessage = {
    type: 'answer',
    id,
    statusCode: response.statusCode,
    headers: pick(response.headers, ['content-type', 'retry-after']),
    body: bytes,
    memo: memoFigures(app),
    ...(call !== undefined ? { outcome: call.outcome } : {}),
    ...(call?.parent !== undefined ? { parent: call.parent } : {})
  }
  calls.send(answered, transfer)
}

/**
 * Runs `work` with V8 told of a body of `bytes` as if this thread had allocated it: it schedules
 * its collections by the memory it sees allocated, and a body read on the app's thread is memory
 * it never sees, so the garbage of the syncs before stayed (at 15,000 Nodes, 65 MiB more at the
 * peak). An ArrayBuffer never written is counted at its size and takes no page of memory.
 */
async function withBodySeen<T> (bytes: number, work: () => Promise<T>): Promise<T> {
  const seen: { buffer?: ArrayBuffer } = bytes >= SEEN_MIN_BYTES ? { buffer: new ArrayBuffer(bytes) } : {}
  try {
    return await work()
  } finally {
    delete seen.buffer
  }
}

/** Bodies smaller than this are not worth telling V8 about. */
const SEEN_MIN_BYTES = 1024 * 1024

function pick (headers: Record<string, unknown>, names: readonly string[]): Record<string, string> {
  const picked: Record<string, string> = {}
  for (const name of names) if (headers[name] !== undefined) picked[name] = String(headers[name])
  return picked
}

function memoFigures (app: FastifyInstance): MemoReport {
  const { size, count, limit, hits, misses } = app.wire.memo
  return { size, count, limit, hits, misses }
}

/** What the service's app says: a call, the answers to the thread's questions, a ping, close. */
function receive (app: FastifyInstance, calls: Calls, message: ToThread): void {
  switch (message.type) {
    case 'call':
      void answer(app, calls, message)
      break
    case 'turn':
      calls.turns.get(message.id)?.(message.refused)
      calls.turns.delete(message.id)
      break
    case 'applied':
      calls.applied.get(message.id)?.(message.outcomes)
      calls.applied.delete(message.id)
      break
    case 'ping':
      calls.send({ type: 'pong', memo: memoFigures(app) })
      break
    case 'close':
      void app.close().then(() => { calls.close() })
  }
}

/** What the request's own stream carries: the wire reads the body handed over instead. */
const PLACEHOLDER = '{}'

const bufferOf = (view: Uint8Array): Buffer => Buffer.from(view.buffer, view.byteOffset, view.byteLength)

async function main (port: MessagePort, setup: ThreadSetup): Promise<void> {
  const calls = new Calls(port)
  const app = await buildThreadApp(setup, calls)
  port.on('message', (message: ToThread) => { receive(app, calls, message) })
  calls.send({ type: 'ready', memo: memoFigures(app) })
}

if (parentPort === null) throw new Error('src/thread-main.ts runs as a worker thread only')
await main(parentPort, workerData as ThreadSetup)
