// The DaemonJob sync hook: from the observed DaemonJob, its Jobs and the cluster's Nodes to one
// Job per eligible node and the status that counts them. Pure: no I/O; the clock only stamps
// times that are then carried forward. DaemonJob needs nothing that Metacontroller cannot do: no
// effects.
import type { PodSpec } from 'kubernetes-types/core/v1.js'
import type { HookContext, SyncAnswer, SyncRequest, SyncResponse } from '../../protocol/hooks.js'
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { fitName } from '../../k8s/names.js'
import { byName, groupKey, keepAllObserved, keepAsObserved, objectsOf } from '../../k8s/objects.js'
import { resolveScripts, runScriptInPod, scriptsConfigMap } from '../../scripts/configmap.js'
import { invalidSpecAnswer, validityConditions } from '../common/validity.js'
import { scriptsConfigMapChildren } from '../common/job-spec.js'
import { outcomeCondition, runTimes } from '../common/completion.js'
import { earliestWake, jobTtlDecision, type JobTtlDecision } from '../common/job-ttl.js'
import { parseDaemonJobSpec, type DaemonJobSpec } from './spec.js'
import { eligibilityCheck } from './eligibility.js'
import { nodeJobFigures } from './answer-size.js'
import { answerSizeProblems } from '../common/answer-size.js'
import { DAEMONJOB_LABEL, nodeJobBuilder, nodeOfJob, podTemplate } from './job.js'
import { jobOutcome } from '../../k8s/jobs.js'
import { defaultFailurePolicy, type FailurePolicy } from './policies.js'
import { firstFailed, holdMessage, startNow, stopUnfinished, type Hold } from './hold.js'
import {
  countNodes, countsStatus, isUnfinished, memoryStatus, observeNodes, readRecords, type Counts, type NodeRecord
} from './records.js'

export type DaemonJobPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Invalid'

export const NODE_GROUP = groupKey('Node', 'v1')
/** How many ineligible nodes a message names before it only counts the rest. */
const NAMED_IN_MESSAGE = 10

/**
 * What one sync works from, read once from the request (as the Kubernetes Job controller's
 * syncJobCtx): the helpers below read it and never change it.
 */
interface DaemonJobSync {
  request: SyncRequest
  parent: KubeObject
  now: Date
  previous: Record<string, unknown>
  observedJobs: KubeObject[]
  /** What the previous status remembers, by node. */
  memory: Map<string, NodeRecord>
  /** Every node's record: what its observed Job says, or what the status remembers. */
  records: Map<string, NodeRecord>
  /** A DaemonJob that finished stays finished: nodes that come later get no Job. */
  finished: boolean
  /** The Nodes Metacontroller sent, or undefined when it sent no Node group at all. */
  nodes: KubeObject[] | undefined
  /** The failurePolicy while the spec sets none, recorded at the first sync (policies.ts). */
  defaultFailurePolicy: 'FailFast' | 'Continue'
}

function observe (request: SyncRequest, now: Date): DaemonJobSync {
  const { parent } = request
  const previous = isRecord(parent.status) ? parent.status : {}
  const observedJobs = objectsOf(request.children, 'Job', 'batch/v1')
  const memory = readRecords(previous, parent.metadata.name)
  const nodes = isRecord(request.related?.[NODE_GROUP]) ? objectsOf(request.related, 'Node', 'v1') : undefined
  return {
    request,
    parent,
    now,
    previous,
    observedJobs,
    memory,
    records: observeNodes(observedJobs, memory, now),
    finished: typeof previous.completionTime === 'string',
    nodes,
    defaultFailurePolicy: defaultFailurePolicy(previous)
  }
}

/** Why an unfinished DaemonJob waits, when that is not just its Jobs running. */
interface Ineligible {
  /** `<node>: <reason>` for the first NAMED_IN_MESSAGE ineligible nodes, in node order. */
  named: string[]
  /** How many nodes are ineligible. */
  count: number
}

/** The nodes this sync creates a Job for, those not eligible for one, and what holds the others back. */
interface NodeChoice {
  toCreate: string[]
  ineligible: Ineligible
  hold: Hold
  /** A FailFast DaemonJob whose node's Job failed: it fails now and stops its unfinished Jobs. */
  failing: boolean
  /** completionPolicy Never: it never finishes. */
  never: boolean
}

