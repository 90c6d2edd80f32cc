// JobFlow: a DAG of Jobs with dependencies, global params, shared volumes and JobTemplate refs.
// It reads its Jobs and ConfigMaps (children: scripts, pinned templates) and the JobTemplates and
// JobFlowTemplates its flows name (related, asked for by customize), and answers the Jobs and
// ConfigMaps that should exist, the status with one record per attempt of each flow (records.ts),
// and, once it finished, its own deletion after its TTL (an effect).
import type { KindHooks } from '../../protocol/hooks.js'
import { syncJobFlow } from './sync.js'
import { customizeJobFlow } from './customize.js'
import { APPLIED_JOB_READS, CONFIGMAP_DATA_READS, OUTPUT_POD_READS, WHOLE_OBJECT } from '../../k8s/reads.js'

export const jobflowHooks: KindHooks = {
  kind: 'jobflow',
  phaseField: 'phase',
  statusFields: [
    'phase', 'jobsSucceeded', 'jobsQueued', 'jobs', 'jobGroups', 'startTime', 'completionTime', 'conditions', 'rerun',
    'observedGeneration'
  ],
  // Metacontroller does everything but the JobFlow's deletion of itself after its TTL.
  sync: syncJobFlow,
  customize: customizeJobFlow,
  // JobTemplates, related, are read whole, and of the pods of its Jobs their termination messages
  // (the outputs). Jobs with their last-applied annotation, to answer them as Metacontroller last
  // applied them (keepAsApplied).
  reads: {
    // A ConfigMap's data: the JobFlowTemplates it pinned (template-pins.ts).
    children: { 'Job.batch/v1': APPLIED_JOB_READS, 'ConfigMap.v1': CONFIGMAP_DATA_READS },
    related: {
      'JobTemplate.jobhooks.io/v1alpha1': WHOLE_OBJECT,
      'JobFlowTemplate.jobhooks.io/v1alpha1': WHOLE_OBJECT,
      'Pod.v1': OUTPUT_POD_READS
    }
  },
  // Jobs are answered as last applied, so Metacontroller may update them in place: the answer
  // changes spec.suspend and nothing else. Scripts ConfigMaps are answered by identity.
  childUpdates: {
    'Job.batch/v1': { resource: 'jobs', methods: ['OnDelete', 'InPlace'] },
    'ConfigMap.v1': { resource: 'configmaps', methods: ['OnDelete'] }
  }
}
