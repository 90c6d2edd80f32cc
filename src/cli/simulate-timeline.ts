// The timeline `npm run simulate` prints: one entry per simulated instant and subject (a parent,
// or an object of its own), with the subject's phase after that instant and what happened, in
// the words a person would use: "created Jobs a, b", "evicted pod web-1", "injected container
// check into web-0". Effects come from the simulated executor's log, with their outcome when it
// was not applied; the text and the JSON output are two renderings of the same entries.
import { imageList, type Effect } from '../effects/types.js'
import type { AppliedEffect } from '../simulator/effects.js'
import type { ObjectRef } from '../simulator/objects.js'
import { JOBHOOKS_API_VERSION } from '../simulator/controllers.js'
import type { Simulator } from '../simulator/simulator.js'
import type { TimelineEvent } from '../simulator/types.js'
import { creationNotes } from './flow-shape.js'

export interface TimelineEntry {
  seconds: number
  subject: string
  /** The subject's phase after this instant ('' for objects without one). */
  phase: string
  /** What happened, each in words. */
  actions: string[]
}

/** Who a Pod or ReplicaSet belongs to, when a workload the simulator does not run as a parent made it. */
export type PodOwner = (name: string) => string | undefined

/** The entries of a simulation, in time order. */
export function timelineEntries (sim: Simulator, podOwner: PodOwner = () => undefined): TimelineEntry[] {
  interface Entry { seconds: number, subject: string, phase: string, actions: Map<string, string[]>, notes: string[] }
  const entries: Entry[] = []
  const phases = new Map<string, string>()
  // Where a step's Job is created, the line says what it came after: the shape of the flow.
  const notes = creationNotes(sim)
  const entry = (seconds: number, subject: string): Entry => {
    let found = entries.find(e => e.seconds === seconds && e.subject === subject)
    if (found === undefined) {
      found = { seconds, subject, phase: phases.get(subject) ?? '', actions: new Map(), notes: [] }
      entries.push(found)
    }
    return found
  }
  const add = (target: Entry, [verb, what]: [string, string]): void => {
    const list = target.actions.get(verb) ?? []
    list.push(what)
    target.actions.set(verb, list)
  }
  for (const item of merged(sim)) {
    if ('effect' in item) {
      add(entry(item.seconds, item.parent?.name ?? 'effects'), effectWords(item))
      continue
    }
    const event = item
    // Nodes and Kueue's queues are the stage, not the play: the report says what became of each
    // Node. Injections and deletions by effects are told from the effects' log, with their outcome.
    const told = event.type === 'injected' || (event.type === 'deleted' && event.cause === 'effect')
    const kueueObject = event.object.apiVersion.startsWith('kueue.x-k8s.io/')
    if (event.object.kind === 'Node' || kueueObject || told) continue
    const madeKind = event.object.kind === 'Pod' || event.object.kind === 'ReplicaSet'
    const made = madeKind ? podOwner(event.object.name) : undefined
    const subject = made ?? subjectOf(event)
    const target = entry(event.seconds, subject)
    if (event.type === 'phase' && event.phase !== undefined) {
      phases.set(subject, event.phase)
      target.phase = event.phase
      if (event.message !== undefined) target.notes.push(`invalid: ${event.message}`)
      continue
    }
    const created: [string, string] = [`created ${event.object.kind}%n %s`, event.object.name]
    add(target, made !== undefined && event.type === 'applied' ? created : action(event))
    const note = event.type === 'created' && event.object.kind === 'Job'
      ? notes.get(`${event.object.namespace ?? 'default'}/${event.object.name}`)
      : undefined
    if (note !== undefined) add(target, [note, ''])
  }
  return entries.map(e => ({
    seconds: e.seconds,
    subject: e.subject,
    phase: e.phase,
    actions: [
      ...[...e.actions].map(([verb, names]) =>
        verb.replace('%s', names.join(', ')).replace('%n', names.length === 1 ? '' : 's')),
      ...e.notes
    ]
  }))
}

/** The entries as aligned text lines: `t=10s  subject  phase  what happened`. */
export function timelineText (entries: TimelineEntry[]): string[] {
  const width = Math.max(0, ...entries.map(e => e.subject.length))
  const phaseWidth = Math.max(0, ...entries.map(e => e.phase.length))
  return entries.map(e => [
    `t=${formatSeconds(e.seconds)}`.padEnd(8), e.subject.padEnd(width), e.phase.padEnd(phaseWidth), e.actions.join('; ')
  ].join('  ').trimEnd())
}

/** Timeline events and applied effects together, by time (events first within an instant). */
function merged (sim: Simulator): Array<TimelineEvent | AppliedEffect> {
  const all: Array<TimelineEvent | AppliedEffect> = [...sim.timeline, ...sim.effects.log]
  // A stable sort keeps each source's own order within an instant.
  return all.map((item, i) => ({ item, i, effect: 'effect' in item ? 1 : 0 }))
    .sort((a, b) => a.item.seconds - b.item.seconds || a.effect - b.effect || a.i - b.i)
    .map(x => x.item)
}

