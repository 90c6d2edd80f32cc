// CronJobFlow: a JobFlow on a schedule, as CronJob is a Job on a schedule. It reads its runs (the
// JobFlows it owns: their marks and how they ended) and the JobFlowTemplate its spec names
// (related, asked for by customize), and answers the runs that should exist — a new one when a
// schedule time is due, none of the oldest finished past the history limits — the status, and
// the time of its next sync (the next schedule time).
import type { KindHooks } from '../../protocol/hooks.js'
import { METADATA_READS, WHOLE_OBJECT } from '../../k8s/reads.js'
import { syncCronJobFlow } from './sync.js'
import { customizeCronJobFlow } from './customize.js'
import {
  INSTANTIATE_ANNOTATION, JOBFLOW_GROUP, REPLACED_BY_ANNOTATION, SCHEDULED_TIME_ANNOTATION
} from './runs.js'

export const cronjobflowHooks: KindHooks = {
  kind: 'cronjobflow',
  phaseField: 'phase',
  statusFields: [
    'phase', 'lastScheduleTime', 'lastSuccessfulTime', 'nextScheduleTime', 'active', 'activeCount', 'conditions',
    'observedGeneration'
  ],
  sync: syncCronJobFlow,
  customize: customizeCronJobFlow,
  reads: {
    // Of a run: its marks, and of its status how it ended and since when it runs (Replace's
    // deadline) — not its spec, its records or the copy Metacontroller last applied.
    children: {
      [JOBFLOW_GROUP]: {
        apiVersion: true,
        kind: true,
        metadata: {
          ...METADATA_READS,
          annotations: {
            [SCHEDULED_TIME_ANNOTATION]: true,
            [INSTANTIATE_ANNOTATION]: true,
            [REPLACED_BY_ANNOTATION]: true
          }
        },
        status: { phase: true, startTime: true, completionTime: true, rerun: { time: true } }
      }
    },
    related: { 'JobFlowTemplate.jobhooks.io/v1alpha1': WHOLE_OBJECT }
  }
  // No childUpdates: runs are answered by identity, safe under OnDelete only; Replace stops a run
  // with an effect (StopJobFlow), not through Metacontroller.
}
