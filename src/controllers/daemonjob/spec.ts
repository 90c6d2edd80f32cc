// Reading a DaemonJob's spec: a JobSpec inline under `spec` (as job-deploy-operator embeds it),
// plus the fields of our own. Problems are collected, never thrown (law 2).
import type { JobSpec } from 'kubernetes-types/batch/v1.js'
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { parseGlobalParams, type GlobalParams } from '../common/global-params.js'
import { jobSpecProblems } from '../common/job-spec.js'
import type { Parsed } from '../common/parsed.js'
import { parseInlineScripts, parseScriptRef, type ScriptRef } from '../../scripts/configmap.js'
import { affinityProblems } from './eligibility.js'
import { parseQueue, type QueueSpec } from '../common/queue.js'
import { unknownJobSpecFields, unknownModelFields } from '../../k8s/job-spec-check.js'
import { parsePolicies, type Policies } from './policies.js'

/**
 * The fields under `spec` that are ours; the others are the JobSpec of every node's Job, and a
 * field that is neither is refused (k8s/job-spec-check.ts), as the CRD's schema refuses it.
 */
export const DAEMONJOB_FIELDS = [
  'globalParams', 'excludeNodeList', 'script', 'scripts', 'queueName', 'priorityClassName',
  'nodeParallelism', 'failurePolicy', 'paused', 'completionPolicy'
] as const

export interface DaemonJobSpec extends QueueSpec {
  /** The JobSpec every Job starts from (never changed: Jobs are built from copies). */
  job: JobSpec
  globalParams: GlobalParams
  /** Node names from `excludeNodeList`. */
  excluded: ReadonlySet<string>
  script?: ScriptRef
  scripts: Record<string, string>
  /** BroadcastJob's policies: nodeParallelism, failurePolicy, paused, completionPolicy. */
  policies: Policies
}

export function parseDaemonJobSpec (parent: KubeObject): Parsed<DaemonJobSpec> {
  const spec = parent.spec
  if (!isRecord(spec)) return { ok: false, problems: ['spec is missing'] }
  const problems: string[] = unknownJobSpecFields(spec, 'spec', DAEMONJOB_FIELDS)

  const job = Object.fromEntries(
    Object.entries(spec).filter(([key]) => !(DAEMONJOB_FIELDS as readonly string[]).includes(key))
  ) as unknown as JobSpec
  if (!isRecord(spec.template)) problems.push('spec.template (the pod template of every Job) is missing')
  else {
    problems.push(...jobSpecProblems(job, 'spec'))
    if (isRecord(job.template.spec)) problems.push(...affinityProblems(job.template.spec, 'spec.template.spec'))
  }

  const globalParams = parseGlobalParams(spec.globalParams, problems)
  globalParams.env.forEach((env, i) => {
    problems.push(...unknownModelFields(env, 'V1EnvVar', `spec.globalParams.env[${i}]`))
  })
  const excluded = parseExcludeNodeList(spec.excludeNodeList, problems)
  const queue = parseQueue(spec, 'spec', problems)
  const policies = parsePolicies(spec, problems)

  let script: ScriptRef | undefined
  if (spec.script !== undefined && spec.script !== null) {
    const parsed = parseScriptRef(spec.script, 'spec')
    if (typeof parsed === 'string') problems.push(parsed)
    else script = parsed
  }
  const scripts = parseInlineScripts(spec.scripts)
  if (Array.isArray(scripts)) problems.push(...scripts)

  if (problems.length > 0) return { ok: false, problems }
  return {
    ok: true,
    value: {
      job,
      globalParams,
      excluded,
      ...queue,
      ...(script !== undefined ? { script } : {}),
      scripts: scripts as Record<string, string>,
      policies
    }
  }
}

/** `"node-1, node-2"`: names separated by commas, blanks around them ignored, empty entries dropped. */
export function parseExcludeNodeList (value: unknown, problems: string[]): Set<string> {
  if (value === undefined || value === null) return new Set()
  if (typeof value !== 'string') {
    problems.push('spec.excludeNodeList must be one string of node names separated by commas (e.g. "node-1, ' +
      `node-2"), not ${Array.isArray(value) ? 'a list' : typeof value}`)
    return new Set()
  }
  return new Set(value.split(',').map(name => name.trim()).filter(name => name !== ''))
}
