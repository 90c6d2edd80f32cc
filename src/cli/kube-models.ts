// Kubernetes' own OpenAPI, as `@kubernetes/client-node` ships it: the package is generated from
// the Kubernetes OpenAPI (its models say which version) and keeps, per model, the field names,
// types and formats (`attributeTypeMap`) and, in the declaration files, each field's description
// and whether it is required. `npm run crds` reads the batch/v1 JobSpec from here, so that the
// DaemonJob CRD holds the real fields rather than a hand-written copy. Read on a fresh machine
// from what `npm ci` installs: nothing else is needed.
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as k8s from '@kubernetes/client-node'

/** One field of a model as the OpenAPI declares it. */
export interface ModelField {
  name: string
  /** client-node's type: `string`, `number`, `Date`, `IntOrString`, `Array<T>`, `{ [key: string]: T; }`, a model. */
  type: string
  /** `int32`, `int64`, `double`, `date-time`, `int-or-string`, or empty. */
  format: string
  description?: string
  required: boolean
}

export interface Model {
  name: string
  description?: string
  fields: ModelField[]
}

interface Attribute { name: string, baseName: string, type: string, format: string }

const MODELS = join(dirname(fileURLToPath(import.meta.resolve('@kubernetes/client-node'))), 'gen', 'models')

/** The Kubernetes version the models come from (`OpenAPI spec version: v1.34.0` in each file). */
export function openApiVersion (): string {
  const text = readFileSync(join(MODELS, 'V1JobSpec.d.ts'), 'utf8')
  return /OpenAPI spec version: (\S+)/.exec(text)?.[1] ?? 'unknown'
}

/** The version of @kubernetes/client-node installed. */
export function clientNodeVersion (): string {
  const manifest = join(MODELS, '..', '..', '..', 'package.json')
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version
}

/** The model `name` (`V1JobSpec`), its fields in the OpenAPI's order, and their descriptions. */
export function readModel (name: string): Model {
  const model = (k8s as unknown as Record<string, { attributeTypeMap?: Attribute[] } | undefined>)[name]
  if (model?.attributeTypeMap === undefined) throw new Error(`@kubernetes/client-node has no model ${name}`)
  const docs = readDeclarations(name)
  const fields = model.attributeTypeMap.map(a => {
    const doc = docs.fields.get(a.baseName)
    return {
      name: a.baseName,
      type: a.type,
      format: a.format,
      ...(doc?.description !== undefined ? { description: doc.description } : {}),
      required: doc?.required ?? false
    }
  })
  return { name, ...(docs.description !== undefined ? { description: docs.description } : {}), fields }
}

interface Declarations {
  description?: string
  fields: Map<string, { description?: string, required: boolean }>
}

/** The doc comments of a model's declaration file: the class's, and each property's with its `?`. */
function readDeclarations (name: string): Declarations {
  const lines = readFileSync(join(MODELS, `${name}.d.ts`), 'utf8').split('\n')
  const result: Declarations = { fields: new Map() }
  let comment: string[] | undefined
  let pending: string | undefined
  for (const line of lines) {
    const trimmed = line.trim()
    if (trimmed === '/**') { comment = []; continue }
    if (comment !== undefined) {
      if (trimmed === '*/') {
        pending = comment.join(' ').trim()
        comment = undefined
      } else comment.push(trimmed.replace(/^\* ?/, ''))
      continue
    }
    const property = /^'([^']+)'(\?)?:/.exec(trimmed)
    if (property !== null) {
      const description = pending === undefined ? undefined : unescape(pending)
      const required = property[2] !== '?'
      result.fields.set(property[1] as string, { ...(description !== undefined ? { description } : {}), required })
    } else if (trimmed.startsWith('export declare class') && pending !== undefined) {
      result.description = unescape(pending)
    }
    if (trimmed !== '') pending = undefined
  }
  return result
}

function unescape (text: string): string {
  return text.replace(/\\(['"])/g, '$1').replace(/\s+/g, ' ')
}