/** observe → check the script → choose the nodes → build the Jobs → render. */
export function syncDaemonJob (request: SyncRequest, context: HookContext): SyncAnswer {
  const observed = observe(request, context.now)
  const parsed = parseDaemonJobSpec(observed.parent)
  if (!parsed.ok) return invalid(observed, parsed.problems)
  const spec = parsed.value
  const scripts = scriptsFor(observed, spec, context)
  if (Array.isArray(scripts)) return invalid(observed, scripts)
  const pod = podTemplate(spec).spec as PodSpec
  const choice = chooseNodes(observed, pod, spec)
  const failed = firstFailed(observed.records)
  // FailFast, as BroadcastJob: once a node's Job failed, the unfinished ones stop and say why.
  const sync = choice.failing && failed !== undefined
    ? { ...observed, records: stopUnfinished(observed.records, failed, observed.now) }
    : observed
  // A finished Job goes once its TTL has passed and the observed status holds its outcome; a Job
  // FailFast stopped (its node recorded Failed, the Job itself without an outcome) goes at once.
  const decisions = new Map<KubeObject, JobTtlDecision>(sync.observedJobs.map(job => [job, ttlDecision(sync, job)]))
  const keptJobs = sync.observedJobs.filter(job => decisions.get(job)?.drop !== true && !wasStopped(sync, job))
  const children = keptJobs.map(keepAsObserved)
  const build = nodeJobBuilder(sync.parent, spec, scripts?.metadata.name)
  for (const node of choice.toCreate) {
    const job = build(node)
    if (typeof job === 'string') return invalid(sync, [`spec.script: ${job}`])
    // The first Job measures them all: over the size budget, no other is built.
    if (node === choice.toCreate[0]) {
      const oversize = answerSizeProblems(nodeJobFigures(spec, job, choice.toCreate.length, keptJobs.length))
      if (oversize.length > 0) return invalid(sync, oversize)
    }
    children.push(job)
  }
  children.sort(byName)
  for (const configMap of scriptsConfigMapChildren(keptJobs, scripts, request.children)) children.push(configMap)
  const status = renderStatus(sync, choice, pod)
  const ttlWake = earliestWake(decisions.values())
  const response: SyncResponse = ttlWake === undefined
    ? { status, children }
    : {
        status,
        children,
        resyncAfterSeconds: ttlWake
      }
  return { response, effects: [] }
}

/**
 * The scripts ConfigMap of an unfinished DaemonJob with a script, or the problems that make its
 * script unusable.
 */
function scriptsFor (
  sync: DaemonJobSync,
  spec: DaemonJobSpec,
  context: HookContext
): KubeObject | undefined | string[] {
  if (sync.finished || spec.script === undefined) return undefined
  const resolved = resolveScripts([spec.script.name], spec.scripts, context.scripts)
  const trial = podTemplate(spec).spec as PodSpec
  const unrunnable = runScriptInPod(trial, 'check', spec.script)
  const problems = unrunnable === undefined ? resolved.problems : [...resolved.problems, unrunnable]
  if (problems.length > 0) return problems.map(p => `spec.script: ${p}`)
  const { name, namespace } = sync.parent.metadata
  return scriptsConfigMap(name, namespace, { [DAEMONJOB_LABEL]: fitName(name) }, resolved.scripts)
}

/**
 * Every eligible node without a Job or an outcome gets its Job unless we are done or a policy
 * holds it back (hold.ts): paused, nodeParallelism, or a failure under FailFast or Pause.
 */
function chooseNodes (sync: DaemonJobSync, pod: PodSpec, spec: DaemonJobSpec): NodeChoice {
  const { policies } = spec
  const failurePolicy: FailurePolicy = policies.failurePolicy ?? sync.defaultFailurePolicy
  const never = policies.completionPolicy === 'Never'
  const failing = !sync.finished && failurePolicy === 'FailFast' && firstFailed(sync.records) !== undefined
  const choice: NodeChoice = { toCreate: [], ineligible: { named: [], count: 0 }, hold: { waiting: 0 }, failing, never }
  if (sync.finished || failing) return choice
  const ineligibility = eligibilityCheck(pod, spec.excluded)
  const { ineligible } = choice
  const candidates: string[] = []
  for (const node of sync.nodes ?? []) {
    const reason = ineligibility(node)
    if (reason !== undefined) {
      // Only the first few ineligible nodes are named in a message; the rest are counted.
      if (ineligible.count++ < NAMED_IN_MESSAGE) ineligible.named.push(`${node.metadata.name}: ${reason}`)
    } else if (!sync.records.has(node.metadata.name)) candidates.push(node.metadata.name)
  }
  const { start, hold } = startNow(candidates, sync.records, policies, failurePolicy)
  // In the order the Nodes came, as before the policies: only which of them start is new.
  const starting = new Set(start)
  choice.toCreate = candidates.filter(node => starting.has(node))
  choice.hold = hold
  return choice
}

