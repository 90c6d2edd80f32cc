// The size of a DaemonJob's answer before its Jobs are built (common/answer-size.ts): every node's
// Job is the same template but for the node's name, so one Job measured times the nodes is the
// answer, and the Jobs kept weigh about as much.
import type { SyncRequest } from '../../protocol/hooks.js'
import { isRecord, type KubeObject } from '../../k8s/types.js'
import { objectsOf } from '../../k8s/objects.js'
import {
  containerCount, copiesBytes, podParts, specBytes, type AnswerFigures, type ChildFigure
} from '../common/answer-size.js'
import type { DaemonJobSpec } from './spec.js'

/** The Jobs of `nodes` new nodes, each about as heavy as `sample` (the first of them, built), and those kept. */
export function nodeJobFigures (
  spec: DaemonJobSpec,
  sample: KubeObject,
  nodes: number,
  keptJobs: number
): AnswerFigures {
  const bytes = JSON.stringify(sample).length
  const parts = podParts(specBytes(spec.job.template), specBytes(spec.globalParams.env),
    containerCount(spec.job.template.spec))
  const what = 'the Jobs of the nodes'
  const figure: ChildFigure = { what, per: 'node', count: nodes, bytes, total: bytes * nodes, parts }
  return { figures: [figure], kept: { count: keptJobs, bytes: bytes * keptJobs } }
}

/**
 * What the new Jobs of a sync of `request` may weigh at most, from the request alone (for the
 * wire): a copy of the template for each Node sent that has no Job yet. The Jobs kept are the
 * request's own bytes.
 */
export function daemonJobNewBytes (request: SyncRequest): number {
  const spec = isRecord(request.parent.spec) ? request.parent.spec : {}
  const globalEnv = isRecord(spec.globalParams) ? spec.globalParams.env : undefined
  const nodes = objectsOf(request.related, 'Node', 'v1').length
  const jobs = objectsOf(request.children, 'Job', 'batch/v1').length
  return copiesBytes(spec.template, globalEnv, nodes - jobs)
}
