// Where the cluster credentials come from at start-up: KUBECONFIG, the Pod's service account, or
// none (then effects are only recorded). Kept apart from the executor that uses them.
import { existsSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import type { KubeConfig } from '@kubernetes/client-node'
import { readKubeconfigFiles } from '../kube/kubeconfig.js'

/** Where the service account's token is mounted in a Pod. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount'

export type CredentialSource =
  | { source: 'kubeconfig' | 'in-cluster', kubeConfig: KubeConfig, description: string }
  | {
    source: 'none'
    reason: string
    /** Credentials were expected (in a Pod) but are missing. */
    unexpected?: boolean
  }

/**
 * The cluster credentials of this process: the files KUBECONFIG names when it is set (an explicit
 * choice, as for kubectl), else the Pod's service account when running in a cluster
 * (KUBERNETES_SERVICE_HOST set and the token mounted), else none. `~/.kube/config` alone is not
 * used: a local run does not write to whatever cluster it points at. A KUBECONFIG that cannot be
 * read or names no cluster is an error, not a silent dry-run.
 */
export async function loadCredentials (
  env: NodeJS.ProcessEnv = process.env, serviceAccountPrefix = ''
): Promise<CredentialSource> {
  const files = (env.KUBECONFIG ?? '').split(delimiter).filter(file => file !== '')
  if (files.length > 0) {
    let kubeConfig: KubeConfig
    try {
      // Merged as kubectl merges a list (src/kube/kubeconfig.ts); here every file must exist.
      kubeConfig = await readKubeconfigFiles(files)
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error)
      throw new Error(`KUBECONFIG=${env.KUBECONFIG ?? ''} cannot be read: ${why}`)
    }
    const cluster = kubeConfig.getCurrentCluster()
    if (cluster === null || kubeConfig.getCurrentUser() === null) {
      throw new Error(`KUBECONFIG=${env.KUBECONFIG ?? ''} has no current context with a cluster and a user`)
    }
    const description = `KUBECONFIG ${files.join(delimiter)}, server ${cluster.server}`
    return { source: 'kubeconfig', kubeConfig, description }
  }
  const host = env.KUBERNETES_SERVICE_HOST
  if (host !== undefined && host !== '') {
    const token = join(serviceAccountPrefix + SERVICE_ACCOUNT_DIR, 'token')
    if (!existsSync(token)) {
      const reason = `in a cluster but no service account token at ${token} (automountServiceAccountToken is false?)`
      return { source: 'none', reason, unexpected: true }
    }
    const { KubeConfig } = await import('@kubernetes/client-node')
    const kubeConfig = new KubeConfig()
    // Reads KUBERNETES_SERVICE_HOST and _PORT from the process's environment itself.
    kubeConfig.loadFromCluster(serviceAccountPrefix)
    const description = `service account, server ${kubeConfig.getCurrentCluster()?.server ?? '?'}`
    return { source: 'in-cluster', kubeConfig, description }
  }
  return { source: 'none', reason: 'neither KUBECONFIG nor KUBERNETES_SERVICE_HOST is set' }
}
