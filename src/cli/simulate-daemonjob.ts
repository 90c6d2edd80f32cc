// What `npm run simulate` adds for DaemonJobs: the Nodes they run over (the manifest's own, a
// `--nodes` file, or a default set that shows an exclusion and a cordon), and the report of each
// DaemonJob: every Node with its Job's outcome, or why it got no Job, judged as the hook judges it.
import type { PodSpec } from 'kubernetes-types/core/v1.js'
import type { KubeObject } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'
import { parseDaemonJobSpec } from '../controllers/daemonjob/spec.js'
import { eligibilityCheck } from '../controllers/daemonjob/eligibility.js'
import { nodeJobName, podTemplate } from '../controllers/daemonjob/job.js'
import { simNode } from '../simulator/daemonjob.js'
import { namespacedName } from '../simulator/objects.js'
import type { Simulator } from '../simulator/simulator.js'
import { kubectlLines } from './simulate-reports.js'

/**
 * The Nodes when the manifest and `--nodes` give none: the reference example's `node1` and
 * `node2` (which it excludes), `node3`, and `node4` cordoned.
 */
export function defaultNodes (): KubeObject[] {
  return [simNode('node1'), simNode('node2'), simNode('node3'), simNode('node4', { cordoned: true })]
}

/** Node objects of a manifest, with what a kubelet would have given them (a Ready condition). */
export function asNodes (objects: KubeObject[]): KubeObject[] {
  return objects.filter(o => o.apiVersion === 'v1' && o.kind === 'Node').map(node => {
    const made = simNode(node.metadata.name, { labels: node.metadata.labels ?? {} })
    const labels = { ...made.metadata.labels, ...node.metadata.labels }
    const status = isRecord(node.status) ? node.status : made.status
    return { ...made, ...node, metadata: { ...made.metadata, ...node.metadata, labels }, status }
  })
}

/** The final phase and counts of a DaemonJob, and a row per Node: its Job's outcome, or why it has none. */
export function daemonJobReport (
  sim: Simulator, daemonJob: KubeObject, nodes: KubeObject[], time: (value: unknown) => string
): string[] {
  const status = isRecord(daemonJob.status) ? daemonJob.status : {}
  const phase = typeof status.phase === 'string' ? status.phase : 'unknown'
  const count = (key: string): number => (typeof status[key] === 'number' ? status[key] : 0)
  const at = typeof status.completionTime === 'string' ? ` at ${time(status.completionTime)}` : ''
  const counts = `${count('succeeded')}/${count('desired')} nodes succeeded, ${count('failed')} failed`
  const lines = [`${namespacedName(daemonJob.metadata)}  ${phase}${at} (${counts})`]
  if (typeof status.message === 'string') lines.push(`  ${status.message}`)
  const parsed = parseDaemonJobSpec(daemonJob)
  if (!parsed.ok) return [...lines, `  invalid: ${parsed.problems.join('; ')}`]
  const ineligible = eligibilityCheck(podTemplate(parsed.value).spec as PodSpec, parsed.value.excluded)
  const succeeded = new Set(Array.isArray(status.succeededNodes) ? status.succeededNodes : [])
  const failedNodes = Array.isArray(status.failedNodes) ? status.failedNodes : []
  const failed = new Map(failedNodes.filter(isRecord).map(f => [String(f.name), f]))
  const jobs = new Map(sim.listJobs(daemonJob.metadata.namespace).map(j => [j.metadata.name, j]))
  const rows = [['NODE', 'JOB', 'RESULT']]
  for (const node of [...nodes].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))) {
    const name = node.metadata.name
    const jobName = nodeJobName(daemonJob.metadata.name, name)
    const failure = failed.get(name)
    const result = succeeded.has(name)
      ? 'Succeeded'
      : failure !== undefined
        ? `Failed: ${String(failure.message ?? '')}` +
          `${failure.completionTime !== undefined ? ` (${time(failure.completionTime)})` : ''}`
        : jobs.has(jobName) ? 'Running' : undefined
    if (result !== undefined) rows.push([name, jobName, result])
    else rows.push([name, '-', `skipped: ${ineligible(node) ?? 'came after the DaemonJob finished'}`])
  }
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map(r => (r[i] ?? '').length))) ?? []
  for (const row of rows) lines.push(`  ${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd()}`)
  return [...lines, ...kubectlLines(sim, daemonJob, 'dj')]
}
