// The project's own CRDs, as the CLI reads them: the one place that reads manifests/crds/ (the
// printer columns, the schemas that `validate` and `simulate` check manifests against). The
// single-file plugin reads its embedded copy of the same files (scripts/package-files.ts).
import { parseAllDocuments } from 'yaml'
import type { JSONSchemaProps } from '../../k8s/schema-validation.js'
import { isRecord } from '../../k8s/types.js'
import { packageFolder, packageText } from '../../scripts/package-files.js'

/** A CRD as parsed YAML (its shape is the API's, read where it is used). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type CrdDocument = Record<string, any>

/** Every CustomResourceDefinition of manifests/crds/, as parsed YAML. Read on each call, not cached. */
export function crdDocuments (): CrdDocument[] {
  return packageFolder('manifests/crds').filter(f => f.endsWith('.yaml')).flatMap(file =>
    parseAllDocuments(packageText(`manifests/crds/${file}`)).map(d => d.toJS() as unknown)
      .filter((d): d is CrdDocument => isRecord(d) && d.kind === 'CustomResourceDefinition'))
}

/** One served version of one of our CRDs: what an object of `apiVersion`/`kind` is checked against. */
export interface CrdSchema {
  group: string
  kind: string
  version: string
  /** `group/version`, as an object's apiVersion says it. */
  apiVersion: string
  /** `jobflow.jobhooks.io`, as kubectl names the resource in its messages. */
  resource: string
  schema: JSONSchemaProps
  statusSubresource: boolean
  /** The scale subresource's `specReplicasPath`, when the version has one. */
  specReplicasPath?: string
}

function schemaOf (schema: unknown): JSONSchemaProps {
  return isRecord(schema) && isRecord(schema.openAPIV3Schema) ? schema.openAPIV3Schema : {}
}

/** A version's scale subresource, as far as a create is checked against it. */
function scaleOf (subresources: unknown): { specReplicasPath?: string } {
  const scale = isRecord(subresources) ? subresources.scale : undefined
  const path = isRecord(scale) ? scale.specReplicasPath : undefined
  return typeof path === 'string' ? { specReplicasPath: path } : {}
}

/** The schema of every served version of every CRD. */
export function crdSchemas (documents = crdDocuments()): CrdSchema[] {
  return documents.flatMap(doc => {
    const spec = isRecord(doc.spec) ? doc.spec : {}
    const names = isRecord(spec.names) ? spec.names : {}
    const versions: unknown[] = Array.isArray(spec.versions) ? spec.versions : []
    return versions.filter(isRecord).filter(v => v.served !== false).map(v => ({
      group: String(spec.group),
      kind: String(names.kind),
      version: String(v.name),
      apiVersion: `${String(spec.group)}/${String(v.name)}`,
      resource: `${String(names.singular ?? String(names.kind).toLowerCase())}.${String(spec.group)}`,
      schema: schemaOf(v.schema),
      statusSubresource: isRecord(v.subresources) && v.subresources.status !== undefined,
      ...scaleOf(v.subresources)
    }))
  })
}
