// DaemonJob: one Job per eligible node, with an exclude list. It reads its Jobs and scripts
// ConfigMaps (children) and the Nodes (related, asked for by customize), and answers a Job per
// eligible node and the status that counts them and remembers each node's outcome (records.ts).
// No effects: Metacontroller does everything it needs.
import type { KindHooks } from '../../protocol/hooks.js'
import { syncDaemonJob } from './sync.js'
import { customizeDaemonJob } from './customize.js'
import { JOB_READS, NODE_READS, OBJECT_IDENTITY } from '../../k8s/reads.js'

export const daemonjobHooks: KindHooks = {
  kind: 'daemonjob',
  phaseField: 'phase',
  statusFields: [
    'phase', 'message', 'desired', 'active', 'queued', 'waiting', 'succeeded', 'failed', 'startTime', 'completionTime',
    'succeededNodes', 'failedNodes', 'defaultFailurePolicy', 'conditions', 'observedGeneration'
  ],
  sync: syncDaemonJob,
  customize: customizeDaemonJob,
  reads: {
    children: { 'Job.batch/v1': JOB_READS, 'ConfigMap.v1': OBJECT_IDENTITY },
    related: { 'Node.v1': NODE_READS }
  },
  // Children that exist are answered by identity: Metacontroller must never update them.
  childUpdates: {
    'Job.batch/v1': { resource: 'jobs', methods: ['OnDelete'] },
    'ConfigMap.v1': { resource: 'configmaps', methods: ['OnDelete'] }
  }
}
