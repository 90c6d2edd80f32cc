// The `Label` action: sets labels on each target Pod, the way `kubectl label` does, and succeeds
// once the Pod carries them. It is also the example of how an action is written: docs/plugins.md,
// "Writing an action", walks through this file from top to bottom.
//
//   spec:
//     action: Label
//     label:
//       labels: {track: canary}
//       overwrite: false   # a label the Pod has with another value fails the target (kubectl label's rule)
//
// - Labels under jobhooks.io/ are the service's own protocol (Replace, the PodOpsLifecycle): refused.
// - Nothing to undo on release: the labels go on in one patch, so a target that did not succeed
//   has all of them or none of them, as after `kubectl label`.
import { isRecord } from '../k8s/types.js'
import { isLabelKey, LABEL_VALUE_PATTERN, MAX_LABEL_VALUE } from '../k8s/names.js'
import type { StructuralSchema } from '../k8s/openapi.js'
import { refTo } from '../effects/types.js'
import { POD_UID, targetGone } from './pods.js'
import type { ActionContext, ActionJob, ActionPlugin, ActionTarget, OperateResult, ProgressResult } from './types.js'

const SERVICE_PREFIX = 'jobhooks.io/'

// The action's own spec field. The OperationJob CRD carries this schema (`npm run crds` writes
// it there), and the hook checks `spec.label` against it before `validate` runs.
const LABEL_SCHEMA: StructuralSchema = {
  type: 'object',
  description: 'What the Label action sets on each target Pod.',
  required: ['labels'],
  properties: {
    labels: {
      type: 'object',
      description: 'Label key to value.',
      minProperties: 1,
      maxProperties: 64,
      'x-kubernetes-validations': [{
        rule: "self.all(key, !key.startsWith('jobhooks.io/'))",
        message: 'labels under jobhooks.io/ belong to the jobhooks service'
      }],
      additionalProperties: { type: 'string', maxLength: MAX_LABEL_VALUE, pattern: LABEL_VALUE_PATTERN }
    },
    overwrite: {
      type: 'boolean',
      description: 'Replace a label the Pod has with another value; without it such a target fails.'
    }
  }
}

interface LabelSpec {
  labels: Record<string, string>
  overwrite: boolean
}

// Reading the field: the schema holds by now, so this only picks the values out.
function labelSpec (job: ActionJob): LabelSpec {
  const field = isRecord(job.spec.label) ? job.spec.label : {}
  const labels = isRecord(field.labels) ? field.labels as Record<string, string> : {}
  return { labels, overwrite: field.overwrite === true }
}

// What the schema cannot say. Each problem makes the job Invalid, and nothing is operated.
function validate (job: ActionJob): string[] {
  return Object.keys(labelSpec(job).labels).flatMap(key => {
    if (!isLabelKey(key)) return [`spec.label.labels: ${JSON.stringify(key)} is not a label key ([prefix/]name)`]
    if (key.startsWith(SERVICE_PREFIX)) {
      return [`spec.label.labels: ${key}: labels under ${SERVICE_PREFIX} belong to the jobhooks service`]
    }
    return []
  })
}

// Called when the target starts and on every sync while it is Processing: it returns what is
// still owed, so an effect that was lost is owed again and one that landed is not repeated.
function operate (target: ActionTarget, { job }: ActionContext): OperateResult {
  const gone = targetGone(target)
  if (gone !== undefined) return { effects: [], error: gone }
  const pod = target.pod as NonNullable<ActionTarget['pod']>
  const ref = refTo(pod)
  if (ref === undefined) {
    return { effects: [], error: { reason: 'PodNotFound', message: `Pod ${target.name} has no uid` } }
  }
  // Remembered from the first sync on: a Pod of the same name made anew later is not the target.
  const extraInfo = { [POD_UID]: ref.uid }
  const { labels, overwrite } = labelSpec(job)
  const current = pod.metadata.labels ?? {}
  const owed = Object.fromEntries(Object.entries(labels).filter(([key, value]) => current[key] !== value))
  const taken = Object.keys(owed).find(key => current[key] !== undefined)
  if (taken !== undefined && !overwrite) {
    const message = `Pod ${target.name} has ${taken}=${current[taken] as string}; ` +
      'set spec.label.overwrite to replace it'
    return { effects: [], extraInfo, error: { reason: 'LabelConflict', message } }
  }
  if (Object.keys(owed).length === 0) return { effects: [], extraInfo }
  // An effect, not a write: the executor patches the Pod, guarded by its UID.
  return { effects: [{ type: 'SetPodLabels', target: ref, labels: owed }], extraInfo }
}

// Read from the Pod as observed: done once it carries every label with its value.
function progress (target: ActionTarget, { job }: ActionContext): ProgressResult {
  const gone = targetGone(target)
  if (gone !== undefined) return { progress: 'Failed', error: gone }
  const current = target.pod?.metadata.labels ?? {}
  const done = Object.entries(labelSpec(job).labels).every(([key, value]) => current[key] === value)
  return { progress: done ? 'Succeeded' : 'Processing' }
}

// Everything the service needs to know about the action, in one object; src/actions/index.ts lists it.
export const labelAction: ActionPlugin = {
  name: 'Label',
  specField: { name: 'label', required: true, schema: LABEL_SCHEMA },
  handler: {
    validate,
    operate,
    progress,
    release: () => ({ effects: [] })
  }
}
