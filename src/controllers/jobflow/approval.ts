// `flows[].approval`: a step that runs no Job and waits for a person, as Argo's suspend template
// resumed by `argo resume`. Once its dependencies allow it to start it waits, its record saying
// since when and who may approve it (whoever may patch the JobFlow), until the annotation
// `jobhooks.io/approve` names it (`kubectl jobhooks approve jf <name> <step>`): then it succeeds
// and its dependants go on. With `timeoutSeconds`, nobody approving in time fails it, or with
// `onTimeout: Approve` approves it (Argo's suspend `duration`). Steps that do not depend on it
// never wait for it.
import { isRecord } from '../../k8s/types.js'
import type { KubeObject } from '../../k8s/types.js'
import { timestamp } from '../../k8s/time.js'
import { optionalWholeNumber } from '../common/parsed.js'

export const APPROVE_ANNOTATION = 'jobhooks.io/approve'

/** `flows[].approval` as parsed. */
export interface ApprovalSpec {
  timeoutSeconds?: number
  /** What nobody approving within `timeoutSeconds` does: fail the step (the default) or approve it. */
  onTimeout: 'Fail' | 'Approve'
}

/** The fields of a step that are its Job's: an approval step, which runs none, cannot have them. */
export const JOB_FIELDS = [
  'jobTemplate', 'jobTemplateRef', 'patch', 'script', 'retry', 'queueName', 'outputFrom', 'forEach', 'forEachFrom',
  'parallelism', 'shareVolumeMounts'
]

/** A step's `approval`, or undefined without one; problems are added to `problems`. */
export function parseApproval (raw: Record<string, unknown>, at: string, problems: string[]): ApprovalSpec | undefined {
  const value = raw.approval
  if (value === undefined || value === null) return undefined
  if (!isRecord(value)) {
    problems.push(`${at}: approval must be an object ({} or {timeoutSeconds, onTimeout})`)
    return undefined
  }
  const unknown = Object.keys(value).filter(k => k !== 'timeoutSeconds' && k !== 'onTimeout')
  if (unknown.length > 0) problems.push(`${at}: approval has unknown fields: ${unknown.join(', ')}`)
  const withJob = JOB_FIELDS.filter(field => raw[field] !== undefined && raw[field] !== null)
  if (withJob.length > 0) {
    problems.push(`${at}: an approval step runs no Job, so it cannot have ${withJob.join(', ')}`)
  }
  const onTimeout = value.onTimeout ?? 'Fail'
  if (onTimeout !== 'Fail' && onTimeout !== 'Approve') {
    problems.push(`${at}: approval.onTimeout must be Fail or Approve, not ${JSON.stringify(onTimeout)}`)
  }
  const timeoutSeconds = optionalWholeNumber(value.timeoutSeconds, `${at}: approval.timeoutSeconds`, 1, undefined,
    problems)
  if (value.onTimeout !== undefined && timeoutSeconds === undefined) {
    problems.push(`${at}: approval.onTimeout needs approval.timeoutSeconds`)
  }
  const approval: ApprovalSpec = { onTimeout: onTimeout === 'Approve' ? 'Approve' : 'Fail' }
  return timeoutSeconds === undefined ? approval : { ...approval, timeoutSeconds }
}

/** The steps the annotation names: comma-separated, spaces ignored. */
export function approvedSteps (parent: KubeObject): Set<string> {
  const value = parent.metadata.annotations?.[APPROVE_ANNOTATION] ?? ''
  return new Set(value.split(',').map(name => name.trim()).filter(name => name !== ''))
}

/** Where an approval step that may start stands: waiting (maybe until a timeout), approved, or timed out. */
export interface ApprovalVerdict {
  phase: 'Pending' | 'Succeeded' | 'Failed'
  message: string
  /** When it began to wait: its record's startTime. */
  since: string
  completionTime?: string
  /** Seconds until its timeout, while it waits for one. */
  wakeSeconds?: number
}

/**
 * An approval step whose dependencies allow it to start. `since` is when it began to wait (its
 * pending record's startTime), undefined the first time.
 */
export function decideApproval (
  step: string,
  approval: ApprovalSpec,
  { parent, now, since }: { parent: KubeObject, now: Date, since: string | undefined }
): ApprovalVerdict {
  const began = since ?? timestamp(now)
  if (approvedSteps(parent).has(step)) {
    const message = `approved (${APPROVE_ANNOTATION})`
    return { phase: 'Succeeded', message, since: began, completionTime: timestamp(now) }
  }
  const waited = Math.max(0, Math.floor((now.getTime() - Date.parse(began)) / 1000))
  const timeout = approval.timeoutSeconds
  if (timeout !== undefined && waited >= timeout) {
    const ended = { since: began, completionTime: timestamp(now) }
    return approval.onTimeout === 'Approve'
      ? { phase: 'Succeeded', message: `approved by its timeout: nobody answered within ${timeout} s`, ...ended }
      : { phase: 'Failed', message: `not approved: nobody approved it within ${timeout} s`, ...ended }
  }
  const then = approval.onTimeout === 'Approve' ? 'approves itself' : 'fails'
  const message = waitingMessage(step, parent, began) + (timeout !== undefined ? `; it ${then} ${timeout} s after` : '')
  const verdict: ApprovalVerdict = { phase: 'Pending', message, since: began }
  return timeout === undefined ? verdict : { ...verdict, wakeSeconds: Math.max(1, timeout - waited) }
}

/** How a waiting approval step says since when it waits, how to approve it, and who may. */
function waitingMessage (step: string, parent: KubeObject, since: string): string {
  const namespace = parent.metadata.namespace ?? 'default'
  return `${APPROVAL_WAITING} since ${since}: kubectl jobhooks approve jf ${parent.metadata.name} ${step} ` +
    `-n ${namespace} (it takes the patch verb on jobflows.jobhooks.io in ${namespace})`
}

/** How a waiting approval step's message begins. */
export const APPROVAL_WAITING = 'waiting for approval'
