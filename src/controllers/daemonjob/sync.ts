// The DaemonJob sync hook: from the observed DaemonJob, its Jobs and the cluster's Nodes to one
// Job per eligible node and the status that counts them. Pure: no I/O; the clock only stamps
// times that are then carried forward.
import type { PodSpec } from 'kubernetes-types/core/v1.js'
import type { HookContext, SyncRequest, SyncResponse } from '../../protocol/hooks.js'
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { fitName } from '../../k8s/names.js'
import { byName, groupKey, keepAllObserved, keepAsObserved, objectsOf } from '../../k8s/objects.js'
import { resolveScripts, runScriptInPod, scriptsConfigMap } from '../../scripts/configmap.js'
import { validityConditions } from '../common/validity.js'
import { scriptsConfigMapChildren } from '../common/job-spec.js'
import { outcomeCondition, runTimes } from '../common/completion.js'
import { earliestWake, jobTtlDecision, type JobTtlDecision } from '../common/job-ttl.js'
import { jobFinishTime, jobOutcome } from '../../k8s/jobs.js'
import { parseDaemonJobSpec } from './spec.js'
import { eligibilityCheck } from './eligibility.js'
import { DAEMONJOB_LABEL, nodeJobBuilder, nodeOfJob, podTemplate } from './job.js'
import { countNodes, memoryStatus, observeNodes, readMemory, type Counts, type NodeRecord } from './records.js'

export type DaemonJobPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Invalid'

export const NODE_GROUP = groupKey('Node', 'v1')
/** How many ineligible nodes a message names before it only counts the rest. */
const NAMED_IN_MESSAGE = 10

/** The Nodes Metacontroller sent, or undefined when it sent no Node group at all. */
function relatedNodes (request: SyncRequest): KubeObject[] | undefined {
  if (!isRecord(request.related?.[NODE_GROUP])) return undefined
  return objectsOf(request.related, 'Node', 'v1')
}

export function syncDaemonJob (request: SyncRequest, context: HookContext): SyncResponse {
  const { parent } = request
  const now = context.now
  const previous = isRecord(parent.status) ? parent.status : {}
  const observedJobs = objectsOf(request.children, 'Job', 'batch/v1')
  const memory = readMemory(previous, parent.metadata.name)
  const records = observeNodes(observedJobs, memory, now)
  // A DaemonJob that finished stays finished: nodes that come later get no Job.
  const finished = typeof previous.completionTime === 'string'

  const parsed = parseDaemonJobSpec(parent)
  if (!parsed.ok) return keepEverything(request, previous, records, finished, parsed.problems, now)
  const spec = parsed.value

  let scripts: KubeObject | undefined
  if (!finished && spec.script !== undefined) {
    const resolved = resolveScripts([spec.script.name], spec.scripts, context.scripts)
    const trial = podTemplate(spec).spec as PodSpec
    const problems = [...resolved.problems, ...[runScriptInPod(trial, 'check', spec.script)].filter((p): p is string => p !== undefined)]
    if (problems.length > 0) return keepEverything(request, previous, records, finished, problems.map(p => `spec.script: ${p}`), now)
    scripts = scriptsConfigMap(parent.metadata.name, parent.metadata.namespace, { [DAEMONJOB_LABEL]: fitName(parent.metadata.name) }, resolved.scripts)
  }

  // Every node without a Job or an outcome gets its Job, if it is eligible and we are not done.
  const nodes = relatedNodes(request)
  const toCreate: string[] = []
  // Only the first few ineligible nodes are named in a message; the rest are counted.
  const ineligible: Ineligible = { named: [], count: 0 }
  const pod = podTemplate(spec).spec as PodSpec
  if (!finished) {
    const ineligibility = eligibilityCheck(pod, spec.excluded)
    for (const node of nodes ?? []) {
      const reason = ineligibility(node)
      if (reason !== undefined) {
        if (ineligible.count++ < NAMED_IN_MESSAGE) ineligible.named.push(`${node.metadata.name}: ${reason}`)
      } else if (!records.has(node.metadata.name)) toCreate.push(node.metadata.name)
    }
  }

  // A finished Job goes once its TTL has passed and the observed status holds its outcome.
  const decisions = new Map<KubeObject, JobTtlDecision>(observedJobs.map(job => [job, ttlDecision(job, memory, now)]))
  const keptJobs = observedJobs.filter(job => decisions.get(job)?.drop !== true)
  const children = keptJobs.map(keepAsObserved)
  const build = nodeJobBuilder(parent, spec, scripts?.metadata.name)
  for (const node of toCreate) {
    const job = build(node)
    if (typeof job === 'string') return keepEverything(request, previous, records, finished, [`spec.script: ${job}`], now)
    children.push(job)
  }
  children.sort(byName)
  for (const configMap of scriptsConfigMapChildren(keptJobs, scripts, request.children)) children.push(configMap)

  const counts = countNodes(records, toCreate.length)
  const phase = daemonJobPhase(counts, records, finished, nodes !== undefined)
  const message = finished ? undefined : statusMessage(counts, records, nodes, ineligible, selectorWords(pod))
  const status: Record<string, unknown> = {
    phase,
    ...(message !== undefined ? { message } : {}),
    ...counts,
    ...runTimes(previous, counts.desired > 0, phase === 'Succeeded' || phase === 'Failed', now),
    ...memoryStatus(records),
    conditions: outcomeCondition(validityConditions(previous.conditions, [], now), phase, succeeded => outcome(succeeded, counts, records), now)
  }
  const ttlWake = earliestWake(decisions.values())
  return ttlWake === undefined ? { status, children } : { status, children, resyncAfterSeconds: ttlWake }
}

