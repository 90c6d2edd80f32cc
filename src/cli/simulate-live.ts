// `npm run simulate -- --live -f <manifest>` (or `--kubeconfig <file>`): a read-only preview
// against a real cluster. For each jobhooks object of the manifest it reads what Metacontroller
// would send the next sync (the object as the cluster has it, else as the manifest has it; its
// children; the related objects its customize hook asks for), calls the hooks in process, and
// prints what that sync would create, delete, write and do. The cluster gets GET requests only
// (live-cluster.ts) and the hooks' effects are recorded, never applied (live-preview.ts).
//
// Exit 0 when the preview ran (whatever it says the sync would do), 1 when it could not (a
// manifest that cannot be read, no cluster, an API error), 2 for bad arguments.
import { parseArgs } from 'node:util'
import type { KubeObject } from '../k8s/types.js'
import { JOBHOOKS_API_VERSION } from '../simulator/controllers.js'
import { loadManifest, ManifestError } from '../simulator/manifest.js'
import { ClusterError, LiveCluster } from './live-cluster.js'
import { Previewer, type ObjectPreview } from './live-preview.js'
import { objectLines } from './live-report.js'
import type { Write } from './simulate.js'

const USAGE = `usage: npm run simulate -- --live -f <manifest.yaml> [-n <namespace>] [--output json]
       npm run simulate -- --kubeconfig <file> -f <manifest.yaml> [-n <namespace>] [--output json]

  Reads from the cluster what Metacontroller would send the next sync of each jobhooks object of
  the manifest, runs the hooks in process and prints what that sync would create, delete, write
  and do. Only GET requests reach the cluster; nothing is written.

  --live              the cluster of $KUBECONFIG, else of ~/.kube/config (as kubectl finds it)
  --kubeconfig FILE   the cluster of FILE
  -f FILE             the manifest (may also be given bare)
  -n, --namespace NS  for objects that name none (default: the context's namespace, else default)
  --output json       the same as JSON, for scripts`

/** The kinds whose next sync is previewed; JobTemplates of the manifest are what JobFlows refer to. */
const PREVIEWED = new Set(['JobFlow', 'DaemonJob', 'EphemeralJob', 'OperationJob', 'CollaSet'])

interface Arguments {
  file: string
  kubeconfig?: string
  namespace?: string
  json: boolean
}

class UsageError extends Error {}

function parseArguments (argv: string[]): Arguments | 'help' {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        live: { type: 'boolean' },
        kubeconfig: { type: 'string' },
        file: { type: 'string', short: 'f', multiple: true },
        namespace: { type: 'string', short: 'n' },
        output: { type: 'string', short: 'o' },
        help: { type: 'boolean', short: 'h' }
      }
    })
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  const { values, positionals } = parsed
  if (values.help === true) return 'help'
  if (values.live !== true && values.kubeconfig === undefined) throw new UsageError('say which cluster: --live or --kubeconfig <file>')
  if (values.kubeconfig === '') throw new UsageError('--kubeconfig needs a file')
  const files = [...(values.file ?? []), ...positionals]
  if (files.length !== 1) throw new UsageError(files.length === 0 ? 'name the manifest to preview: -f <manifest.yaml>' : `one manifest at a time, not ${files.length}`)
  if (values.namespace === '') throw new UsageError('--namespace needs a value')
  const output = values.output ?? 'text'
  if (output !== 'text' && output !== 'json') throw new UsageError(`--output must be json (or text, the default), not ${JSON.stringify(output)}`)
  return {
    file: files[0] as string,
    ...(values.kubeconfig !== undefined ? { kubeconfig: values.kubeconfig } : {}),
    ...(values.namespace !== undefined ? { namespace: values.namespace } : {}),
    json: output === 'json'
  }
}

export async function liveMain (argv: string[], write: Write, writeError: Write): Promise<number> {
  let args: Arguments | 'help'
  try {
    args = parseArguments(argv)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    writeError(`simulate: ${error.message}`)
    writeError(USAGE)
    return 2
  }
  if (args === 'help') {
    write(USAGE)
    return 0
  }

  let objects: KubeObject[]
  try {
    objects = loadManifest(args.file)
  } catch (error) {
    if (!(error instanceof ManifestError)) throw error
    writeError(`simulate: ${error.message}`)
    return 1
  }
  const ours = objects.filter(o => o.apiVersion === JOBHOOKS_API_VERSION && PREVIEWED.has(o.kind))
  if (ours.length === 0) {
    writeError(`simulate: ${args.file} has no ${[...PREVIEWED].join(', ')} (apiVersion ${JOBHOOKS_API_VERSION}) to preview`)
    return 1
  }

  let previews: ObjectPreview[]
  let cluster: LiveCluster
  // One instant for the whole preview: every hook sees the same clock.
  const now = new Date()
  try {
    cluster = await LiveCluster.connect(args.kubeconfig)
    const namespace = args.namespace ?? cluster.contextNamespace ?? 'default'
    const context = objects
      .filter(o => o.apiVersion === JOBHOOKS_API_VERSION && o.kind === 'JobTemplate')
      .map(o => ({ ...o, metadata: { ...o.metadata, namespace: o.metadata.namespace ?? namespace } }))
    const previewer = await Previewer.start(cluster, now)
    try {
      previews = []
      for (const object of ours) previews.push(await previewer.preview(object, namespace, context))
    } finally {
      await previewer.close()
    }
  } catch (error) {
    if (!(error instanceof ClusterError)) throw error
    writeError(`simulate: ${error.message}`)
    writeError('simulate: no preview; nothing was written')
    return 1
  }

  if (args.json) {
    write(JSON.stringify({ server: cluster.server.origin, at: now.toISOString(), objects: previews.map(jsonOf), reads: cluster.reads, written: false }, null, 2))
    return 0
  }
  write(`Live preview of ${args.file} against ${cluster.server.origin} at ${now.toISOString()}: the next sync of each object, with the hooks run in process`)
  for (const preview of previews) {
    write('')
    for (const line of objectLines(preview)) write(line)
  }
  write('')
  write(`Nothing was written (${cluster.reads} GET requests, no other).`)
  return 0
}

/** The preview as JSON: everything but the phase field's name, which `status` is read with. */
function jsonOf (preview: ObjectPreview): Omit<ObjectPreview, 'phaseField'> {
  const { phaseField: _phaseField, ...rest } = preview
  return rest
}
