import type { KindHooks } from '../../protocol/hooks.js'
import { syncDaemonJob } from './sync.js'
import { customizeDaemonJob } from './customize.js'

export const daemonjobHooks: KindHooks = {
  kind: 'daemonjob',
  phaseField: 'phase',
  // DaemonJob needs nothing that Metacontroller cannot do: no effects.
  sync: (request, context) => ({ response: syncDaemonJob(request, context), effects: [] }),
  customize: customizeDaemonJob
}
