// The one fake API server (fake-api-server.ts) as the executor tests use it: every request the
// cluster executor sends, reads and writes apart, and the effects and parents the tests send
// through it (test/effects/executor-*.test.ts).
import type { Test } from 'tap'
import { KubeConfig } from '@kubernetes/client-node'
import { ClusterExecutor, type ClusterExecutorOptions } from '../../src/effects/executor.js'
import type { Effect, ObjectRef } from '../../src/effects/types.js'
import { FAKE_TOKEN, fakeApiServer, kubeconfigFor, type Reply, type SeenRequest } from './fake-api-server.js'

export type Seen = SeenRequest

/** What the fake answers: a status and a body, or `hang` to never answer. */
export type Answer = Exclude<Reply, 'handled'>

export interface FakeApi {
  url: string
  /** Every write (the effects). */
  requests: Seen[]
  /** Every read (the parents confirmed). */
  reads: Seen[]
  /** Most requests the fake had in flight at once. */
  readonly maxInFlight: number
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

/** The one fake API server (fake-api-server.ts), its reads answered by `read` and its writes by `answer`. */
export async function fakeApi (
  t: Test,
  answer: (request: Seen) => Answer = () => ({ status: 200, body: {} }),
  read: (request: Seen) => Answer = knownParent
): Promise<FakeApi> {
  const reads: Seen[] = []
  const requests: Seen[] = []
  const server = await fakeApiServer(t, seen => {
    ;(seen.method === 'GET' ? reads : requests).push(seen)
    return seen.method === 'GET' ? read(seen) : answer(seen)
  })
  return {
    url: server.url,
    requests,
    reads,
    get maxInFlight () { return server.maxInFlight }
  }
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
