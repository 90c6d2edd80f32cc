// The page's live parts, each a server-sent event stream fed by watches through the user's
// kubeconfig: every kind's list (as `kubectl get` tabulates it), one object's view, a step's logs.
// A watch that drops is opened again from the last resourceVersion and the page is told so; what
// the API server refuses (a 403) is sent as kubectl words it.
import type { KubeObject } from '../../k8s/types.js'
import { listTable, relatedOf } from '../kubectl/get.js'
import { DRAWN, kindNamed, type Kind } from '../kubectl/kinds.js'
import { logsCommand } from '../kubectl/logs.js'
import { parseOptions } from '../kubectl/options.js'
import type { Session } from '../kubectl/session.js'
import { watchObject, watchObjects } from '../kubectl/watch.js'
import { detailFragment } from './fragments.js'
import { coalesce, type EventStream } from './sse.js'

/** How long a burst of watch events is gathered into one update of the page. */
const GATHER_MS = 100
/** The columns a list's phase filter reads, in the order tried. */
const PHASE_COLUMNS = ['PHASE', 'STATUS', 'PROGRESS']

/** The session a stream works in: the page's namespace, its end the stream's. */
function streamSession (base: Session, stream: EventStream, namespace: string): Session {
  return { ...base, namespace, io: { ...base.io, signal: stream.signal } }
}

const messageOf = (error: unknown): string => error instanceof Error ? error.message : String(error)

function resumed (stream: EventStream, what: string): (version: string, why: string) => void {
  return (version, why) => stream.send('notice', {
    message: `The watch of ${what} dropped (${why}); resumed from resourceVersion ${version}.`
  })
}

async function watchKind (
  session: Session, stream: EventStream, kind: Kind, namespace: string | undefined
): Promise<void> {
  const send = coalesce<KubeObject[]>(GATHER_MS, async objects => {
    const [head = [], ...rows] = listTable(kind, objects, session.io.now(), namespace === undefined)
    stream.send('list', {
      kind: kind.kind,
      head,
      phaseColumn: head.findIndex(h => PHASE_COLUMNS.includes(h)),
      rows: rows.map((cells, i) => {
        const { namespace = '', name } = objects[i]?.metadata ?? {}
        return { namespace, name, cells }
      })
    })
  })
  try {
    await watchObjects(session, kind, namespace, send, resumed(stream, kind.plural))
  } catch (error) {
    if (!stream.signal.aborted) stream.send('failure', { kind: kind.kind, message: messageOf(error) })
  }
}

/** Every kind's list in the page's scope (one namespace, or all with -A), as each changes. */
export async function listStream (base: Session, stream: EventStream, namespace: string | undefined): Promise<void> {
  const session = streamSession(base, stream, namespace ?? base.namespace)
  stream.send('scope', { namespace: namespace ?? null, kinds: DRAWN })
  await Promise.all(DRAWN.map(async name => await watchKind(session, stream, kindNamed(name) as Kind, namespace)))
}

/** One object's view, drawn again on each change of the object (and what it reads beside it then). */
export async function objectStream (
  base: Session, stream: EventStream, kind: Kind, namespace: string, name: string
): Promise<void> {
  const session = streamSession(base, stream, namespace)
  const draw = coalesce<KubeObject>(GATHER_MS, async object => {
    try {
      const related = await relatedOf(session, kind, object)
      stream.send('detail', { html: detailFragment(kind, object, related, session.io.now()) })
    } catch (error) {
      if (!stream.signal.aborted) stream.send('failure', { message: messageOf(error) })
    }
  })
  try {
    await watchObject(session, kind, name, draw,
      () => stream.send('gone', { message: `${kind.kind} ${namespace}/${name} was deleted.` }),
      resumed(stream, `${kind.singular} ${name}`))
  } catch (error) {
    if (!stream.signal.aborted) stream.send('failure', { message: messageOf(error) })
  }
}

export interface LogsAsked {
  namespace: string
  name: string
  step: string
  attempt?: string
  item?: string
  follow: boolean
}

/** A step's logs as `kubectl jobhooks logs jf <name> <step>` reads them (followed with `follow`). */
export async function logsStream (base: Session, stream: EventStream, asked: LogsAsked): Promise<void> {
  try {
    const options = parseOptions(['logs', 'jf', asked.name, asked.step, '-n', asked.namespace,
      ...asked.attempt !== undefined ? ['--attempt', asked.attempt] : [],
      ...asked.item !== undefined ? ['--item', asked.item] : [],
      ...asked.follow ? ['--follow'] : []])
    const session = streamSession({ ...base, options }, stream, asked.namespace)
    await logsCommand({ ...session, io: { ...session.io, out: text => stream.send('log', { text }) } })
  } catch (error) {
    if (!stream.signal.aborted) stream.send('failure', { message: messageOf(error) })
  }
}
