// Kubeconfig files read as kubectl reads them: which files (--kubeconfig, else every file
// $KUBECONFIG lists, else ~/.kube/config), how a list merges (the first file to name a cluster, a
// user or a context wins; the current context is the first one set), and --context.
// @kubernetes/client-node parses each file and keeps the credentials (tokens, token files, client
// certificates, exec and auth-provider plugins, the CA, insecure-skip-tls-verify, proxy-url); it is
// loaded only when a kubeconfig is read, so a service without credentials never loads it.
import { existsSync } from 'node:fs'
import { homedir } from 'node:os'
import { delimiter, join } from 'node:path'
import type { KubeConfig } from '@kubernetes/client-node'

/** A kubeconfig that cannot be used: missing, unreadable, without the context asked for or a server. */
export class KubeconfigError extends Error {}

/** Where to look, as kubectl's flags say. */
export interface KubeconfigChoice {
  /** --kubeconfig: this file only. */
  kubeconfig?: string
  /** --context: this context instead of the current one. */
  context?: string
  /** Where $KUBECONFIG is read (the process's environment unless given). */
  env?: NodeJS.ProcessEnv
}

/** A kubeconfig as kubectl reads it: its credentials, its server, its context's namespace. */
export interface LoadedKubeconfig {
  kubeConfig: KubeConfig
  server: URL
  contextNamespace: string | undefined
  /** Which files, for messages. */
  source: string
}

/**
 * The files of a KUBECONFIG-style list merged as kubectl merges them: a cluster, user or context
 * named in two files is the first file's; the current context is the first file's that sets one.
 * Every file must be readable (a KUBECONFIG naming a missing file is an error, not a silent skip).
 */
export async function readKubeconfigFiles (files: readonly string[]): Promise<KubeConfig> {
  const { KubeConfig } = await import('@kubernetes/client-node')
  const configs = files.map(file => {
    const config = new KubeConfig()
    // Relative paths (certificate files, an exec command) are taken from the file's directory.
    config.loadFromFile(file)
    return config
  })
  if (configs.length === 1) return configs[0] as KubeConfig
  const firstOf = <T extends { name: string }>(lists: T[][]): T[] => {
    const seen = new Set<string>()
    return lists.flat().filter(item => !seen.has(item.name) && seen.add(item.name) !== undefined)
  }
  const merged = new KubeConfig()
  merged.loadFromOptions({
    clusters: firstOf(configs.map(c => c.clusters)),
    users: firstOf(configs.map(c => c.users)),
    contexts: firstOf(configs.map(c => c.contexts)),
    currentContext: configs.map(c => c.getCurrentContext()).find(name => name !== undefined && name !== '') ?? ''
  })
  return merged
}

/** The files kubectl would read: --kubeconfig, else $KUBECONFIG's list, else ~/.kube/config. */
export function kubeconfigFiles (choice: KubeconfigChoice): string[] {
  if (choice.kubeconfig !== undefined) {
    if (!existsSync(choice.kubeconfig)) throw new KubeconfigError(`--kubeconfig ${choice.kubeconfig}: no such file`)
    return [choice.kubeconfig]
  }
  const listed = (choice.env ?? process.env).KUBECONFIG ?? ''
  // kubectl skips the files of the list that do not exist, and fails only when none does.
  const files = listed.split(delimiter).filter(file => file !== '')
  if (files.length > 0) {
    const present = files.filter(file => existsSync(file))
    if (present.length === 0) throw new KubeconfigError(`no cluster credentials: none of KUBECONFIG=${listed} exists`)
    return present
  }
  const home = join(homedir(), '.kube', 'config')
  if (!existsSync(home)) {
    throw new KubeconfigError(`no cluster credentials: KUBECONFIG is not set and ${home} does not exist ` +
      '(name a file with --kubeconfig)')
  }
  return [home]
}

/**
 * The cluster of the kubeconfig kubectl would read (kubeconfigFiles), in `choice.context` instead
 * of the current context (kubectl --context). The in-cluster service account is never used, so a
 * tool run in a Pod by mistake does not act with the service's own rights.
 */
export async function loadKubeconfig (choice: KubeconfigChoice = {}): Promise<LoadedKubeconfig> {
  const files = kubeconfigFiles(choice)
  const source = files.join(delimiter)
  let kubeConfig: KubeConfig
  try {
    kubeConfig = await readKubeconfigFiles(files)
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error)
    throw new KubeconfigError(`the kubeconfig ${source} cannot be read: ${why}`)
  }
  if (choice.context !== undefined) {
    if (kubeConfig.getContextObject(choice.context) === null) {
      throw new KubeconfigError(`context was not found for specified context: ${choice.context}`)
    }
    kubeConfig.setCurrentContext(choice.context)
  }
  if (kubeConfig.getCurrentCluster() === null || kubeConfig.getCurrentUser() === null) {
    throw new KubeconfigError(`the kubeconfig ${source} has no current context with a cluster and a user`)
  }
  const namespace = kubeConfig.getContextObject(kubeConfig.getCurrentContext())?.namespace
  return {
    kubeConfig,
    server: serverOf(kubeConfig, `the kubeconfig ${source}`),
    contextNamespace: namespace !== undefined && namespace !== '' ? namespace : undefined,
    source
  }
}

/** The address of the current cluster's API server. */
export function serverOf (kubeConfig: KubeConfig, source = 'the kubeconfig'): URL {
  const server = kubeConfig.getCurrentCluster()?.server ?? ''
  try {
    return new URL(server)
  } catch {
    throw new KubeconfigError(`${source} names no usable server (${JSON.stringify(server)})`)
  }
}
