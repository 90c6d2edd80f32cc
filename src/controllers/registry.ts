import type { KindHooks } from '../protocol/hooks.js'
import { jobflowHooks } from './jobflow/index.js'

/** Every kind the service serves hooks for. */
export const ALL_KINDS: readonly KindHooks[] = [jobflowHooks]
