// EphemeralJob: ephemeral containers injected in batches into the Pods a selector matches. It
// reads those Pods (related, asked for by customize) and answers no children, the status with a
// record per chosen Pod (records.ts), and effects: the containers to inject (Metacontroller
// cannot write pods/ephemeralcontainers) and its own deletion after its TTL.
import type { KindHooks } from '../../protocol/hooks.js'
import { syncEphemeralJob } from './sync.js'
import { customizeEphemeralJob } from './customize.js'
import { POD_READS } from '../../k8s/reads.js'

export const ephemeraljobHooks: KindHooks = {
  kind: 'ephemeraljob',
  phaseField: 'phase',
  statusFields: [
    'phase', 'match', 'succeeded', 'failed', 'running', 'waiting', 'startTime', 'completionTime', 'pods',
    'conditions', 'observedGeneration'
  ],
  // No finalize hook: ephemeral containers cannot be removed from a Pod, so there is nothing to
  // undo when the job goes.
  sync: syncEphemeralJob,
  customize: customizeEphemeralJob,
  reads: { related: { 'Pod.v1': POD_READS } }
}