/** Who deleted an object, in words. */
function deletedBy (cause: TimelineEvent['cause']): string {
  switch (cause) {
    case 'user': return 'by hand'
    case 'garbage-collector': return 'garbage-collected'
    case 'finalized': return 'finalized'
    default: return 'by the controller'
  }
}

/** Whose line an event goes on: a child's parent, or the object itself. */
function subjectOf (event: TimelineEvent): string {
  if (event.owner !== undefined) return event.owner.name
  // jobhooks' own objects (the parents, JobTemplates) are subjects by their name alone.
  if (event.object.apiVersion === JOBHOOKS_API_VERSION) return event.object.name
  return `${event.object.kind} ${event.object.name}`
}

/** A verb template (`%s`: the names, `%n`: a plural s) and the name this event adds to it. */
function action (event: TimelineEvent): [string, string] {
  const name = event.object.name
  const kind = (ref: ObjectRef): string => ref.kind
  switch (event.type) {
    case 'created': return [`created ${kind(event.object)}%n %s`, name]
    case 'job-started': return ['started %s', name]
    case 'job-succeeded': return ['succeeded %s', name]
    case 'job-failed': return ['failed %s', name]
    case 'job-suspended': return ['suspended %s', name]
    case 'job-resumed': return ['resumed %s', name]
    case 'updated': {
      // No field: Metacontroller rewrote only its last-applied annotation (after Kueue wrote spec.suspend).
      const fields = event.message !== undefined && event.message !== '' ? event.message : 'last-applied annotation'
      return [`updated ${kind(event.object)}%n %s (${fields})`, name]
    }
    case 'deleted': {
      const by = deletedBy(event.cause)
      if (event.owner === undefined && event.object.kind !== 'Job') return ['deleted', '']
      return [`deleted ${kind(event.object)}%n %s (${by})`, name]
    }
    case 'terminating':
      if (event.owner === undefined) return ['terminating (finalizers run)', '']
      return [`terminating ${kind(event.object)}%n %s`, name]
    case 'applied': return event.owner === undefined ? ['applied', ''] : ['applied %s', name]
    case 'edited': return [`edited${event.message !== undefined ? ` (${event.message})` : ''}`, '']
    case 'adopted': return ['adopted %s', name]
    case 'released': return ['released %s', name]
    case 'sync-error': return [`sync error (nothing changed): ${event.message ?? ''}`, '']
    case 'phase': return ['', '']
    case 'injected': return ['injected %s', `${event.message ?? ''} into ${name}`]
    case 'container-started': return ['started %s', `${event.message ?? ''} in ${name}`]
    case 'container-finished': return ['finished %s', `${event.message ?? ''} in ${name}`]
    case 'kueue-admitted': return ['kueue admitted %s', name]
    case 'kueue-preempted': return ['kueue preempted %s', `${name} ${event.message ?? ''}`.trimEnd()]
    case 'kueue-suspended': return ['kueue suspended %s (not admitted)', name]
    case 'kueue-unsuspended': return ['kueue unsuspended %s (admitted)', name]
  }
}

/** An effect as a person says it, with its outcome unless it was applied. */
function effectWords (applied: AppliedEffect): [string, string] {
  const [verb, what] = effectAction(applied.effect)
  if (applied.result === 'applied') return [verb, what]
  const message = applied.message !== undefined ? `: ${applied.message}` : ''
  return [`${verb.replace('%s', what)} (${applied.result}${message})`, '']
}

function effectAction (effect: Effect): [string, string] {
  const pod = effect.target.name
  switch (effect.type) {
    case 'InjectEphemeralContainers': {
      const names = effect.containers.map(c => c.name).join(', ')
      return ['injected %s', `${plural(effect.containers.length, 'container')} ${names} into ${pod}`]
    }
    case 'Evict': return ['evicted pod%n %s', pod]
    case 'Delete': return [`deleted ${effect.target.kind} %s`, pod]
    case 'SetPodCondition': return [`set ${effect.condition.type}=${effect.condition.status} on pod%n %s`, pod]
    case 'SetPodLabels': {
      const changes = Object.entries(effect.labels)
        .map(([key, value]) => (value === null ? `-${key}` : `${key}=${value}`)).join(' ')
      return [`labelled pod%n %s ${changes}`, pod]
    }
    case 'StopJobFlow': return [`stopped JobFlow%n %s (activeDeadlineSeconds ${effect.activeDeadlineSeconds})`, pod]
    case 'UpdatePodInPlace': return [`updated pod%n %s in place (${imageList(effect.images)})`, pod]
    case 'ResizePod': return [`resized pod%n %s (${effect.containers.map(c => c.name).join(', ')})`, pod]
    case 'ReleaseClaim': return ['released claim%n %s', pod]
  }
}

function plural (n: number, word: string): string {
  return n === 1 ? word : `${word}s`
}

export function formatSeconds (seconds: number): string {
  return Number.isInteger(seconds) ? `${seconds}s` : `${seconds.toFixed(3)}s`
}
