// The kinds the hook thread serves in test/thread/: every kind, a JobFlow named `hold` holding the
// thread until the test lets it go (a hook that never ends, as far as the thread can tell), and
// one named `die` ending the thread mid-call. The flags are the test's, shared: [0] set to 1 lets
// the held call go, [1] is set to 1 by the thread once it holds.
import { workerData } from 'node:worker_threads'
import { ALL_KINDS } from '../../src/controllers/kinds.js'
import type { KindHooks } from '../../src/protocol/hooks.js'

const shared = (workerData as { extra?: SharedArrayBuffer } | null)?.extra ?? new SharedArrayBuffer(8)
const flags = new Int32Array(shared)

export const kinds: readonly KindHooks[] = ALL_KINDS.map(kind => {
  const sync = kind.sync
  if (kind.kind !== 'jobflow' || sync === undefined) return kind
  return {
    ...kind,
    sync: (request, context) => {
      const name = request.parent.metadata.name
      if (name === 'die') process.exit(7)
      if (name === 'hold') {
        Atomics.store(flags, 1, 1)
        Atomics.wait(flags, 0, 0)
      }
      return sync(request, context)
    }
  }
})
