// The plugin's line to the API server: the project's one API client (src/kube/client.ts) for the
// kubeconfig kubectl would read, with the plugin's --kubeconfig, --context, --as, --as-group and
// --request-timeout. JSON reads, its writes (merge patches of annotations and spec.suspend, the
// JobFlow that submit creates) and the two streams kubectl keeps open (a watch, a pod's log) are
// that client's; its errors read as kubectl's.
import { ApiClient } from '../../kube/client.js'
import { KubeError } from '../../kube/errors.js'
import { KubeconfigError } from '../../kube/kubeconfig.js'

export { errorCode, KubeError, statusError } from '../../kube/errors.js'

/** The client every command of the plugin uses. */
export type KubeClient = ApiClient

export interface ClientOptions {
  kubeconfig?: string
  context?: string
  /** --as: the user to act as. */
  as?: string
  /** --as-group: the groups to act as (repeatable). */
  asGroups?: readonly string[]
  /** How long a request may wait for its answer (kubectl's --request-timeout). */
  timeoutMs: number
  env?: NodeJS.ProcessEnv
}

/** The client for these options; a kubeconfig that cannot be used is a kubectl `error: …`. */
export async function connect (options: ClientOptions): Promise<KubeClient> {
  const impersonate = {
    ...(options.as !== undefined ? { user: options.as } : {}),
    ...(options.asGroups !== undefined ? { groups: options.asGroups } : {})
  }
  try {
    return await ApiClient.connect({
      env: options.env ?? process.env,
      ...(options.kubeconfig !== undefined ? { kubeconfig: options.kubeconfig } : {}),
      ...(options.context !== undefined ? { context: options.context } : {})
    }, { timeoutMs: options.timeoutMs, userAgent: 'kubectl-jobhooks', impersonate })
  } catch (error) {
    if (error instanceof KubeconfigError) throw new KubeError(`error: ${error.message}`)
    throw error
  }
}
