// What every end-to-end test file needs around its scenarios: the cluster, a namespace of its
// own per scenario, JSON reads through kubectl, and a teardown that deletes what the scenarios
// made (a user's cluster stays clean) before it stops the processes.
import { stringify } from 'yaml'
import { apply, clusterFromEnv, type Cluster } from './cluster.js'

interface Tap {
  comment: (message: string) => void
  teardown: (fn: () => unknown) => void
}

export interface Scenarios {
  cluster: Cluster
  /** A new namespace `e2e-<name>-…`, deleted at the end. */
  namespace: (name: string) => Promise<string>
  /** A cluster-scoped object the scenarios created (a Node), deleted at the end. */
  track: (kind: string, name: string) => void
  /** `kubectl <args> -o json`, parsed; throws with kubectl's message when it fails. */
  getJson: (args: string[]) => Promise<any>
}

export async function startScenarios (t: Tap): Promise<Scenarios> {
  const cluster = await clusterFromEnv()
  t.comment(`running against ${cluster.metacontroller}${cluster.logDir !== undefined ? `, logs in ${cluster.logDir}` : ''}`)
  const namespaces: string[] = []
  const tracked = new Map<string, string[]>()
  t.teardown(async () => {
    if (namespaces.length > 0) await cluster.kubectl(['delete', 'namespace', '--wait=false', ...namespaces])
    for (const [kind, names] of tracked) await cluster.kubectl(['delete', kind, '--wait=false', ...names])
    await cluster.stop()
  })
  return {
    cluster,
    async namespace (name) {
      const ns = `e2e-${name}-${Date.now().toString(36)}-${namespaces.length}`
      await apply(cluster.kubectl, stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { 'jobhooks.io/e2e': 'true' } } }))
      namespaces.push(ns)
      return ns
    },
    track (kind, name) {
      tracked.set(kind, [...(tracked.get(kind) ?? []), name])
    },
    async getJson (args) {
      const result = await cluster.kubectl([...args, '-o', 'json'])
      if (result.code !== 0) throw new Error(result.stderr)
      return JSON.parse(result.stdout)
    }
  }
}
