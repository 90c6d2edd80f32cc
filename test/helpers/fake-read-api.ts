// A fake Kubernetes API server for read-only clients (the live preview), on the one fake of
// fake-api-server.ts: GETs of objects and lists (with label selectors) from an in-memory set;
// every request is recorded so a test can say what was asked. Anything but a GET is answered 405
// (and recorded all the same).
import type { KubeObject } from '../../src/k8s/types.js'
import { DEFAULT_RESOURCES } from '../../src/simulator/resources.js'
import { parseApiPath } from './api-path.js'
import { failure, fakeApiServer, type SeenRequest } from './fake-api-server.js'

export { FAKE_TOKEN, kubeconfigFor } from './fake-api-server.js'

export interface FakeReadApi {
  url: string
  requests: SeenRequest[]
  objects: KubeObject[]
  /** Paths answered 403, as RBAC would. */
  deny?: (url: string) => boolean
}

interface Teardown {
  teardown: (fn: () => unknown) => void
}

/** Starts the server (stopped at the test's teardown) over a copy of `objects`. */
export async function fakeReadApi (t: Teardown, objects: KubeObject[]): Promise<FakeReadApi> {
  const fake: FakeReadApi = { url: '', requests: [], objects: structuredClone(objects) }
  const server = await fakeApiServer(t, seen => {
    const [status, body] =
      seen.method !== 'GET'
        ? [405, failure(405, 'this fake API server only reads')]
        : fake.deny?.(seen.url) === true
          ? [403, failure(403, 'forbidden by the test')]
          : answer(fake.objects, new URL(seen.url, 'http://fake'))
    return { status, body }
  })
  fake.url = server.url
  fake.requests = server.requests
  return fake
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
