// What `kubectl describe` shows of an object's Events: the rows of its Events table, read by the
// columns of the table's header, as a user reads them.
import { waitFor, type Cluster } from './cluster.js'

export interface DescribedEvent {
  type: string
  reason: string
  /** `5s`, or `5s (x3 over 40s)` for an Event counted three times. */
  age: string
  from: string
  message: string
  /** How many times the Event happened: the `xN` of its age, else 1. */
  count: number
}

/** The rows of the Events table of `kubectl describe` output (none when it says `Events: <none>`). */
export function eventsTable (describe: string): DescribedEvent[] {
  const lines = describe.split('\n')
  const start = lines.findIndex(line => /^Events:\s*$/.test(line))
  if (start < 0) return []
  const header = lines[start + 1] ?? ''
  const columns = ['Type', 'Reason', 'Age', 'From', 'Message'].map(name => header.search(new RegExp(`\\b${name}\\b`)))
  if (columns.some(c => c < 0)) return []
  const rows: DescribedEvent[] = []
  for (const line of lines.slice(start + 3)) {
    if (!/^\s{2}\S/.test(line)) break
    const [type = '', reason = '', age = '', from = '', message = ''] = columns.map((at, i) =>
      line.slice(at, columns[i + 1] ?? line.length).trim()
    )
    rows.push({ type, reason, age, from, message, count: Number(/\(x(\d+) over /.exec(age)?.[1] ?? 1) })
  }
  return rows
}

/** `kubectl describe <resource> <name> -n <ns>`, its Events table. */
export async function describedEvents (
  cluster: Cluster,
  resource: string,
  ns: string,
  name: string
): Promise<{ text: string; events: DescribedEvent[] }> {
  const result = await cluster.kubectl(['describe', resource, name, '-n', ns])
  if (result.code !== 0) throw new Error(`kubectl describe ${resource} ${name}: ${result.stderr}`)
  return { text: result.stdout, events: eventsTable(result.stdout) }
}

/**
 * Waits until `kubectl describe` shows Events that pass `check` (Events are written in the
 * background, just after the sync that earned them); a timeout shows the last table.
 */
export async function waitForDescribedEvents (
  cluster: Cluster,
  resource: string,
  ns: string,
  name: string,
  what: string,
  check: (events: DescribedEvent[]) => boolean,
  timeoutMs = 30_000
): Promise<DescribedEvent[]> {
  let last = ''
  try {
    return await waitFor(
      `kubectl describe ${resource} ${name} to show ${what}`,
      async () => {
        const { text, events } = await describedEvents(cluster, resource, ns, name)
        last = text.slice(text.indexOf('Events:'))
        return check(events) ? events : undefined
      },
      timeoutMs,
      500
    )
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}; last seen:\n${last}`)
  }
}