/** A Job FailFast stopped: its node is recorded Failed while the Job itself has no outcome. */
function wasStopped (sync: DaemonJobSync, job: KubeObject): boolean {
  return sync.records.get(nodeOfJob(job) ?? job.metadata.name)?.phase === 'Failed' && jobOutcome(job) === undefined
}

/** A node's finished Job under its TTL, judged by what the observed status remembers of that node. */
function ttlDecision (sync: DaemonJobSync, job: KubeObject): JobTtlDecision {
  return jobTtlDecision(job, sync.memory.get(nodeOfJob(job) ?? job.metadata.name), sync.now)
}

/**
 * `status.defaultFailurePolicy`, written only as FailFast: without it a DaemonJob that has a phase
 * runs with Continue (policies.ts). So a version that does not know the field, dropping it while
 * two versions serve, leaves nothing to write back and fight over (law 5): the DaemonJob goes on
 * with Continue, the safe side.
 */
function recordedDefault (sync: DaemonJobSync): { defaultFailurePolicy?: 'FailFast' } {
  return sync.defaultFailurePolicy === 'FailFast' ? { defaultFailurePolicy: 'FailFast' } : {}
}

function renderStatus (sync: DaemonJobSync, choice: NodeChoice, pod: PodSpec): Record<string, unknown> {
  const { records, finished, previous, now } = sync
  const counts = countNodes(records, choice.toCreate.length)
  const phase = daemonJobPhase(counts, records, finished, sync.nodes !== undefined, choice)
  const message = finished || phase === 'Failed' ? undefined : statusMessage(sync, counts, choice, selectorWords(pod))
  const describe = (succeeded: boolean): { reason: string, message: string } => outcome(succeeded, counts, records)
  return {
    phase,
    ...(message !== undefined ? { message } : {}),
    ...countsStatus(counts),
    ...(choice.hold.waiting > 0 ? { waiting: choice.hold.waiting } : {}),
    ...recordedDefault(sync),
    ...runTimes(previous, counts.desired > 0, phase === 'Succeeded' || phase === 'Failed', now),
    ...memoryStatus(records),
    conditions: outcomeCondition(validityConditions(previous.conditions, [], now), phase, describe, now)
  }
}

/**
 * Finished once every node that got a Job has an outcome and no eligible node waits for one:
 * Failed if any failed, else Succeeded; under FailFast, Failed as soon as one failed. Never with
 * no node at all (it waits for one), never without knowing the Nodes, never with completionPolicy Never.
 */
function daemonJobPhase (
  counts: Counts,
  records: Map<string, NodeRecord>,
  finished: boolean,
  nodesKnown: boolean,
  choice: NodeChoice
): DaemonJobPhase {
  if (finished) return counts.failed > 0 ? 'Failed' : 'Succeeded'
  if (choice.failing) return 'Failed'
  if (counts.desired === 0) return 'Pending'
  const settled = counts.active === 0 && counts.queued === 0 && choice.hold.waiting === 0
  if (settled && nodesKnown && !choice.never) return counts.failed > 0 ? 'Failed' : 'Succeeded'
  return records.size > 0 ? 'Running' : 'Pending'
}

/**
 * The pod's nodeSelector as `k=v, …`, or undefined without one. Customize asks Metacontroller
 * only for the Nodes with those labels, so the others are never seen here.
 */
function selectorWords (pod: PodSpec): string | undefined {
  const entries = Object.entries(pod.nodeSelector ?? {})
  return entries.length === 0 ? undefined : entries.map(([key, value]) => `${key}=${value}`).join(', ')
}

const NO_NODE_GROUP = 'Metacontroller sent no Nodes (no related Node.v1 group): the DaemonJob controller\'s ' +
  'customize hook must be registered; no new Job is created until Nodes arrive'
