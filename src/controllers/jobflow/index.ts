import type { KindHooks } from '../../protocol/hooks.js'
import { syncJobFlow } from './sync.js'
import { customizeJobFlow } from './customize.js'

export const jobflowHooks: KindHooks = {
  kind: 'jobflow',
  phaseField: 'phase',
  sync: syncJobFlow,
  customize: customizeJobFlow
}
