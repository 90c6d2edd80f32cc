// A fake Kubernetes API server for read-only clients: GETs of objects and lists (with label
// selectors) from an in-memory set, over plain HTTP on 127.0.0.1; every request is recorded so a
// test can say what was asked. Anything but a GET is answered 405 (and recorded all the same).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { stringify } from 'yaml'
import type { KubeObject } from '../../src/k8s/types.js'
import { DEFAULT_RESOURCES } from '../../src/simulator/resources.js'
import { parseApiPath } from './api-path.js'

export interface SeenRequest {
  method: string
  url: string
  authorization?: string
}

export interface FakeApiServer {
  url: string
  requests: SeenRequest[]
  objects: KubeObject[]
  /** Paths answered 403, as RBAC would. */
  deny?: (url: string) => boolean
}

interface Teardown {
  teardown: (fn: () => unknown) => void
}

export const FAKE_TOKEN = 'preview-token'

/** Starts the server (stopped at the test's teardown) over a copy of `objects`. */
export async function fakeApiServer (t: Teardown, objects: KubeObject[]): Promise<FakeApiServer> {
  const fake: FakeApiServer = { url: '', requests: [], objects: structuredClone(objects) }
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const seen: SeenRequest = { method: req.method ?? '', url: req.url ?? '' }
    if (req.headers.authorization !== undefined) seen.authorization = req.headers.authorization
    fake.requests.push(seen)
    const [status, body] =
      seen.method !== 'GET'
        ? [405, failure(405, 'this fake API server only reads')]
        : fake.deny?.(seen.url) === true
          ? [403, failure(403, 'forbidden by the test')]
          : answer(fake.objects, new URL(seen.url, 'http://fake'))
    res.writeHead(status, { 'content-type': 'application/json' })
    res.end(JSON.stringify(body))
  })
  fake.url = await listenUntilTeardown(t, server)
  return fake
}

/** Listens on a free port of 127.0.0.1 until the test's teardown; the server's base URL. */
export async function listenUntilTeardown (t: Teardown, server: Server): Promise<string> {
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    server.closeAllConnections()
    await new Promise<void>(resolve => server.close(() => resolve()))
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** A kubeconfig file in `dir` for `server`, with a token user and, if given, a context namespace. */
export function kubeconfigFor (dir: string, server: string, namespace?: string): string {
  const file = join(dir, 'kubeconfig')
  writeFileSync(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'fake', cluster: { server, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'tester', user: { token: FAKE_TOKEN } }],
      contexts: [
        {
          name: 'fake',
          context: { cluster: 'fake', user: 'tester', ...(namespace !== undefined ? { namespace } : {}) }
        }
      ],
      'current-context': 'fake'
    })
  )
  return file
}

/** `/api/v1/namespaces/ns/pods/name`, `/apis/batch/v1/namespaces/ns/jobs?labelSelector=…`, `/api/v1/nodes`. */
function answer (objects: KubeObject[], url: URL): [number, unknown] {
  const { apiVersion, namespace, rest } = parseApiPath(url.pathname)
  const type = DEFAULT_RESOURCES.find(r => r.apiVersion === apiVersion && r.resource === rest[0])
  if (type === undefined || rest.length > 2) {
    return [404, failure(404, `the server could not find the requested resource (${url.pathname})`)]
  }
  const ofType = objects.filter(
    o =>
      o.apiVersion === type.apiVersion &&
      o.kind === type.kind &&
      (namespace === undefined || o.metadata.namespace === namespace)
  )
  if (rest.length === 2) {
    const found = ofType.find(o => o.metadata.name === rest[1])
    return found === undefined ? [404, failure(404, `${type.resource} "${rest[1] ?? ''}" not found`)] : [200, found]
  }
  const selector = url.searchParams.get('labelSelector') ?? ''
  // As a real list: items without apiVersion and kind.
  const items = ofType
    .filter(o => selects(selector, o.metadata.labels ?? {}))
    .map(({ apiVersion: _a, kind: _k, ...item }) => item)
  return [200, { apiVersion: type.apiVersion, kind: `${type.kind}List`, metadata: { resourceVersion: '1' }, items }]
}

/** The `kubectl get -l` syntax: `a=b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`, joined by commas. */
function selects (selector: string, labels: Record<string, string>): boolean {
  const terms = selector.split(/,(?![^(]*\))/).map(s => s.trim()).filter(s => s !== '')
  return terms.every(term => {
    let m: RegExpExecArray | null
    if ((m = /^(\S+) (in|notin) \(([^)]*)\)$/.exec(term)) !== null) {
      const values = (m[3] ?? '').split(',')
      const has = Object.hasOwn(labels, m[1] as string) && values.includes(labels[m[1] as string] as string)
      return m[2] === 'in' ? has : !has
    }
    if ((m = /^([^=!]+)!=(.*)$/.exec(term)) !== null) return labels[m[1] as string] !== m[2]
    if ((m = /^([^=!]+)==?(.*)$/.exec(term)) !== null) return labels[m[1] as string] === m[2]
    if (term.startsWith('!')) return !Object.hasOwn(labels, term.slice(1))
    return Object.hasOwn(labels, term)
  })
}

function failure (code: number, message: string): unknown {
  return { kind: 'Status', apiVersion: 'v1', status: 'Failure', message, code }
}
