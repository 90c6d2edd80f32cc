// What the fixtures of every kind build on: stable uids from a seed, times the way the API server
// writes them, a deterministic PRNG, a Pods-related sync request, and a check of a childless answer.
import { createHash } from 'node:crypto'
import { timestamp } from '../src/k8s/time.js'
import type { KubeObject } from '../src/k8s/types.js'

/** A stable, UUID-shaped uid from a seed, as the API server would have assigned once. */
export function fixtureUid (seed: string): string {
  const h = createHash('sha1').update(seed).digest('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`
}

/** A stable, UUID-shaped uid from a seed (sha256), for the fixtures of the other kinds. */
export function seededUid (seed: string): string {
  const h = createHash('sha256').update(seed).digest('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`
}

/**
 * The sync request of a parent without children whose related objects are Pods, keyed as
 * Metacontroller v2 keys them. A JSON round trip makes it exactly what arrives over the wire.
 */
export function podsRelatedRequest (
  controller: unknown,
  parent: KubeObject,
  pods: KubeObject[]
): {
    controller: unknown
    parent: KubeObject
    children: Record<string, never>
    related: Record<string, Record<string, KubeObject>>
    finalizing: boolean
  } {
  return JSON.parse(
    JSON.stringify({
      controller,
      parent,
      children: {},
      related: {
        'Pod.v1': Object.fromEntries(pods.map((p) => [`${p.metadata.namespace ?? ''}/${p.metadata.name}`, p])),
      },
      finalizing: false,
    })
  )
}

/** The status of a sync answer of a kind without children, with each of `keys` as expected; throws otherwise. */
export function childlessStatus<T extends object> (
  response: unknown,
  kind: string,
  expected: T,
  keys: ReadonlyArray<keyof T & string>
): Record<string, unknown> {
  const answer = response as { status?: Record<string, unknown>; children?: unknown[] }
  const status = answer?.status
  if (status === undefined || !Array.isArray(answer.children)) {
    throw new Error('not a sync answer: no status or children')
  }
  if (answer.children.length !== 0) throw new Error(`an ${kind} has no children, got ${answer.children.length}`)
  for (const key of keys) {
    if (status[key] !== expected[key]) {
      throw new Error(`status.${key} is ${JSON.stringify(status[key])}, expected ${JSON.stringify(expected[key])}`)
    }
  }
  return status
}

/** RFC 3339 in seconds, the way the API server writes times. */
export function k8sTime (ms: number): string {
  return timestamp(new Date(ms))
}

/** A small deterministic PRNG (mulberry32), so the DAG is the same on every run (and a test's random JSON). */
export function prng (seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
