// The size of a DaemonJob's answer before its Jobs are built (common/answer-size.ts): every node's
// Job is the same template but for the node's name, so one Job measured times the nodes is the
// answer, and the Jobs kept weigh about as much.
import type { KubeObject } from '../../k8s/types.js'
import { containerCount, podParts, type AnswerFigures, type ChildFigure } from '../common/answer-size.js'
import type { DaemonJobSpec } from './spec.js'

/** The Jobs of `nodes` new nodes, each about as heavy as `sample` (the first of them, built), and those kept. */
export function nodeJobFigures (
  spec: DaemonJobSpec,
  sample: KubeObject,
  nodes: number,
  keptJobs: number
): AnswerFigures {
  const bytes = JSON.stringify(sample).length
  const envBytes = spec.globalParams.env.length === 0 ? 0 : JSON.stringify(spec.globalParams.env).length
  const parts = podParts(JSON.stringify(spec.job.template).length, envBytes, containerCount(spec.job.template.spec))
  const what = 'the Jobs of the nodes'
  const figure: ChildFigure = { what, per: 'node', count: nodes, bytes, total: bytes * nodes, parts }
  return { figures: [figure], kept: { count: keptJobs, bytes: bytes * keptJobs } }
}
