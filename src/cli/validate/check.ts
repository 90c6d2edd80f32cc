// Manifests checked against our CRDs before anything runs (`kubectl jobhooks validate`, and
// `simulate` before it plays them), the refusals worded as `kubectl apply --validate=strict`
// prints the API server's:
//   unknown fields (strict decoding, a 400 before any validation):
//     Error from server (BadRequest): error when creating "x.yaml": JobFlow in version "v1alpha1"
//     cannot be handled as a JobFlow: strict decoding error: unknown field "spec.flows[1].dependecies"
//   schema and CEL errors (a 422):
//     The JobFlow "x" is invalid: spec.failurePolicy: Unsupported value: "Stop": supported values: …
//   (several errors: `The JobFlow "x" is invalid: ` and one `* <error>` line each).
// A manifest is untrusted input: it is read only up to the API server's request size, its
// patterns run on RE2 and its CEL rules within a cost budget (cel-rules.ts).
import { readFileSync, statSync } from 'node:fs'
import { fieldErrorText } from '../../k8s/field-errors.js'
import { validateCustomResource, type RuleEvaluator } from '../../k8s/schema-validation.js'
import type { KubeObject } from '../../k8s/types.js'
import { ManifestError, parseManifest } from '../../simulator/manifest.js'
import { celRuleEvaluator } from './cel-rules.js'
import { crdSchemas, type CrdSchema } from './crds.js'

/** The largest manifest read: the API server's own limit on a request body (3 MiB). */
export const MANIFEST_MAX_BYTES = 3 * 1024 * 1024

/** The group of our kinds: an object of it that no CRD version serves is an error, as kubectl says it. */
const GROUP = 'jobhooks.io'

/** What checking one object found. */
export interface ObjectCheck {
  object: KubeObject
  /** The file it came from, as kubectl names it in `error when creating "<file>"`. */
  source: string
  /** `checked`: against a CRD; `other`: not one of our kinds (not checked); `unmapped`: our group, no such version. */
  outcome: 'checked' | 'other' | 'unmapped'
  crd?: CrdSchema
  unknownFields: string[]
  /** Each error as the API server words it (`spec.flows[0].name: Required value`). */
  errors: string[]
  warnings: string[]
}

/** Reads a manifest file's objects, refusing one larger than the API server would take. */
export function readManifest (path: string): KubeObject[] {
  let size: number
  try {
    size = statSync(path).size
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const why = code === 'ENOENT' ? 'no such file' : `cannot read it (${code ?? String(error)})`
    throw new ManifestError(`${path}: ${why}`)
  }
  if (size > MANIFEST_MAX_BYTES) {
    const limit = `the ${MANIFEST_MAX_BYTES} bytes the API server takes in one request`
    throw new ManifestError(`${path}: ${size} bytes, over ${limit}`)
  }
  return parseManifest(readFileSync(path, 'utf8'), path)
}

/** Checks every object; `crds` and `rules` default to the project's CRDs and its budgeted CEL. */
export function checkObjects (
  objects: Array<{ object: KubeObject, source: string }>,
  crds: CrdSchema[] = crdSchemas(),
  rules: RuleEvaluator = celRuleEvaluator()
): ObjectCheck[] {
  return objects.map(({ object, source }) => {
    const base = { object, source, unknownFields: [], errors: [], warnings: [] }
    const crd = crds.find(c => c.apiVersion === object.apiVersion && c.kind === object.kind)
    if (crd === undefined) {
      const group = object.apiVersion.includes('/') ? object.apiVersion.split('/')[0] : ''
      return { ...base, outcome: group === GROUP ? 'unmapped' : 'other' }
    }
    const { statusSubresource, specReplicasPath } = crd
    const scale = specReplicasPath !== undefined ? { specReplicasPath } : {}
    const result = validateCustomResource(object, crd.schema, { rules, statusSubresource, ...scale })
    return {
      ...base,
      outcome: 'checked',
      crd,
      unknownFields: result.unknownFields,
      errors: result.errors.map(fieldErrorText),
      warnings: result.warnings
    }
  })
}

export function isRefused (check: ObjectCheck): boolean {
  return check.outcome === 'unmapped' || check.unknownFields.length > 0 || check.errors.length > 0
}

/**
 * What kubectl would print of the object's create: its refusal (for standard error), or nothing.
 * Unknown fields come first and alone, as the API server refuses them before it validates.
 */
export function refusal (check: ObjectCheck): string[] {
  const { object, source } = check
  const name = object.metadata.name
  if (check.outcome === 'unmapped') {
    return [`error: resource mapping not found for name: ${JSON.stringify(name)} namespace: ` +
      `${JSON.stringify(object.metadata.namespace ?? '')} from ${JSON.stringify(source)}: no matches for kind ` +
      `${JSON.stringify(object.kind)} in version ${JSON.stringify(object.apiVersion)}`]
  }
  const crd = check.crd
  if (crd === undefined) return []
  if (check.unknownFields.length > 0) {
    const unknown = check.unknownFields.map(path => `unknown field ${JSON.stringify(path)}`).join(', ')
    return [`Error from server (BadRequest): error when creating ${JSON.stringify(source)}: ${crd.kind} in version ` +
      `${JSON.stringify(crd.version)} cannot be handled as a ${crd.kind}: strict decoding error: ${unknown}`]
  }
  if (check.errors.length === 0) return []
  const head = `The ${crd.kind} ${JSON.stringify(name)} is invalid: `
  return check.errors.length === 1
    ? [`${head}${check.errors[0] as string}`]
    : [head, ...check.errors.map(e => `* ${e}`)]
}

/** The object as kubectl names it in its messages: `jobflow.jobhooks.io/diamond`. */
export function resourceName (check: ObjectCheck): string {
  const resource = check.crd?.resource ?? check.object.kind.toLowerCase()
  return `${resource}/${check.object.metadata.name}`
}
