// The hook thread's entry when the service runs from its TypeScript sources (the tests): a
// worker does not inherit tsx from its parent's --import, so it loads it, then the real entry.
import { register } from 'tsx/esm/api'
import { workerData } from 'node:worker_threads'

register()
await import(workerData.entry)
