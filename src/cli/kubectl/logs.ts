// `logs jf <name> <step> [--attempt N | --item I] [-f]`: the step's Job is found in the JobFlow's
// records (its last attempt unless one is named), its pods by Kubernetes' own label
// batch.kubernetes.io/job-name, and each container's log read (followed with -f) from the API
// server. With more than one pod or container, each line says whose it is, as `kubectl logs --prefix`.
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { JOB_NAME_LABEL } from '../../k8s/jobs.js'
import { stepOfFlowName } from '../../formats/jobflow-status.js'
import { knownStepNames } from '../flow-shape.js'
import { flowRecords, type FlowRecord } from '../flow-records.js'
import { KubeError } from './client.js'
import { getObject, listOf, requireKind } from './get.js'
import { collection, PODS } from './kinds.js'
import type { Session } from './session.js'

/** The record of the attempt asked for: of the step or of one of its items, the last unless --attempt names one. */
export function chosenRecord (flow: KubeObject, step: string, attempt?: number, item?: number): FlowRecord {
  const where = `jobflow ${flow.metadata.name}`
  const records = flowRecords(flow)
  const steps = knownStepNames(flow)
  if (!steps.includes(step)) throw new KubeError(`error: ${where} has no step "${step}" (steps: ${steps.join(', ')})`)
  const items = new Set(records.filter(r => r.name !== step && stepOfFlowName(r.name) === step).map(r => r.name))
  if (item === undefined && items.size > 0) {
    throw new KubeError(`error: step ${step} runs one Job per item (${items.size} items): name one with --item`)
  }
  const name = item === undefined ? step : `${step}[${item}]`
  const attempts = records.filter(r => r.name === name)
  if (attempts.length === 0) {
    throw new KubeError(`error: ${where} has no record of ${name}` +
      (item !== undefined ? ` (items: ${[...items].join(', ') || 'none yet'})` : ''))
  }
  const record = attempt === undefined ? attempts.at(-1) : attempts.find(r => r.attempt === attempt)
  if (record === undefined) {
    const known = attempts.map(r => r.attempt).join(', ')
    throw new KubeError(`error: ${name} has no attempt ${attempt ?? ''} (attempts: ${known})`)
  }
  if (record.jobName === undefined || record.startTime === undefined) {
    throw new KubeError(`error: ${name} has no Job that ran yet: ${record.phase}` +
      (record.message !== undefined ? `: ${record.message}` : ''))
  }
  return record
}

function containerNames (pod: KubeObject): string[] {
  const containers = isRecord(pod.spec) && Array.isArray(pod.spec.containers) ? pod.spec.containers : []
  return containers.filter(isRecord).flatMap(c => typeof c.name === 'string' ? [c.name] : [])
}

/** One container's log, written as it comes, each line prefixed when several logs interleave. */
async function streamLog (session: Session, pod: string, container: string, prefix: string): Promise<void> {
  const follow = session.options.follow ? '&follow=true' : ''
  const path = `${collection(PODS, session.namespace)}/${encodeURIComponent(pod)}/log` +
    `?container=${encodeURIComponent(container)}${follow}`
  const response = await session.client.stream(path, session.io.signal)
  let partial = ''
  try {
    for await (const chunk of response) {
      const lines = (partial + (chunk as Buffer).toString('utf8')).split('\n')
      partial = lines.pop() ?? ''
      session.io.out(lines.map(line => `${prefix}${line}\n`).join(''))
    }
  } catch (error) {
    if (session.io.signal?.aborted !== true) throw error
  }
  if (partial !== '') session.io.out(`${prefix}${partial}\n`)
}

export async function logsCommand (session: Session): Promise<void> {
  const [kindName, name, step, ...rest] = session.options.args
  const kind = requireKind(kindName, ['JobFlow'])
  if (name === undefined || step === undefined || rest.length > 0) {
    throw new KubeError('error: logs needs a JobFlow and a step: kubectl jobhooks logs jf <name> <step>')
  }
  const record = chosenRecord(await getObject(session, kind, name), step, session.options.attempt, session.options.item)
  const job = record.jobName as string
  const pods = (await listOf(session, { ...PODS, kind: 'Pod' }, session.namespace, `${JOB_NAME_LABEL}=${job}`))
    .sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
      a.metadata.name.localeCompare(b.metadata.name))
  if (pods.length === 0) {
    throw new KubeError(`error: Job ${job} (${record.name}, attempt ${record.attempt}, ${record.phase}) has no pods: ` +
      'deleted with the Job (its TTL), or not created yet')
  }
  const logs = pods.flatMap(pod => containerNames(pod).map(container => ({ pod: pod.metadata.name, container })))
  const prefixed = logs.length > 1
  const read = async ({ pod, container }: { pod: string, container: string }): Promise<void> =>
    await streamLog(session, pod, container, prefixed ? `[pod/${pod}/${container}] ` : '')
  // Followed logs run side by side (each may never end); finished ones one after the other, in order.
  if (session.options.follow) await Promise.all(logs.map(read))
  else for (const log of logs) await read(log)
}
