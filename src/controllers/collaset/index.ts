// CollaSet: the Pod workload whose Pods OperationJob's Replace replaces without losing capacity.
// It reads its own Pods (children) and answers the Pods it should have, its replica counts and
// revisions, and the readiness-gate conditions its Pods are owed (effects). It keeps no
// records.ts: nothing it decides outlives the Pods it observes (law 6 has nothing to remember),
// so its status is computed afresh from them on every sync.
import type { KindHooks } from '../../protocol/hooks.js'
import { syncCollaSet } from './sync.js'
import { POD_READS } from '../../k8s/reads.js'

export const collasetHooks: KindHooks = {
  kind: 'collaset',
  // No phase column; an internal error still reports `phase: Invalid` next to the Valid condition.
  phaseField: 'phase',
  statusFields: [
    'observedGeneration', 'replicas', 'scheduledReplicas', 'readyReplicas', 'availableReplicas', 'operatingReplicas',
    'updatedReplicas', 'updatedReadyReplicas', 'updatedAvailableReplicas', 'currentRevision', 'updatedRevision',
    'nextUpdateTime', 'selector', 'phase', 'conditions'
  ],
  // Pods are children: deleting a CollaSet garbage-collects them, no finalize hook needed.
  sync: syncCollaSet,
  reads: { children: { 'Pod.v1': POD_READS } },
  // Pods that exist are answered by identity: Metacontroller must never update them.
  childUpdates: { 'Pod.v1': { resource: 'pods', methods: ['OnDelete'] } }
}
