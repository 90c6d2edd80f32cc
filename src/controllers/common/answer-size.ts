// Answers within a size budget (docs/security.md#answer-size). A spec multiplies bytes: a Job
// template times a fan-out's items, a DaemonJob's template times the nodes, a CollaSet's Pod
// times its replicas. A tenant's 1 MB env value times 400 nodes is an answer the process dies
// building, so the size is estimated from the spec before any child is built, and a spec over a
// limit is invalid (law 2: every observed child kept, nothing new created).
import type { PodSpec } from 'kubernetes-types/core/v1.js'
import { allContainers } from '../../scripts/configmap.js'
import { isRecord } from '../../k8s/types.js'

const KIB = 1024
const MIB = 1024 * KIB

/**
 * The most one child may weigh: etcd's default request limit (`--max-request-bytes`, 1.5 MiB).
 * The API server reads up to 3 MiB of a request, but etcd refuses the object past this, so a
 * bigger child could never be created: Metacontroller would fail on it at every sync.
 */
export const MAX_CHILD_BYTES = 1.5 * MIB

/**
 * The most an answer may weigh. Metacontroller v4.17.2 reads a hook's answer whole, with no limit
 * of its own (`io.ReadAll`), so the bound is ours: with the Deployment's 384 MiB heap, an answer
 * is held as objects and as its JSON at once, beside the request. The largest legal answers
 * measured (10,000 fan-out items) are under 9 MiB: this leaves them seven times their size.
 */
export const MAX_ANSWER_BYTES = 64 * MIB

/** Bytes besides the template that every generated child carries: its metadata, names, labels. */
export const CHILD_OVERHEAD_BYTES = 512

/** Children alike that an answer would hold: `count` of about `bytes` each. */
export interface ChildFigure {
  /** What they are: `Jobs of step "fan"`, `Jobs (one per node)`, `Pods`. */
  what: string
  /** What they multiply by, singular: `item`, `node`, `Pod`. */
  per: string
  /** How many this answer would create. */
  count: number
  /** About how many bytes one weighs, the largest of them. */
  bytes: number
  /** About how many bytes they weigh together: `bytes × count` unless they differ. */
  total: number
  /** What makes one's bytes, for the message: `globalParams.env 195 KiB × 1 container`. */
  parts: string[]
}

/** The observed children an answer keeps beside the new ones: the count, and their bytes where known. */
export interface KeptChildren {
  count: number
  bytes: number
}

/** The children an answer would create, by kind of child, and the observed ones it keeps. */
export interface AnswerFigures {
  figures: ChildFigure[]
  kept: KeptChildren
}

/** `195 KiB`, `1.5 MiB`, `391 MiB`: binary units, as the limits are stated. */
export function formatBytes (bytes: number): string {
  if (bytes < KIB) return `${bytes} B`
  const [value, unit] = bytes < MIB ? [bytes / KIB, 'KiB'] : [bytes / MIB, 'MiB']
  const shown = value < 10 ? Math.round(value * 10) / 10 : Math.round(value)
  return `${shown.toLocaleString('en-US')} ${unit}`
}

function plural (count: number, noun: string): string {
  const nouns = count === 1 ? noun : noun.endsWith('child') ? `${noun}ren` : `${noun}s`
  return `${count.toLocaleString('en-US')} ${nouns}`
}

/** `2,000 Jobs of step "fan" of about 195 KiB (globalParams.env 195 KiB × 1 container, …) each`. */
function describe (figure: ChildFigure): string {
  const parts = figure.parts.length > 0 ? ` (${figure.parts.join(', ')})` : ''
  const alike = figure.total >= figure.bytes * figure.count
  const each = alike ? formatBytes(figure.bytes) : `up to ${formatBytes(figure.bytes)}`
  return `${figure.what}: ${each}${parts} × ${plural(figure.count, figure.per)}`
}

/**
 * What is wrong with an answer of these children: a child over MAX_CHILD_BYTES, or all of them
 * with the kept ones over MAX_ANSWER_BYTES. The message names the product that makes it. An answer
 * that creates nothing is never refused: it holds only what the request brought.
 */
export function answerSizeProblems ({ figures, kept }: AnswerFigures): string[] {
  const creating = figures.filter(f => f.count > 0)
  if (creating.length === 0) return []
  const problems: string[] = []
  for (const figure of creating) {
    if (figure.bytes > MAX_CHILD_BYTES) {
      const parts = figure.parts.length > 0 ? ` (${figure.parts.join(', ')})` : ''
      problems.push(`${figure.what} would weigh about ${formatBytes(figure.bytes)} each${parts}, over the ` +
        `limit of ${formatBytes(MAX_CHILD_BYTES)} for one object (etcd's): the API server could never create one`)
    }
  }
  const built = creating.reduce((sum, f) => sum + f.total, 0)
  const total = built + kept.bytes
  if (total > MAX_ANSWER_BYTES) {
    const largest = [...creating].sort((a, b) => b.total - a.total)
    const others = largest.length > 1 ? `, and ${plural(largest.length - 1, 'more group')} of new children` : ''
    const keptWords = kept.count > 0 ? `, beside ${plural(kept.count, 'observed child')} kept` : ''
    problems.push(`the answer would be about ${formatBytes(total)} (${describe(largest[0] as ChildFigure)}` +
      `${others}${keptWords}), over the limit of ${formatBytes(MAX_ANSWER_BYTES)} for an answer`)
  }
  return problems
}

/** How many containers (init containers too) a pod's env and mounts are copied into. */
export function containerCount (pod: PodSpec | undefined): number {
  return pod === undefined || !Array.isArray(pod.containers) ? 0 : allContainers(pod).length
}

/**
 * The parts of a pod-carrying child's bytes worth naming, largest first: its template, and the
 * global env copied into each container.
 */
export function podParts (templateBytes: number, globalEnvBytes: number, containers: number): string[] {
  const parts: Array<[number, string]> = [[templateBytes, `template ${formatBytes(templateBytes)}`]]
  if (globalEnvBytes > 0) {
    parts.push([globalEnvBytes * containers,
      `globalParams.env ${formatBytes(globalEnvBytes)} × ${plural(containers, 'container')}`])
  }
  return parts.sort((a, b) => b[0] - a[0]).map(([, words]) => words)
}

/** The JSON length of what a spec copies into children, 0 for nothing (an empty list or map too): a template, env. */
export function specBytes (value: unknown): number {
  if (value === undefined || value === null) return 0
  if (Array.isArray(value) ? value.length === 0 : isRecord(value) && Object.keys(value).length === 0) return 0
  return JSON.stringify(value).length
}

/** How many containers (init containers too) a pod template written in a spec has, as read from JSON. */
export function templateContainers (template: unknown): number {
  const spec = isRecord(template) && isRecord(template.spec) ? template.spec : undefined
  const count = (list: unknown): number => (Array.isArray(list) ? list.length : 0)
  return spec === undefined ? 0 : count(spec.containers) + count(spec.initContainers)
}

/**
 * About how much `count` children of a pod template weigh, each a copy of the template with the
 * global env in each container: the figure a caller can have from a spec without reading it.
 */
export function copiesBytes (template: unknown, globalEnv: unknown, count: number): number {
  if (count <= 0) return 0
  const each = specBytes(template) + specBytes(globalEnv) * templateContainers(template) + CHILD_OVERHEAD_BYTES
  return each * count
}
