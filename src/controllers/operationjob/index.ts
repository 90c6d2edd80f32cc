// OperationJob: one-shot operations (actions) on named Pods, with partition, deadline, TTL and
// plugins (src/actions). It reads its target Pods (related, asked for by customize) and answers
// no children, the status with a detail per target (records.ts), and the effects its action owes
// (label, evict, inject, delete...), releasing unfinished targets when it is deleted (finalize).
import type { KindHooks } from '../../protocol/hooks.js'
import { defaultActions, type ActionRegistry } from '../../actions/index.js'
import { operationJobSyncHooks } from './sync.js'
import { customizeOperationJob } from './customize.js'

/** The OperationJob hooks over a registry of actions (the service's own unless a test brings one). */
export function operationJobHooks (registry: ActionRegistry = defaultActions): KindHooks {
  return {
    kind: 'operationjob',
    phaseField: 'progress',
    statusFields: [
      'observedGeneration', 'progress', 'startTime', 'endTime', 'totalPodCount', 'succeededPodCount',
      'failedPodCount', 'targetDetails', 'conditions'
    ],
    // Finalize releases every unfinished target before answering finalized: true.
    ...operationJobSyncHooks(registry),
    customize: request => customizeOperationJob(request, registry),
    reads: { related: { 'Pod.v1': registry.podReads() } }
  }
}

export const operationjobHooks: KindHooks = operationJobHooks()
