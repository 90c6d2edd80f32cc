// Which fields of a value are not the batch/v1 JobSpec's, as the API server would refuse them
// under the DaemonJob CRD's schema: the hook says no to the same spec when it arrives without
// that schema (a fixture, the simulator, a cluster whose CRD is not yet upgraded), rather than
// passing an unknown field on to every Job or dropping it. Field names come from Kubernetes'
// OpenAPI (job-spec-fields.ts, written by `npm run crds`); values are the API server's business.
import { JOB_SPEC_MODELS } from './job-spec-fields.js'
import { isRecord } from './types.js'

interface FieldType {
  /** The model of the value, when it is an object of a known model (or a list or map of them). */
  model?: string
  shape: '' | '[]' | '{}'
}

/** The fields of `model`, read from the table (a few words each: cheaper than keeping them). */
function fieldsOf (model: string): ReadonlyMap<string, FieldType> {
  const text = JOB_SPEC_MODELS[model]
  return text === undefined ? new Map() : readFields(text)
}

function readFields (text: string): Map<string, FieldType> {
  const fields = new Map<string, FieldType>()
  for (const entry of text.split(' ')) {
    const [name, type] = entry.split(':') as [string, string | undefined]
    if (type === undefined) fields.set(name, { shape: '' })
    else {
      const shape = type.startsWith('[]') ? '[]' : type.startsWith('{}') ? '{}' : ''
      fields.set(name, { model: type.slice(shape.length), shape })
    }
  }
  return fields
}

/** `V1Container` as people know it: `Container`. */
function modelWords (model: string): string {
  return model.replace(/^(V\d+|CoreV\d+)/, '')
}

/**
 * The fields of `spec` that a JobSpec does not have, `own` aside (the fields of the kind that
 * embeds the JobSpec), each as `<path>: …`, at most `limit` of them.
 */
export function unknownJobSpecFields (
  spec: Record<string, unknown>,
  path: string,
  own: readonly string[],
  limit = 10
): string[] {
  const problems: string[] = []
  const jobSpec = fieldsOf('V1JobSpec')
  for (const [key, value] of Object.entries(spec)) {
    if (own.includes(key)) continue
    const type = jobSpec.get(key)
    if (type === undefined) {
      problems.push(`${path}.${key}: unknown field (not the DaemonJob's, nor a batch/v1 JobSpec's)`)
    } else walk(value, type, `${path}.${key}`, problems)
    if (problems.length >= limit) break
  }
  return problems.slice(0, limit)
}

/** The fields of `value`, an object of `model` (`V1EnvVar`), that the model does not have, at any depth. */
export function unknownModelFields (value: unknown, model: string, path: string, limit = 10): string[] {
  const problems: string[] = []
  walkObject(value, model, path, problems)
  return problems.slice(0, limit)
}

/** The unknown fields below `value`, a value of the field type `type`, into `problems`. */
function walk (value: unknown, type: FieldType, path: string, problems: string[]): void {
  if (type.model === undefined || value === null || value === undefined) return
  if (type.shape === '[]') {
    const model = type.model
    if (Array.isArray(value)) value.forEach((item, i) => { walkObject(item, model, `${path}[${i}]`, problems) })
  } else if (type.shape === '{}') {
    if (!isRecord(value)) return
    for (const [key, item] of Object.entries(value)) walkObject(item, type.model, `${path}.${key}`, problems)
  } else walkObject(value, type.model, path, problems)
}

function walkObject (value: unknown, model: string, path: string, problems: string[]): void {
  if (!isRecord(value)) return
  const fields = fieldsOf(model)
  for (const [key, child] of Object.entries(value)) {
    const type = fields.get(key)
    if (type === undefined) problems.push(`${path}.${key}: unknown field (not a field of ${modelWords(model)})`)
    else walk(child, type, `${path}.${key}`, problems)
  }
}
