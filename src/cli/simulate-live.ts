// `npm run simulate -- --live -f <manifest>` (or `--kubeconfig <file>`): a read-only preview
// against a real cluster. For each jobhooks object of the manifest it reads what Metacontroller
// would send the next sync (the object as the cluster has it, else as the manifest has it; its
// children; the related objects its customize hook asks for), calls the hooks in process, and
// prints what that sync would create, delete, write and do. The cluster gets GET requests only
// (live-cluster.ts) and the hooks' effects are recorded, never applied (live-preview.ts).
//
// Exit 0 when the preview ran (whatever it says the sync would do), 1 when it could not (a
// manifest that cannot be read, no cluster, an API error), 2 for bad arguments.
import type { KubeObject } from '../k8s/types.js'
import { JOBHOOKS_API_VERSION, parentKinds } from '../simulator/controllers.js'
import { loadManifest, ManifestError } from '../simulator/manifest.js'
import { ClusterError, LiveCluster } from './live-cluster.js'
import { Previewer, type ObjectPreview } from './live-preview.js'
import { objectLines } from './live-report.js'
import type { Impersonation } from '../kube/client.js'
import { LIVE_USAGE, parseLiveArguments, UsageError, type LiveArguments, type Write } from './arguments.js'

/** The kinds a JobFlow refers to by name: the manifest's stand in for the cluster's. */
const TEMPLATE_KINDS = ['JobTemplate', 'JobFlowTemplate']

/**
 * `kubeContext`: a kubeconfig context instead of the current one (`kubectl jobhooks preview
 * --context`); `impersonate`: whom to read as (`--as`, `--as-group`).
 */
export async function liveMain (
  argv: string[], write: Write, writeError: Write, kubeContext?: string, impersonate?: Impersonation
): Promise<number> {
  let args: LiveArguments | 'help'
  try {
    args = parseLiveArguments(argv)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    writeError(`simulate: ${error.message}`)
    writeError(LIVE_USAGE)
    return 2
  }
  if (args === 'help') {
    write(LIVE_USAGE)
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
  // Every kind's parent is previewed; the manifest's templates (TEMPLATE_KINDS) are what JobFlows refer to.
  const previewed = parentKinds().map(k => k.kind)
  const ours = objects.filter(o => o.apiVersion === JOBHOOKS_API_VERSION && previewed.includes(o.kind))
  if (ours.length === 0) {
    writeError(`simulate: ${args.file} has no ${previewed.join(', ')} (apiVersion ${JOBHOOKS_API_VERSION}) to preview`)
    return 1
  }

  let previews: ObjectPreview[]
  let cluster: LiveCluster
  // One instant for the whole preview: every hook sees the same clock.
  const now = new Date()
  try {
    cluster = await LiveCluster.connect(args.kubeconfig, process.env, kubeContext, impersonate)
    const namespace = args.namespace ?? cluster.contextNamespace ?? 'default'
    const context = objects
      .filter(o => o.apiVersion === JOBHOOKS_API_VERSION && TEMPLATE_KINDS.includes(o.kind))
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

  print(args, cluster, now, previews, write)
  return 0
}

/** The previews, as text or JSON, with what the cluster was asked. */
function print (args: LiveArguments, cluster: LiveCluster, now: Date, previews: ObjectPreview[], write: Write): void {
  const server = cluster.server.origin
  if (args.json) {
    const objects = previews.map(jsonOf)
    write(JSON.stringify({ server, at: now.toISOString(), objects, reads: cluster.reads, written: false }, null, 2))
    return
  }
  write(`Live preview of ${args.file} against ${server} at ${now.toISOString()}: ` +
    'the next sync of each object, with the hooks run in process')
  for (const preview of previews) {
    write('')
    for (const line of objectLines(preview)) write(line)
  }
  write('')
  write(`Nothing was written (${cluster.reads} GET requests, no other).`)
}

/** The preview as JSON: everything but the phase field's name, which `status` is read with. */
function jsonOf (preview: ObjectPreview): Omit<ObjectPreview, 'phaseField'> {
  const { phaseField: _phaseField, ...rest } = preview
  return rest
}
