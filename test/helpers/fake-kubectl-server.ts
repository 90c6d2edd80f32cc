// The fake Kubernetes API server of the kubectl plugin, on the one fake of fake-api-server.ts:
// GETs of objects and lists (label and field selectors), JSON merge patches, creates (POST, a
// generateName made a name), watches that stay open and carry each change, and pod logs (followed
// or not). Every request is recorded with its body; answers say what a real API server says
// (Status with reason, `jobflows.jobhooks.io "x" not found`).
import type { ServerResponse } from 'node:http'
import type { KubeObject } from '../../src/k8s/types.js'
import { loadCrds } from '../../src/cli/printer-columns.js'
import { fakeApiServer, type SeenRequest as WireRequest } from './fake-api-server.js'
import { parseApiPath } from './api-path.js'

export interface SeenRequest { method: string, url: string, body?: unknown, contentType?: string }

interface Type { apiVersion: string, kind: string, plural: string, group: string }

export interface FakeKube {
  url: string
  requests: SeenRequest[]
  /** The same requests as they came over the wire, headers included. */
  wire: WireRequest[]
  objects: KubeObject[]
  /** Logs by `pod/container`. */
  logs: Map<string, string>
  /** Requests answered 403, as RBAC would. */
  deny?: (method: string, url: string) => boolean
  /** Replaces an object (or adds it) and tells every watch. */
  change: (object: KubeObject, type?: 'ADDED' | 'MODIFIED' | 'DELETED') => void
  /** Ends every open watch, as an API server does when a watch times out. */
  dropWatches: () => void
  /** Requests whose answer never comes (for the timeout). */
  hang?: (url: string) => boolean
}

const TYPES: Type[] = [
  ...loadCrds().map(c => ({ apiVersion: `${c.group}/${c.version}`, kind: c.kind, plural: c.plural, group: c.group })),
  { apiVersion: 'v1', kind: 'Pod', plural: 'pods', group: '' },
  { apiVersion: 'batch/v1', kind: 'Job', plural: 'jobs', group: 'batch' },
  { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', group: '' },
  { apiVersion: 'v1', kind: 'Node', plural: 'nodes', group: '' }
]

function status (res: ServerResponse, code: number, reason: string, message: string): void {
  res.writeHead(code, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason, code }))
}

function selects (selector: string, labels: Record<string, string>): boolean {
  return selector.split(',').filter(s => s !== '').every(term => {
    const [key = '', value] = term.split('=')
    return labels[key] === value
  })
}

interface Route { type: Type, namespace?: string, name?: string, sub?: string }

function route (path: string): Route | undefined {
  const { apiVersion, namespace, rest } = parseApiPath(path)
  const type = TYPES.find(t => t.apiVersion === apiVersion && t.plural === rest[0])
  if (type === undefined || rest.length > 3) return undefined
  return {
    type,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(rest[1] !== undefined ? { name: rest[1] } : {}),
    ...(rest[2] !== undefined ? { sub: rest[2] } : {})
  }
}

/** RFC 7386: null removes, objects merge, anything else replaces. */
function mergePatch (target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch
  const out: Record<string, unknown> = typeof target === 'object' && target !== null && !Array.isArray(target)
    ? { ...(target as Record<string, unknown>) }
    : {}
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key]
    else out[key] = mergePatch(out[key], value)
  }
  return out
}

const qualified = (type: Type): string => type.group === '' ? type.plural : `${type.plural}.${type.group}`

