// The CompositeControllers of jobhooks as the simulator plays them (manifests/controllers/ is
// the truth for a real cluster; these mirror its parent, child types and hook version).
import { jobflowHooks } from '../../src/controllers/jobflow/index.js'
import type { ControllerConfig, HookVersion } from './simulator.js'

export const JOBHOOKS_API_VERSION = 'jobhooks.io/v1alpha1'

/** JobFlow: children Jobs and ConfigMaps, customize asks for JobTemplates. */
export function jobflowController (hookVersion: HookVersion = 'v2'): ControllerConfig {
  return {
    name: 'jobflow-controller',
    hooks: jobflowHooks,
    parent: { apiVersion: JOBHOOKS_API_VERSION, resource: 'jobflows' },
    children: [
      { apiVersion: 'batch/v1', resource: 'jobs' },
      { apiVersion: 'v1', resource: 'configmaps' }
    ],
    hookVersion,
    generateSelector: true
  }
}
