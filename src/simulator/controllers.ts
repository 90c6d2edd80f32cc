// The CompositeControllers of jobhooks as the simulator plays them: read from
// manifests/controllers/, the same files a cluster gets, so the simulator cannot drift from them.
import { parseAllDocuments } from 'yaml'
import { ALL_KINDS } from '../controllers/kinds.js'
import { packageFolder, packageText } from '../scripts/package-files.js'
import type { ControllerConfig, HookVersion } from './types.js'
import type { KindHooks, UpdateMethod } from '../protocol/hooks.js'
import { DEFAULT_RESOURCES } from './resources.js'

export const JOBHOOKS_API_VERSION = 'jobhooks.io/v1alpha1'

/** A `childResources` entry of a CompositeController manifest. */
interface ManifestChild { apiVersion: string, resource: string, updateStrategy?: { method?: UpdateMethod } }

/**
 * The CompositeController of manifests/controllers/ whose parent is `resource` (e.g. `jobflows`),
 * with the kind's hooks found by its sync path and each child type's update strategy.
 * `hookVersion` overrides the manifest's.
 */
export function controllerFromManifest (resource: string, hookVersion?: HookVersion): ControllerConfig {
  const cc = compositeControllerFromManifest(resource)
  const syncPath: string = cc.spec.hooks.sync.webhook.path
  const hooks = ALL_KINDS.find(k => syncPath === `/hooks/${k.kind}/sync`)
  if (hooks === undefined) throw new Error(`${String(cc.metadata.name)}: no kind serves ${syncPath}`)
  return {
    name: cc.metadata.name,
    hooks,
    parent: { apiVersion: cc.spec.parentResource.apiVersion, resource },
    children: (cc.spec.childResources ?? []).map((c: ManifestChild) => ({
      apiVersion: c.apiVersion,
      resource: c.resource,
      ...(c.updateStrategy?.method !== undefined ? { updateStrategy: c.updateStrategy.method } : {})
    })),
    hookVersion: hookVersion ?? cc.spec.hooks.sync.version,
    generateSelector: cc.spec.generateSelector === true
  }
}

/** The CompositeController of manifests/controllers/ whose parent is `resource`, as the file has it. */
export function compositeControllerFromManifest (resource: string) {
  const cc = compositeControllers()
    .find(c => c?.kind === 'CompositeController' && c.spec?.parentResource?.resource === resource)
  if (cc === undefined) throw new Error(`no CompositeController for ${resource} in manifests/controllers/`)
  return cc
}

/** Every object of the files of manifests/controllers/, as plain data (YAML's `toJS`, read field by field). */
function compositeControllers () {
  return packageFolder('manifests/controllers')
    .flatMap(file => parseAllDocuments(packageText(`manifests/controllers/${file}`)).map(d => d.toJS()))
}

/** JobFlow: children Jobs and ConfigMaps, customize asks for JobTemplates. */
export function jobflowController (hookVersion?: HookVersion): ControllerConfig {
  return controllerFromManifest('jobflows', hookVersion)
}

/** A kind's parent: its resource (`jobflows`) and Kind (`JobFlow`), as the manifests declare them. */
export interface ParentKind {
  hooks: KindHooks
  resource: string
  kind: string
}

/**
 * The parent of every kind the service serves (ALL_KINDS), found by its sync path in
 * manifests/controllers/, in the order of the simulator's resource table (JobFlow first).
 */
export function parentKinds (): ParentKind[] {
  const controllers = compositeControllers()
  const order = (kind: string): number =>
    DEFAULT_RESOURCES.findIndex(t => t.apiVersion === JOBHOOKS_API_VERSION && t.kind === kind)
  return ALL_KINDS.map(hooks => {
    const cc = controllers.find(c => c.spec?.hooks?.sync?.webhook?.path === `/hooks/${hooks.kind}/sync`)
    if (cc === undefined) throw new Error(`no CompositeController in manifests/controllers/ serves ${hooks.kind}`)
    const resource: string = cc.spec.parentResource.resource
    const apiVersion: string = cc.spec.parentResource.apiVersion
    const type = DEFAULT_RESOURCES.find(t => t.apiVersion === apiVersion && t.resource === resource)
    if (type === undefined) throw new Error(`the simulator knows no resource ${resource}`)
    return { hooks, resource, kind: type.kind }
  }).sort((a, b) => order(a.kind) - order(b.kind))
}
