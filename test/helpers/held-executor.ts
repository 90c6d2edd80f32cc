// An executor that holds every call's effects until the test opens it: a call held there is in
// flight, queued and unanswered (test/app-inflight.test.ts, test/app-queue.test.ts).
import type { EffectExecutor, EffectOutcome } from '../../src/effects/types.js'

export function heldExecutor (): EffectExecutor & { open: () => void, waiting: () => number } {
  let waiting: Array<() => void> = []
  let opened = false
  return {
    mode: 'dry-run',
    apply: async () => {
      if (!opened) await new Promise<void>(resolve => waiting.push(resolve))
      return [] as EffectOutcome[]
    },
    open: () => {
      opened = true
      for (const resolve of waiting) resolve()
      waiting = []
    },
    waiting: () => waiting.length
  }
}

/** Resolves once `check` holds, looking every 5 ms. */
export async function until (check: () => boolean): Promise<void> {
  while (!check()) await new Promise(resolve => setTimeout(resolve, 5))
}
