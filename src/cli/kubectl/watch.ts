// `get ... --watch`: a watch request (`?watch=1&resourceVersion=…`), not polling. Each change draws
// the object (or the list) again: in place on a terminal (ANSI: cursor home, clear screen), as a
// new block after a blank line when the output is piped. A watch the server closes is opened
// again from the last resourceVersion seen; an expired one (410 Gone) reads the object anew.
import type { IncomingMessage } from 'node:http'
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { errorCode, KubeError } from './client.js'
import { getObject, render, renderList, requireKind } from './get.js'
import { collection, type Kind } from './kinds.js'
import type { Session } from './session.js'

const CLEAR = '\x1b[H\x1b[2J'

export interface WatchEvent { type: string, object: Record<string, unknown> }

/** The events of a watch response, one JSON object a line, as they arrive. */
export async function * events (response: IncomingMessage): AsyncGenerator<WatchEvent> {
  let buffered = ''
  for await (const chunk of response) {
    buffered += (chunk as Buffer).toString('utf8')
    let newline: number
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, newline).trim()
      buffered = buffered.slice(newline + 1)
      if (line === '') continue
      const event: unknown = JSON.parse(line)
      if (isRecord(event) && typeof event.type === 'string' && isRecord(event.object)) {
        yield { type: event.type, object: event.object }
      }
    }
  }
}

class Drawer {
  private drawn = 0
  constructor (private readonly session: Session) {}

  draw (body: string): void {
    const { io } = this.session
    if (io.tty) io.out(`${CLEAR}${body}`)
    else io.out(this.drawn === 0 ? body : `\n${body}`)
    this.drawn += 1
  }
}

export function typed (kind: Kind, object: Record<string, unknown>): KubeObject {
  return { apiVersion: `${kind.group}/${kind.version}`, kind: kind.kind, ...object } as unknown as KubeObject
}

export function resourceVersion (object: Record<string, unknown>): string {
  const metadata = isRecord(object.metadata) ? object.metadata : {}
  return typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : ''
}

/** What a watch does with what it reads. */
export interface WatchHandlers {
  /** Answers each event; false stops the watch. */
  onEvent: (event: WatchEvent) => Promise<boolean>
  /** Reads the state anew (a watch expired) and gives the version to watch from. */
  restart: () => Promise<string>
  /**
   * Given, a watch that drops (the server closed it, the connection broke) is opened again from
   * the last version seen and this says so; without it a broken connection is an error.
   */
  onResume?: (version: string, why: string) => void
}

/** How long a dropped watch waits before it is opened again. */
const RESUME_DELAY_MS = 1000

/**
 * Watches until the session's signal ends it (or `onEvent` stops it), from `fromVersion`; an
 * expired watch (410, or an ERROR event) reads the state anew through `restart`.
 */
export async function watchLoop (
  session: Session, path: string, fromVersion: string, handlers: WatchHandlers
): Promise<void> {
  const { signal } = session.io
  // A function, not a test of the field: the signal changes while we wait.
  const ended = (): boolean => signal?.aborted === true
  const dropped = async (why: string): Promise<void> => {
    await new Promise(resolve => setTimeout(resolve, RESUME_DELAY_MS))
    if (!ended()) handlers.onResume?.(version, why)
  }
  let version = fromVersion
  let opened = false
  while (!ended()) {
    if (opened) handlers.onResume?.(version, 'the server closed the watch')
    const separator = path.includes('?') ? '&' : '?'
    let response: IncomingMessage
    try {
      response = await session.client.stream(
        `${path}${separator}watch=1&allowWatchBookmarks=false&resourceVersion=${encodeURIComponent(version)}`, signal)
    } catch (error) {
      if (ended()) return
      opened = false
      if (errorCode(error) === 410) version = await handlers.restart()
      else if (handlers.onResume !== undefined) await dropped(error instanceof Error ? error.message : String(error))
      else throw error
      continue
    }
    opened = true
    try {
      for await (const event of events(response)) {
        if (event.type === 'ERROR') {
          version = await handlers.restart()
          opened = false
          break
        }
        version = resourceVersion(event.object) || version
        if (!await handlers.onEvent(event)) return
      }
    } catch (error) {
      if (ended()) return
      if (handlers.onResume === undefined) throw error
      opened = false
      await dropped(error instanceof Error ? error.message : String(error))
    }
  }
}

/**
 * One object of the session's namespace as it changes: `onObject` gets it as first read, after each
 * event and after an expired watch is read anew; `onGone` once it is deleted, which ends the watch.
 */
export async function watchObject (
  session: Session, kind: Kind, name: string, onObject: (object: KubeObject) => Promise<void> | void,
  onGone: () => void, onResume?: WatchHandlers['onResume']
): Promise<void> {
  const first = await getObject(session, kind, name)
  await onObject(first)
  const path = `${collection(kind, session.namespace)}?fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`
  await watchLoop(session, path, resourceVersion(first), {
    onEvent: async event => {
      if (event.type === 'DELETED') {
        onGone()
        return false
      }
      await onObject(typed(kind, event.object))
      return true
    },
    restart: async () => {
      const again = await getObject(session, kind, name)
      await onObject(again)
      return resourceVersion(again)
    },
    ...onResume !== undefined ? { onResume } : {}
  })
}

async function watchOne (session: Session, kind: Kind, name: string): Promise<void> {
  const drawer = new Drawer(session)
  await watchObject(session, kind, name, async object => drawer.draw(await render(session, kind, object)),
    () => drawer.draw(`${kind.kind} ${session.namespace}/${name} was deleted\n`))
}

/**
 * The objects of `kind` in `namespace` (every namespace: undefined) as they change: `onChange` gets
 * them all, by namespace and name, after the first read and after each event.
 */
export async function watchObjects (
  session: Session, kind: Kind, namespace: string | undefined,
  onChange: (objects: KubeObject[]) => void, onResume?: WatchHandlers['onResume']
): Promise<void> {
  const objects = new Map<string, KubeObject>()
  const key = (o: KubeObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name}`
  const changed = (): void => onChange([...objects.values()].sort((a, b) => key(a).localeCompare(key(b))))
  const read = async (): Promise<string> => {
    const list = await session.client.get(collection(kind, namespace))
    objects.clear()
    for (const item of Array.isArray(list.items) ? list.items.filter(isRecord) : []) {
      const object = typed(kind, item)
      objects.set(key(object), object)
    }
    changed()
    return resourceVersion(isRecord(list.metadata) ? { metadata: list.metadata } : {})
  }
  await watchLoop(session, collection(kind, namespace), await read(), {
    onEvent: async event => {
      const object = typed(kind, event.object)
      if (event.type === 'DELETED') objects.delete(key(object))
      else objects.set(key(object), object)
      changed()
      return true
    },
    restart: read,
    ...onResume !== undefined ? { onResume } : {}
  })
}

async function watchList (session: Session, kind: Kind): Promise<void> {
  const drawer = new Drawer(session)
  const namespace = session.options.allNamespaces ? undefined : session.namespace
  await watchObjects(session, kind, namespace, objects => drawer.draw(renderList(session, kind, objects)))
}

/** `get <kind> [<name>] --watch`. */
export async function watchCommand (session: Session): Promise<void> {
  const [kindName, name] = session.options.args
  const kind = requireKind(kindName)
  if (session.options.output === 'html') throw new KubeError('error: -o html draws once; leave out --watch')
  if (name === undefined) await watchList(session, kind)
  else await watchOne(session, kind, name)
}
