import type { KindHooks } from '../../protocol/hooks.js'
import { syncJobFlow } from './sync.js'
import { customizeJobFlow } from './customize.js'

export const jobflowHooks: KindHooks = {
  kind: 'jobflow',
  phaseField: 'phase',
  // JobFlow needs nothing that Metacontroller cannot do: no effects.
  sync: (request, context) => ({ response: syncJobFlow(request, context), effects: [] }),
  customize: customizeJobFlow
}
