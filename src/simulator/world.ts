// What every part of the simulator shares: the API server's objects and types, the clock, what
// is owed, what happened, and deletion with its garbage collection.
import type { ObjectStore } from './store.js'
import type { ResourceTable } from './resources.js'
import type { Clock } from './clock.js'
import type { Scheduler } from './scheduler.js'
import type { Timeline } from './timeline.js'
import type { GarbageCollector } from './garbage.js'

export interface World {
  store: ObjectStore
  resources: ResourceTable
  clock: Clock
  scheduler: Scheduler
  timeline: Timeline
  gc: GarbageCollector
}
