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

interface WatchEvent { type: string, object: Record<string, unknown> }

/** The events of a watch response, one JSON object a line, as they arrive. */
async function * events (response: IncomingMessage): AsyncGenerator<WatchEvent> {
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

function typed (kind: Kind, object: Record<string, unknown>): KubeObject {
  return { apiVersion: `${kind.group}/${kind.version}`, kind: kind.kind, ...object } as unknown as KubeObject
}

function resourceVersion (object: Record<string, unknown>): string {
  const metadata = isRecord(object.metadata) ? object.metadata : {}
  return typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : ''
}

/**
 * Watches until the session's signal ends it (or the object is deleted): `onEvent` answers each
 * event, returning false to stop; `restart` reads the state anew and gives the version to watch from.
 */
async function watchLoop (
  session: Session, path: string, fromVersion: string,
  onEvent: (event: WatchEvent) => Promise<boolean>, restart: () => Promise<string>
): Promise<void> {
  const { signal } = session.io
  // A function, not a test of the field: the signal changes while we wait.
  const ended = (): boolean => signal?.aborted === true
  let version = fromVersion
  while (!ended()) {
    const separator = path.includes('?') ? '&' : '?'
    let response: IncomingMessage
    try {
      response = await session.client.stream(
        `${path}${separator}watch=1&allowWatchBookmarks=false&resourceVersion=${encodeURIComponent(version)}`, signal)
    } catch (error) {
      if (ended()) return
      if (errorCode(error) !== 410) throw error
      version = await restart()
      continue
    }
    try {
      for await (const event of events(response)) {
        if (event.type === 'ERROR') {
          version = await restart()
          break
        }
        version = resourceVersion(event.object) || version
        if (!await onEvent(event)) return
      }
    } catch (error) {
      if (ended()) return
      throw error
    }
  }
}

async function watchOne (session: Session, kind: Kind, name: string): Promise<void> {
  const drawer = new Drawer(session)
  const first = await getObject(session, kind, name)
  drawer.draw(await render(session, kind, first))
  const path = `${collection(kind, session.namespace)}?fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`
  await watchLoop(session, path, resourceVersion(first), async event => {
    if (event.type === 'DELETED') {
      drawer.draw(`${kind.kind} ${session.namespace}/${name} was deleted\n`)
      return false
    }
    drawer.draw(await render(session, kind, typed(kind, event.object)))
    return true
  }, async () => {
    const again = await getObject(session, kind, name)
    drawer.draw(await render(session, kind, again))
    return resourceVersion(again)
  })
}

async function watchList (session: Session, kind: Kind): Promise<void> {
  const drawer = new Drawer(session)
  const namespace = session.options.allNamespaces ? undefined : session.namespace
  const objects = new Map<string, KubeObject>()
  const key = (o: KubeObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name}`
  const read = async (): Promise<string> => {
    const list = await session.client.get(collection(kind, namespace))
    objects.clear()
    for (const item of Array.isArray(list.items) ? list.items.filter(isRecord) : []) {
      const object = typed(kind, item)
      objects.set(key(object), object)
    }
    drawer.draw(renderList(session, kind, [...objects.values()]))
    return resourceVersion(isRecord(list.metadata) ? { metadata: list.metadata } : {})
  }
  const version = await read()
  await watchLoop(session, collection(kind, namespace), version, async event => {
    const object = typed(kind, event.object)
    if (event.type === 'DELETED') objects.delete(key(object))
    else objects.set(key(object), object)
    drawer.draw(renderList(session, kind, [...objects.values()].sort((a, b) => key(a).localeCompare(key(b)))))
    return true
  }, read)
}

/** `get <kind> [<name>] --watch`. */
export async function watchCommand (session: Session): Promise<void> {
  const [kindName, name] = session.options.args
  const kind = requireKind(kindName)
  if (session.options.output === 'html') throw new KubeError('error: -o html draws once; leave out --watch')
  if (name === undefined) await watchList(session, kind)
  else await watchOne(session, kind, name)
}
