import type { KindHooks } from '../protocol/hooks.js'
import { jobflowHooks } from './jobflow/index.js'
import { ephemeraljobHooks } from './ephemeraljob/index.js'
import { daemonjobHooks } from './daemonjob/index.js'

/** Every kind the service serves hooks for. */
export const ALL_KINDS: readonly KindHooks[] = [jobflowHooks, ephemeraljobHooks, daemonjobHooks]
