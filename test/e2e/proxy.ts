// A round-robin proxy of the tier's own in front of the hook URL, so that Metacontroller's
// CompositeControllers keep one URL while the services behind it change: each request goes to the
// next backend in turn, as a Service spreads requests over the pods of two ReplicaSets during a
// rolling update. The turns are kept per path (`/hooks/collaset/sync`): one event often wakes two
// kinds at once (a Pod change, a CollaSet and an OperationJob), and one turn for all would send
// every sync of one kind to the same backend. It runs inside the test process on 127.0.0.1, so it
// ends with it.
import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from 'node:http'

export interface Backend {
  /** What the counts call it ("0.2.0", "0.3.0"). */
  name: string
  /** Its base URL (http only). */
  url: string
}

export interface RoundRobin {
  /** The backends from now on, taken in turn per request of each path; an empty list answers 503. */
  route: (backends: Backend[]) => void
  /** Hook calls forwarded so far, by `<backend name> <path>`. */
  counts: () => Map<string, number>
  /** Hook calls forwarded so far, whichever backend took them, by `<path> <namespace>/<name>` of their parent. */
  byParent: () => Map<string, number>
  /** Requests that found no backend or whose backend failed (answered 502 or 503). */
  failures: () => number
  stop: () => Promise<void>
}

/** Listens on 127.0.0.1:`port` (the tier's hooksUrl), forwarding to no backend until `route`. */
export async function startRoundRobin (port: number): Promise<RoundRobin> {
  const agent = new Agent({ keepAlive: true })
  let backends: Backend[] = []
  /** The next backend's turn, by path. */
  const turns = new Map<string, number>()
  let failed = 0
  const counts = new Map<string, number>()
  const parents = new Map<string, number>()
  const add = (map: Map<string, number>, key: string): void => {
    map.set(key, (map.get(key) ?? 0) + 1)
  }
  const forward = (incoming: IncomingMessage, response: ServerResponse): void => {
    const path = incoming.url ?? '/'
    const turn = turns.get(path) ?? 0
    turns.set(path, turn + 1)
    const backend = backends[turn % Math.max(backends.length, 1)]
    if (backend === undefined) {
      failed++
      response.writeHead(503).end('no backend')
      return
    }
    if (path.startsWith('/hooks/')) {
      add(counts, `${backend.name} ${path}`)
      // The parent is named in the body, read beside the copy forwarded (the tier's bodies are small).
      const chunks: Buffer[] = []
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
      incoming.on('end', () => {
        try {
          const { namespace, name } = JSON.parse(Buffer.concat(chunks).toString('utf8')).parent.metadata
          add(parents, `${path} ${String(namespace)}/${String(name)}`)
        } catch {
          add(parents, `${path} (no parent)`)
        }
      })
    }
    const upstream = request(
      `${backend.url}${path}`,
      { method: incoming.method, headers: incoming.headers, agent },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(response)
      }
    )
    upstream.on('error', (error) => {
      failed++
      // Metacontroller retries a failed call with its backoff, as it would a pod that went away.
      if (!response.headersSent) response.writeHead(502).end(`backend ${backend.name}: ${error.message}`)
      else response.destroy(error)
    })
    incoming.pipe(upstream)
  }
  const server = createServer(forward)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => resolve())
  })
  return {
    route: (list) => {
      backends = [...list]
    },
    counts: () => new Map(counts),
    byParent: () => new Map(parents),
    failures: () => failed,
    stop: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
      agent.destroy()
    },
  }
}