export async function fakeKube (t: { teardown: (fn: () => unknown) => void },
  objects: KubeObject[]): Promise<FakeKube> {
  let version = 100
  const watches = new Set<{ res: ServerResponse, matches: (o: KubeObject) => boolean }>()
  const fake: FakeKube = {
    url: '',
    requests: [],
    wire: [],
    objects: structuredClone(objects).map(o => ({
      ...o,
      metadata: {
        ...o.metadata,
        resourceVersion: String(++version)
      }
    })),
    logs: new Map(),
    change: (object, type = 'MODIFIED') => {
      const stored = { ...object, metadata: { ...object.metadata, resourceVersion: String(++version) } }
      const key = (o: KubeObject): string => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`
      fake.objects = fake.objects.filter(o => key(o) !== key(stored))
      if (type !== 'DELETED') fake.objects.push(stored)
      for (const watch of watches) {
        if (watch.matches(stored)) watch.res.write(`${JSON.stringify({ type, object: stored })}\n`)
      }
    },
    dropWatches: () => {
      for (const watch of watches) watch.res.end()
      watches.clear()
    }
  }
  const server = await fakeApiServer(t, (request, res) => {
    const seen: SeenRequest = { method: request.method, url: request.url }
    if (request.body !== '') seen.body = JSON.parse(request.body)
    if (request.headers['content-type'] !== undefined) seen.contentType = request.headers['content-type']
    fake.requests.push(seen)
    if (fake.hang?.(seen.url) === true) return 'hang'
    answer(fake, seen, res, watches)
    return 'handled'
  })
  fake.url = server.url
  fake.wire = server.requests
  return fake
}

function answer (
  fake: FakeKube, seen: SeenRequest, res: ServerResponse,
  watches: Set<{ res: ServerResponse, matches: (o: KubeObject) => boolean }>
): void {
  const url = new URL(seen.url, 'http://fake')
  const found = route(url.pathname)
  if (found === undefined) return status(res, 404, 'NotFound', 'the server could not find the requested resource')
  const { type, namespace, name, sub } = found
  if (fake.deny?.(seen.method, seen.url) === true) {
    const verb = { PATCH: 'patch', POST: 'create' }[seen.method] ?? (name === undefined ? 'list' : 'get')
    return status(res, 403, 'Forbidden', `${qualified(type)}${name !== undefined ? ` "${name}"` : ''} is forbidden: ` +
      `User "tester" cannot ${verb} resource "${type.plural}" in API group "${type.group}" in the namespace ` +
      `"${namespace ?? ''}"`)
  }
  const ofType = fake.objects.filter(o =>
    o.kind === type.kind && (namespace === undefined || o.metadata.namespace === namespace))
  if (seen.method === 'POST' && name === undefined) return create(fake, type, namespace, seen.body, res)
  if (name === undefined) {
    const labels = url.searchParams.get('labelSelector') ?? ''
    const field = (url.searchParams.get('fieldSelector') ?? '').replace(/^metadata\.name=/, '')
    const matches = (o: KubeObject): boolean => o.kind === type.kind &&
      (namespace === undefined || o.metadata.namespace === namespace) &&
      selects(labels, o.metadata.labels ?? {}) && (field === '' || o.metadata.name === field)
    if (url.searchParams.get('watch') === '1') {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.flushHeaders()
      const watch = { res, matches }
      watches.add(watch)
      res.on('close', () => watches.delete(watch))
      return
    }
    const items = ofType.filter(matches).map(({ apiVersion: _a, kind: _k, ...item }) => item)
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({
      apiVersion: type.apiVersion,
      kind: `${type.kind}List`,
      metadata: { resourceVersion: '999' },
      items
    }))
    return
  }
  const object = ofType.find(o => o.metadata.name === name)
  if (object === undefined) return status(res, 404, 'NotFound', `${qualified(type)} "${name}" not found`)
  if (sub === 'log') return log(fake, res, name, url)
  if (seen.method === 'PATCH') fake.change(mergePatch(object, seen.body) as KubeObject)
  res.writeHead(200, { 'content-type': 'application/json' })
  res.end(JSON.stringify(fake.objects.find(o => o.kind === type.kind && o.metadata.name === name)))
}

/**
 * A POST to a collection, as the API server takes it: the namespace of the path, a name made of
 * generateName (five characters added, here counted rather than random), 409 for a name taken.
 */
function create (fake: FakeKube, type: Type, namespace: string | undefined, body: unknown, res: ServerResponse): void {
  const object = body as KubeObject
  const meta = object.metadata ?? {}
  if (meta.namespace !== undefined && meta.namespace !== namespace) {
    return status(res, 400, 'BadRequest',
      'the namespace of the provided object does not match the namespace sent on the request')
  }
  const generated = typeof meta.generateName === 'string'
    ? `${meta.generateName}${String(fake.objects.length).padStart(5, 'x')}`
    : undefined
  const name = meta.name ?? generated
  if (name === undefined) return status(res, 422, 'Invalid', 'name or generateName is required')
  if (fake.objects.some(o => o.kind === type.kind && o.metadata.namespace === namespace && o.metadata.name === name)) {
    return status(res, 409, 'AlreadyExists', `${qualified(type)} "${name}" already exists`)
  }
  fake.change({ ...object, metadata: { ...meta, name, ...(namespace !== undefined ? { namespace } : {}) } }, 'ADDED')
  res.writeHead(201, { 'content-type': 'application/json' })
  res.end(JSON.stringify(fake.objects.find(o => o.kind === type.kind && o.metadata.name === name)))
}

function log (fake: FakeKube, res: ServerResponse, pod: string, url: URL): void {
  const text = fake.logs.get(`${pod}/${url.searchParams.get('container') ?? ''}`)
  if (text === undefined) {
    status(res, 400, 'BadRequest', `container "${url.searchParams.get('container') ?? ''}" in pod "${pod}" has no log`)
    return
  }
  res.writeHead(200, { 'content-type': 'text/plain' })
  res.write(text)
  // A followed log stays open, as the kubelet's does while the container runs.
  if (url.searchParams.get('follow') !== 'true') res.end()
}
