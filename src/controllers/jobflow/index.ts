import type { KindHooks } from '../../protocol/hooks.js'
import { syncJobFlow } from './sync.js'
import { customizeJobFlow } from './customize.js'
import { JOB_READS, OBJECT_IDENTITY } from '../../k8s/reads.js'

export const jobflowHooks: KindHooks = {
  kind: 'jobflow',
  phaseField: 'phase',
  // JobFlow needs nothing that Metacontroller cannot do: no effects.
  sync: (request, context) => ({ response: syncJobFlow(request, context), effects: [] }),
  customize: customizeJobFlow,
  // JobTemplates, related, are read whole.
  reads: { children: { 'Job.batch/v1': JOB_READS, 'ConfigMap.v1': OBJECT_IDENTITY } }
}
