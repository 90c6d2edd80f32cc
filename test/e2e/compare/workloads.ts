// The same work written twice, as a JobFlow and as an Argo Workflow (a DAG of container templates,
// Argo's defaults), for test/e2e/compare/argo.bench.ts: every pod runs busybox `sleep 3`, which kwok
// plays as Running at once and Succeeded 3 s later for a Job's pod and a Workflow's alike
// (test/e2e/kwok-stages.yaml). Neither pins its pods to a node: both go through the scheduler.
// A workload is a sequence of stages (a step, or a fan-out's items), each waiting for the one before.

/** What both systems run: its stages in order, each a step or a fan-out of `items` pods. */
export interface Workload {
  name: string
  /** Each stage's name and, for a fan-out, how many items. */
  stages: Array<{ name: string, items?: number }>
}

/** A chain of `steps` steps, each after the one before. */
export function chain (steps: number): Workload {
  const stages = Array.from({ length: steps }, (_, i) => ({ name: `step-${i + 1}` }))
  return { name: `chain of ${steps} steps`, stages }
}

/** One step, a fan-out of `width` items after it, and a merge step after every item. */
export function diamond (width: number): Workload {
  const stages = [{ name: 'root' }, { name: 'fan', items: width }, { name: 'merge' }]
  return { name: `diamond of width ${width}`, stages }
}

const CONTAINER = { image: 'busybox:1.36', command: ['sh', '-c', 'sleep 3'] }
const itemsOf = (count: number): number[] => Array.from({ length: count }, (_, i) => i)

/** The workload as a JobFlow named `name`: `forEach` for a fan-out (no parallelism cap, as Argo's). */
export function asJobFlow (workload: Workload, name: string): Record<string, unknown> {
  const flows = workload.stages.map((stage, i) => ({
    name: stage.name,
    ...(i > 0 ? { dependencies: [workload.stages[i - 1]?.name] } : {}),
    ...(stage.items !== undefined ? { forEach: itemsOf(stage.items) } : {}),
    jobTemplate: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', ...CONTAINER }] } } },
  }))
  return { apiVersion: 'jobhooks.io/v1alpha1', kind: 'JobFlow', metadata: { name }, spec: { flows } }
}

/** The workload as an Argo Workflow named `name`: a DAG, `withItems` for a fan-out. */
export function asWorkflow (workload: Workload, name: string): Record<string, unknown> {
  const tasks = workload.stages.map((stage, i) => ({
    name: stage.name,
    template: 'step',
    ...(i > 0 ? { dependencies: [workload.stages[i - 1]?.name] } : {}),
    ...(stage.items !== undefined ? { withItems: itemsOf(stage.items) } : {}),
  }))
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Workflow',
    metadata: { name },
    spec: {
      entrypoint: 'main',
      templates: [{ name: 'main', dag: { tasks } }, { name: 'step', container: CONTAINER }],
    },
  }
}

/**
 * The stage a pod belongs to, from what the pod watch reads of it: a JobFlow's pod by its Job's
 * name (`<flow>-<step>`, `<flow>-<step>-item-<i>`), an Argo pod by its node's name
 * (`<workflow>.<task>`, `<workflow>.<task>(<i>:<item>)`).
 */
export function stageOf (name: string, jobName: string, nodeName: string): string | undefined {
  if (jobName.startsWith(`${name}-`)) return jobName.slice(name.length + 1).replace(/-item-\d+$/, '')
  if (nodeName.startsWith(`${name}.`)) return nodeName.slice(name.length + 1).replace(/\(\d+:[^)]*\)$/, '')
  return undefined
}
