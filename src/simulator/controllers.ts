// The CompositeControllers of jobhooks as the simulator plays them: read from
// manifests/controllers/, the same files a cluster gets, so the simulator cannot drift from them.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseAllDocuments } from 'yaml'
import { ALL_KINDS } from '../controllers/kinds.js'
import { packageRoot } from '../scripts/library.js'
import type { ControllerConfig, HookVersion } from './simulator.js'
import type { UpdateMethod } from '../protocol/hooks.js'

export const JOBHOOKS_API_VERSION = 'jobhooks.io/v1alpha1'

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
    children: (cc.spec.childResources ?? []).map((c: { apiVersion: string, resource: string, updateStrategy?: { method?: UpdateMethod } }) => ({
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
  const dir = join(packageRoot(), 'manifests', 'controllers')
  const controllers = readdirSync(dir).flatMap(file => parseAllDocuments(readFileSync(join(dir, file), 'utf8')).map(d => d.toJS()))
  const cc = controllers.find(c => c?.kind === 'CompositeController' && c.spec?.parentResource?.resource === resource)
  if (cc === undefined) throw new Error(`no CompositeController for ${resource} in manifests/controllers/`)
  return cc
}

/** JobFlow: children Jobs and ConfigMaps, customize asks for JobTemplates. */
export function jobflowController (hookVersion?: HookVersion): ControllerConfig {
  return controllerFromManifest('jobflows', hookVersion)
}