/** A node's finished Job under its TTL (common/job-ttl.ts), judged by what the observed status remembers of that node. */
function ttlDecision (job: KubeObject, memory: Map<string, NodeRecord>, now: Date): JobTtlDecision {
  const outcome = jobOutcome(job)
  const remembered = memory.get(nodeOfJob(job) ?? job.metadata.name)
  const recorded = outcome !== undefined && remembered?.jobName === job.metadata.name && remembered.phase === outcome
  return jobTtlDecision(job, recorded ? jobFinishTime(job) ?? remembered.completionTime : undefined, now)
}

/**
 * Finished once every node that got a Job has an outcome: Failed if any failed, else Succeeded.
 * Never with no node at all (it waits for one), and never without knowing the Nodes.
 */
function daemonJobPhase (counts: Counts, records: Map<string, NodeRecord>, finished: boolean, nodesKnown: boolean): DaemonJobPhase {
  if (finished) return counts.failed > 0 ? 'Failed' : 'Succeeded'
  if (counts.desired === 0) return 'Pending'
  if (counts.active === 0 && nodesKnown) return counts.failed > 0 ? 'Failed' : 'Succeeded'
  return records.size > 0 ? 'Running' : 'Pending'
}

/** Why an unfinished DaemonJob waits, when that is not just its Jobs running. */
interface Ineligible {
  /** `<node>: <reason>` for the first NAMED_IN_MESSAGE ineligible nodes, in node order. */
  named: string[]
  /** How many nodes are ineligible. */
  count: number
}

/**
 * The pod's nodeSelector as `k=v, …`, or undefined without one. Customize asks Metacontroller
 * only for the Nodes with those labels, so the others are never seen here.
 */
function selectorWords (pod: PodSpec): string | undefined {
  const entries = Object.entries(pod.nodeSelector ?? {})
  return entries.length === 0 ? undefined : entries.map(([key, value]) => `${key}=${value}`).join(', ')
}

function statusMessage (counts: Counts, records: Map<string, NodeRecord>, nodes: KubeObject[] | undefined, ineligible: Ineligible, selector: string | undefined): string | undefined {
  if (nodes === undefined) {
    return 'Metacontroller sent no Nodes (no related Node.v1 group): the DaemonJob controller\'s customize hook must be registered; no new Job is created until Nodes arrive'
  }
  if (counts.desired === 0) {
    if (nodes.length === 0) {
      return selector !== undefined
        ? `no eligible node: no Node has the labels of the nodeSelector (${selector}); waiting for nodes`
        : 'no eligible node: Metacontroller sent no Nodes (related Node.v1 is empty; a namespaced DaemonJob receives Nodes only from hooks registered with version v2); waiting for nodes'
    }
    const named = ineligible.named.join('; ')
    const more = ineligible.count > NAMED_IN_MESSAGE ? `; and ${ineligible.count - NAMED_IN_MESSAGE} more` : ''
    return `no eligible node among ${nodes.length}: ${named}${more}; waiting for nodes`
  }
  // Only the nodes of running Jobs matter here: a set of those, not of every Node.
  const present = new Set<string>()
  for (const node of nodes) if (records.get(node.metadata.name)?.phase === 'Running') present.add(node.metadata.name)
  const lost: string[] = []
  for (const record of records.values()) if (record.phase === 'Running' && !present.has(record.name)) lost.push(record.name)
  if (lost.length > 0) {
    const where = selector !== undefined ? `nodes that no longer exist or no longer have the labels of the nodeSelector (${selector})` : 'nodes that no longer exist'
    return `Jobs wait on ${where}: ${lost.join(', ')}; they end by their activeDeadlineSeconds or when deleted`
  }
  return undefined
}

/** Why a finished DaemonJob ended as it did, for its `Complete` or `Failed` condition. */
function outcome (succeeded: boolean, counts: Counts, records: Map<string, NodeRecord>): { reason: string, message: string } {
  if (succeeded) return { reason: 'AllNodesSucceeded', message: `the Jobs of ${counts.succeeded} of ${counts.desired} nodes succeeded` }
  const failed = [...records.values()].filter(r => r.phase === 'Failed')
  const named = failed.slice(0, NAMED_IN_MESSAGE).map(r => `${r.name}: ${r.message ?? 'failed'}`).join('; ')
  const more = failed.length > NAMED_IN_MESSAGE ? `; and ${failed.length - NAMED_IN_MESSAGE} more` : ''
  return { reason: 'NodeJobFailed', message: `the Jobs of ${counts.failed} of ${counts.desired} nodes failed: ${named}${more}` }
}

/**
 * The answer to a spec we cannot act on (law 2): every observed child exactly as it is, the
 * previous status with the problems in `Valid` and phase `Invalid`, and the memory of finished
 * Jobs brought up to date with what we observe.
 */
function keepEverything (request: SyncRequest, previous: Record<string, unknown>, records: Map<string, NodeRecord>, finished: boolean, problems: string[], now: Date): SyncResponse {
  const counts = countNodes(records, 0)
  const { message: _message, ...rest } = previous
  const phase: DaemonJobPhase = finished ? (counts.failed > 0 ? 'Failed' : 'Succeeded') : 'Invalid'
  return {
    status: { ...rest, phase, ...counts, ...memoryStatus(records), conditions: validityConditions(previous.conditions, problems, now) },
    children: keepAllObserved(request.children)
  }
}
