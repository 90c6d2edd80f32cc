// CollaSet: the Pod workload whose Pods OperationJob's Replace replaces without losing capacity.
// It reads its own Pods (children) and answers the Pods it should have, its replica counts and
// revisions, and the readiness-gate conditions its Pods are owed (effects). It keeps no
// records.ts: nothing it decides outlives the Pods it observes (law 6 has nothing to remember),
// so its status is computed afresh from them on every sync.
import type { KindHooks } from '../../protocol/hooks.js'
import { syncCollaSet } from './sync.js'
import { finalizeCollaSet } from './finalize.js'
import { customizeCollaSet } from './include.js'
import { METADATA_READS, OBJECT_IDENTITY, POD_READS, type ObjectShape } from '../../k8s/reads.js'
import { IN_PLACE_ANNOTATION } from './inplace.js'
import { TEMPLATE_SHAPE_ANNOTATION } from './pods.js'

/**
 * A CollaSet's Pod: what every kind reads (POD_READS), and what an in-place update reads: the
 * two annotations it keeps, each container's image and resources, and each container's status
 * (inplace.ts, resize.ts).
 */
const COLLASET_POD_READS: ObjectShape = {
  ...(POD_READS as ObjectShape),
  metadata: { ...METADATA_READS, annotations: { [TEMPLATE_SHAPE_ANNOTATION]: true, [IN_PLACE_ANNOTATION]: true } },
  spec: {
    ...((POD_READS as ObjectShape).spec as ObjectShape),
    containers: { name: true, image: true, resources: true }
  },
  status: {
    ...((POD_READS as ObjectShape).status as ObjectShape),
    containerStatuses: { name: true, image: true, imageID: true, restartCount: true, ready: true, resources: true }
  }
}

export const collasetHooks: KindHooks = {
  kind: 'collaset',
  // No phase column; an internal error still reports `phase: Invalid` next to the Valid condition.
  phaseField: 'phase',
  statusFields: [
    'observedGeneration', 'replicas', 'scheduledReplicas', 'readyReplicas', 'availableReplicas', 'operatingReplicas',
    'updatedReplicas', 'updatedReadyReplicas', 'updatedAvailableReplicas', 'currentRevision', 'updatedRevision',
    'nextUpdateTime', 'selector', 'phase', 'conditions'
  ],
  // Pods and claims are children: deleting a CollaSet garbage-collects them; finalize first
  // releases the claims whenDeleted: Retain keeps (finalize.ts).
  finalize: finalizeCollaSet,
  sync: syncCollaSet,
  // Customize asks for the Pods podToInclude names (include.ts), read as its own Pods are.
  customize: customizeCollaSet,
  // A claim is read by its identity and labels (its instance: volumes.ts), nothing of its spec.
  reads: {
    children: { 'Pod.v1': COLLASET_POD_READS, 'PersistentVolumeClaim.v1': OBJECT_IDENTITY },
    related: { 'Pod.v1': COLLASET_POD_READS }
  },
  // Pods that exist are answered by identity: Metacontroller must never update them (an in-place
  // update is an effect, inplace.ts: Kubernetes lets a running Pod change its images only).
  // Claims likewise: a claim's spec is all but immutable, so one that exists is never written.
  childUpdates: {
    'Pod.v1': { resource: 'pods', methods: ['OnDelete'] },
    'PersistentVolumeClaim.v1': { resource: 'persistentvolumeclaims', methods: ['OnDelete'] }
  }
}
