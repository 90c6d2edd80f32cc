import type { KindHooks } from '../../protocol/hooks.js'
import { answerJobFlow } from './sync.js'
import { customizeJobFlow } from './customize.js'
import { JOB_READS, OBJECT_IDENTITY } from '../../k8s/reads.js'

export const jobflowHooks: KindHooks = {
  kind: 'jobflow',
  phaseField: 'phase',
  // Metacontroller does everything but the JobFlow's deletion of itself after its TTL.
  sync: answerJobFlow,
  customize: customizeJobFlow,
  // JobTemplates, related, are read whole.
  reads: { children: { 'Job.batch/v1': JOB_READS, 'ConfigMap.v1': OBJECT_IDENTITY } }
}
