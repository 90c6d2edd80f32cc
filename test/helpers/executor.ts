// A fake API server that records every request the cluster executor sends, and the effects and
// parents the executor tests send through it (test/effects/executor-*.test.ts).
import type { Test } from 'tap'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { KubeConfig } from '@kubernetes/client-node'
import { ClusterExecutor, type ClusterExecutorOptions } from '../../src/effects/executor.js'
import type { Effect, ObjectRef } from '../../src/effects/types.js'
import { FAKE_TOKEN, kubeconfigFor, listenUntilTeardown } from './fake-apiserver.js'

export interface Seen {
  method: string
  url: string
  headers: IncomingMessage['headers']
  body: string
}

/** What the fake answers: a status and a body, or `hang` to never answer. */
export type Answer = { status: number; body?: unknown; delayMs?: number } | 'hang'

export interface FakeApi {
  url: string
  /** Every write (the effects). */
  requests: Seen[]
  /** Every read (the parents confirmed). */
  reads: Seen[]
  /** Most requests the fake had in flight at once. */
  maxInFlight: number
}

export const TOKEN = FAKE_TOKEN

/** The API server's copy of a parent: the one named, with the UID `uid-<name>`, as the effects here make them. */
export const knownParent = (request: Seen): Answer => ({
  status: 200,
  body: {
    kind: 'EphemeralJob',
    metadata: { name: request.url.split('/').pop(), uid: `uid-${request.url.split('/').pop() ?? ''}` }
  }
})

export async function fakeApi (
  t: Test,
  answer: (request: Seen) => Answer = () => ({ status: 200, body: {} }),
  read: (request: Seen) => Answer = knownParent
): Promise<FakeApi> {
  const fake: FakeApi = { url: '', requests: [], reads: [], maxInFlight: 0 }
  let inFlight = 0
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    inFlight++
    fake.maxInFlight = Math.max(fake.maxInFlight, inFlight)
    let body = ''
    req.on('data', chunk => {
      body += String(chunk)
    })
    req.on('end', () => {
      const seen: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body }
      const reply = seen.method === 'GET' ? read(seen) : answer(seen)
      ;(seen.method === 'GET' ? fake.reads : fake.requests).push(seen)
      if (reply === 'hang') {
        res.on('close', () => {
          inFlight--
        })
        return
      }
      setTimeout(() => {
        inFlight--
        const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body ?? {})
        res.writeHead(reply.status, {
          'content-type': typeof reply.body === 'string' ? 'text/plain' : 'application/json'
        })
        res.end(text)
      }, reply.delayMs ?? 0)
    })
  })
  fake.url = await listenUntilTeardown(t, server)
  return fake
}

export function executorFor (t: Test, server: string, options: Partial<ClusterExecutorOptions> = {}): ClusterExecutor {
  const kubeConfig = new KubeConfig()
  kubeConfig.loadFromFile(kubeconfigFor(t.testdir({}), server))
  return new ClusterExecutor(kubeConfig, { concurrency: 8, budgetMs: 5000, ...options })
}

export const pod = (name: string, uid = `uid-${name}`): ObjectRef => ({
  apiVersion: 'v1',
  kind: 'Pod',
  namespace: 'team-a',
  name,
  uid
})
export const inject = (name: string, uid?: string): Effect => ({
  type: 'InjectEphemeralContainers',
  target: pod(name, uid),
  containers: [
    { name: 'debug', image: 'busybox:1.36', targetContainerName: 'app', env: [{ name: 'ephemeraljob', value: 'ej' }] }
  ]
})
export const deleteEjob = (name: string): Effect => ({
  type: 'Delete',
  target: { apiVersion: 'jobhooks.io/v1alpha1', kind: 'EphemeralJob', namespace: 'team-a', name, uid: `uid-${name}` }
})
export const status = (code: number, message: string) => ({
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  message,
  code
})
/** The parent of the syncs here: an EphemeralJob in team-a. */
export const PARENT: ObjectRef = {
  apiVersion: 'jobhooks.io/v1alpha1',
  kind: 'EphemeralJob',
  namespace: 'team-a',
  name: 'ej',
  uid: 'uid-ej'
}
/** The parent whose sync asks for `effects`: the EphemeralJob a Delete removes (its TTL), else PARENT. */
export const parentOf = (effects: Effect[]): ObjectRef => effects.find(e => e.type === 'Delete')?.target ?? PARENT