const NO_NODES = 'no eligible node: Metacontroller sent no Nodes (related Node.v1 is empty; a namespaced ' +
  'DaemonJob receives Nodes only from hooks registered with version v2); waiting for nodes'

/** What holds Jobs back, then why the DaemonJob waits otherwise, in one message. */
function statusMessage (
  sync: DaemonJobSync,
  counts: Counts,
  choice: NodeChoice,
  selector: string | undefined
): string | undefined {
  if (sync.nodes === undefined) return NO_NODE_GROUP
  const held = holdMessage(choice.hold)
  const waits = held === undefined || counts.desired > 0
    ? waitMessage(sync, counts, choice.ineligible, selector)
    : undefined
  const idle = choice.never && counts.active === 0 && counts.queued === 0 && held === undefined && counts.desired > 0
  const parts = [held, waits, idle ? 'completionPolicy Never: waiting for nodes that join' : undefined]
  const message = parts.filter(part => part !== undefined).join('; ')
  return message === '' ? undefined : message
}

function waitMessage (
  sync: DaemonJobSync,
  counts: Counts,
  ineligible: Ineligible,
  selector: string | undefined
): string | undefined {
  const { records } = sync
  const nodes = sync.nodes ?? []
  if (counts.desired === 0) {
    if (nodes.length === 0) {
      return selector !== undefined
        ? `no eligible node: no Node has the labels of the nodeSelector (${selector}); waiting for nodes`
        : NO_NODES
    }
    const named = ineligible.named.join('; ')
    const more = ineligible.count > NAMED_IN_MESSAGE ? `; and ${ineligible.count - NAMED_IN_MESSAGE} more` : ''
    return `no eligible node among ${nodes.length}: ${named}${more}; waiting for nodes`
  }
  // Only the nodes of unfinished Jobs matter here: a set of those, not of every Node.
  const present = new Set<string>()
  for (const node of nodes) if (isUnfinished(records.get(node.metadata.name))) present.add(node.metadata.name)
  const lost: string[] = []
  for (const record of records.values()) if (isUnfinished(record) && !present.has(record.name)) lost.push(record.name)
  if (lost.length === 0) return undefined
  const where = selector !== undefined
    ? `nodes that no longer exist or no longer have the labels of the nodeSelector (${selector})`
    : 'nodes that no longer exist'
  return `Jobs wait on ${where}: ${lost.join(', ')}; they end by their activeDeadlineSeconds or when deleted`
}

/** Why a finished DaemonJob ended as it did, for its `Complete` or `Failed` condition. */
function outcome (
  succeeded: boolean,
  counts: Counts,
  records: Map<string, NodeRecord>
): { reason: string, message: string } {
  if (succeeded) {
    return {
      reason: 'AllNodesSucceeded',
      message: `the Jobs of ${counts.succeeded} of ${counts.desired} nodes succeeded`
    }
  }
  const failed = [...records.values()].filter(r => r.phase === 'Failed')
  const named = failed.slice(0, NAMED_IN_MESSAGE).map(r => `${r.name}: ${r.message ?? 'failed'}`).join('; ')
  const more = failed.length > NAMED_IN_MESSAGE ? `; and ${failed.length - NAMED_IN_MESSAGE} more` : ''
  return {
    reason: 'NodeJobFailed',
    message: `the Jobs of ${counts.failed} of ${counts.desired} nodes failed: ${named}${more}`
  }
}

/**
 * The answer to a spec we cannot act on (law 2, common/validity.ts): every observed child exactly
 * as it is, the previous status with phase `Invalid`, and the memory of finished Jobs brought up
 * to date with what we observe.
 */
function invalid (sync: DaemonJobSync, problems: string[]): SyncAnswer {
  const { previous, records } = sync
  const counts = countNodes(records, 0)
  const { message: _message, queued: _queued, ...rest } = previous
  const { waiting: _waiting, ...kept } = rest
  const phase: DaemonJobPhase = sync.finished ? (counts.failed > 0 ? 'Failed' : 'Succeeded') : 'Invalid'
  const status = {
    ...kept,
    phase,
    ...countsStatus(counts),
    ...recordedDefault(sync),
    ...memoryStatus(records)
  }
  return invalidSpecAnswer(previous, { status, children: keepAllObserved(sync.request.children), problems }, sync.now)
}
