// Reading Kubernetes manifests (multi-document YAML) for the simulator.
import { readFileSync } from 'node:fs'
import { parseAllDocuments } from 'yaml'
import type { KubeObject } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'

export class ManifestError extends Error {}

/** Every object of a YAML file; `List` kinds are flattened. Throws ManifestError with the reason. */
export function loadManifest (path: string): KubeObject[] {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const why = code === 'ENOENT' ? `${path}: no such file` : `${path}: cannot read it (${code ?? String(error)})`
    throw new ManifestError(why)
  }
  return parseManifest(text, path)
}

export function parseManifest (text: string, source = 'manifest'): KubeObject[] {
  const objects: KubeObject[] = []
  for (const [i, document] of parseAllDocuments(text).entries()) {
    if (!('errors' in document)) continue
    if (document.errors.length > 0) {
      throw new ManifestError(`${source}: document ${i + 1} is not valid YAML: ${document.errors[0]?.message ?? ''}`)
    }
    const value: unknown = document.toJS()
    if (value === null || value === undefined) continue
    for (const item of isRecord(value) && value.kind === 'List' && Array.isArray(value.items) ? value.items : [value]) {
      if (!isRecord(item) || typeof item.apiVersion !== 'string' || typeof item.kind !== 'string' ||
        !isRecord(item.metadata) || typeof item.metadata.name !== 'string') {
        const what = 'is not a Kubernetes object (apiVersion, kind, metadata.name)'
        throw new ManifestError(`${source}: document ${i + 1} ${what}`)
      }
      objects.push(item as KubeObject)
    }
  }
  return objects
}
