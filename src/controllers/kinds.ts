import type { KindHooks } from '../protocol/hooks.js'
import { jobflowHooks } from './jobflow/index.js'
import { cronjobflowHooks } from './cronjobflow/index.js'
import { ephemeraljobHooks } from './ephemeraljob/index.js'
import { daemonjobHooks } from './daemonjob/index.js'
import { collasetHooks } from './collaset/index.js'
import { operationjobHooks } from './operationjob/index.js'

/** Every kind the service serves hooks for. */
export const ALL_KINDS: readonly KindHooks[] = [
  jobflowHooks,
  cronjobflowHooks,
  ephemeraljobHooks,
  daemonjobHooks,
  operationjobHooks,
  collasetHooks
]
