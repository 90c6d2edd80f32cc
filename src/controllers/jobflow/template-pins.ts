// A JobFlow pins the JobFlowTemplates it runs: the first sync that expands one writes its spec
// and generation into a ConfigMap child, and every later sync expands from there, so an edit to a
// template (or its deletion) never changes a flow already under way, as Argo keeps a workflow's
// templates in its status. The ConfigMap is immutable and named after the templates it holds: a
// template the spec names later makes a new one, the pins carried over, and the old one goes. One
// codec: encode and decode stay together.
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { childName, fitName, MAX_OBJECT_NAME, shortHash } from '../../k8s/names.js'
import { objectsOf } from '../../k8s/objects.js'
import type { SyncRequest } from '../../protocol/hooks.js'
import { JOBFLOW_LABEL } from './job.js'

/** Marks the ConfigMaps that pin templates, beside the JobFlow's own label. */
export const PINS_LABEL = 'jobhooks.io/pinned'
const PINS_VALUE = 'jobflowtemplates'

/** The most the pinned templates weigh: under the API server's 1 MiB for a ConfigMap, room left for metadata. */
export const MAX_PIN_BYTES = 1024 * 1024 - 16 * 1024

/** A pinned template as the ConfigMap holds it (one key per template, its name). */
interface Pin { generation?: number, spec: unknown }

/** The templates a JobFlow pinned, by name, from its observed ConfigMap children; none before the first. */
export function pinnedTemplates (request: SyncRequest): Map<string, KubeObject> {
  return templatesPinnedIn(request.parent, objectsOf(request.children, 'ConfigMap', 'v1'))
}

/**
 * The templates pinned in `configMaps` (any ConfigMaps: those without the pins label are passed
 * over), by name, as JobFlowTemplates of the JobFlow's namespace: what a sync reads, and what the
 * plugin reads of a JobFlow on a cluster.
 */
export function templatesPinnedIn (jobflow: KubeObject, configMaps: Iterable<KubeObject>): Map<string, KubeObject> {
  const pinned = new Map<string, KubeObject>()
  for (const configMap of configMaps) {
    if (configMap.metadata.labels?.[PINS_LABEL] !== PINS_VALUE || !isRecord(configMap.data)) continue
    for (const [name, text] of Object.entries(configMap.data)) {
      const pin = decodePin(text)
      if (pin === undefined || pinned.has(name)) continue
      const metadata = { name, namespace: jobflow.metadata.namespace, generation: pin.generation }
      pinned.set(name, { apiVersion: jobflow.apiVersion, kind: 'JobFlowTemplate', metadata, spec: pin.spec })
    }
  }
  return pinned
}

function decodePin (text: unknown): Pin | undefined {
  if (typeof text !== 'string') return undefined
  try {
    const value: unknown = JSON.parse(text)
    if (!isRecord(value) || !isRecord(value.spec)) return undefined
    const { generation, spec } = value
    return typeof generation === 'number' ? { generation, spec } : { spec }
  } catch {
    return undefined
  }
}

/**
 * The ConfigMap that pins `templates` (those an expansion read), or why it cannot be: the API
 * server refuses a ConfigMap past 1 MiB, so templates that weigh more make the spec invalid.
 */
export function pinsConfigMap (parent: KubeObject, templates: readonly KubeObject[]): KubeObject | string {
  const data: Record<string, string> = {}
  let bytes = 0
  for (const template of [...templates].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1))) {
    const pin: Pin = { generation: template.metadata.generation, spec: template.spec }
    const text = JSON.stringify(pin)
    bytes += Buffer.byteLength(text)
    data[template.metadata.name] = text
  }
  if (bytes > MAX_PIN_BYTES) {
    return `the JobFlowTemplates it runs weigh ${bytes.toLocaleString('en-US')} bytes, more than the ` +
      `${MAX_PIN_BYTES.toLocaleString('en-US')} a JobFlow pins them in (a ConfigMap)`
  }
  const { name, namespace } = parent.metadata
  const held = shortHash(Object.keys(data).join(','))
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: childName(name, `flowtemplates-${held}`, MAX_OBJECT_NAME),
      ...(namespace !== undefined ? { namespace } : {}),
      labels: { [JOBFLOW_LABEL]: fitName(name), [PINS_LABEL]: PINS_VALUE }
    },
    immutable: true,
    data
  }
}
