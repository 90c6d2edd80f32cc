// The cluster as the live preview (`npm run simulate -- --live`) reads it: the credentials as
// kubectl finds them, and nothing but GET requests, for one object or for a list that a label
// selector bounds. There is no method here that sends anything else: the preview cannot write.
import { ApiClient, type Impersonation } from '../kube/client.js'
import { ConnectionError, describe } from '../kube/errors.js'
import { KubeconfigError, loadKubeconfig } from '../kube/kubeconfig.js'
import type { KubeObject } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'
import { ResourceTable, type ResourceType, type TypeName } from '../simulator/resources.js'

/** The preview could not read what it needs: no credentials, no answer, or an API error. */
export class ClusterError extends Error {}

/** How long one read may take before the preview gives up on the cluster. */
const READ_TIMEOUT_MS = 15_000

export class LiveCluster {
  private readonly types = new ResourceTable()
  private readonly discovered = new Set<string>()
  /** How many requests were sent (all of them GETs). */
  reads = 0

  private constructor (
    private readonly client: ApiClient,
    /** The namespace of the kubeconfig's current context, if it names one. */
    readonly contextNamespace: string | undefined,
    /** Which kubeconfig, for messages. */
    readonly source: string
  ) {}

  /** The API server's address. */
  get server (): URL {
    return this.client.server
  }

  /**
   * The cluster of `kubeconfig`, or, without one, of the files $KUBECONFIG names, else of
   * ~/.kube/config: where kubectl looks (src/kube/kubeconfig.ts); `context` instead of its current
   * one. The in-cluster service account is never used, so a tool run in a Pod by mistake does not
   * act with the service's own rights.
   */
  static async connect (
    kubeconfig: string | undefined, env: NodeJS.ProcessEnv = process.env, context?: string,
    impersonate?: Impersonation
  ): Promise<LiveCluster> {
    try {
      const loaded = await loadKubeconfig({
        env,
        ...(kubeconfig !== undefined ? { kubeconfig } : {}),
        ...(context !== undefined ? { context } : {})
      })
      const client = new ApiClient(loaded.kubeConfig, {
        timeoutMs: READ_TIMEOUT_MS,
        userAgent: 'jobhooks-preview',
        ...(impersonate !== undefined ? { impersonate } : {})
      })
      return new LiveCluster(client, loaded.contextNamespace, loaded.source)
    } catch (error) {
      if (error instanceof KubeconfigError) throw new ClusterError(error.message)
      throw error
    }
  }

  /** A type the table knows, named either way. */
  private known (type: TypeName): ResourceType | undefined {
    return 'resource' in type
      ? this.types.byResource(type.apiVersion, type.resource)
      : this.types.byKind(type.apiVersion, type.kind)
  }

  /**
   * The resource type a CompositeController or a related rule names, asking the API server's discovery about one the
   * table lacks.
   */
  async resolve (type: TypeName): Promise<ResourceType> {
    const known = this.known(type)
    if (known !== undefined) return known
    if (!this.discovered.has(type.apiVersion)) {
      this.discovered.add(type.apiVersion)
      const group = type.apiVersion.includes('/') ? `/apis/${type.apiVersion}` : `/api/${type.apiVersion}`
      const list = await this.read(group)
      const resources = isRecord(list) && Array.isArray(list.resources) ? list.resources.filter(isRecord) : []
      for (const r of resources) {
        // Subresources (`pods/status`) are not types of their own.
        if (typeof r.name !== 'string' || r.name.includes('/') || typeof r.kind !== 'string') continue
        this.types.add({
          apiVersion: type.apiVersion,
          resource: r.name,
          kind: r.kind,
          namespaced: r.namespaced === true,
          hasStatus: true
        })
      }
    }
    const found = this.known(type)
    if (found === undefined) {
      const name = 'resource' in type ? type.resource : type.kind
      throw new ClusterError(`the API server serves no ${name} in ${type.apiVersion}`)
    }
    return found
  }

  /** One object, or undefined when the API server has none of that name. */
  async get (type: ResourceType, namespace: string | undefined, name: string): Promise<KubeObject | undefined> {
    const object = await this.read(`${collectionPath(type, namespace)}/${encodeURIComponent(name)}`, true)
    return object === undefined ? undefined : typed(object as KubeObject, type)
  }

  /**
   * The objects of a type, in one namespace (or all, or cluster-scoped ones), that `labelSelector` selects (`kubectl
   * get -l` syntax; empty: all).
   */
  async list (type: ResourceType, namespace: string | undefined, labelSelector = ''): Promise<KubeObject[]> {
    const query = labelSelector === '' ? '' : `?labelSelector=${encodeURIComponent(labelSelector)}`
    const list = await this.read(`${collectionPath(type, namespace)}${query}`)
    const items = isRecord(list) && Array.isArray(list.items) ? list.items : []
    return items.filter(isRecord).map(item => typed(item as unknown as KubeObject, type))
  }

  /** A GET of `path`: the parsed answer; undefined for a 404 when `absentOk`; a ClusterError for anything else. */
  private async read (path: string, absentOk = false): Promise<unknown> {
    let answer: { statusCode: number, body: string }
    this.reads += 1
    try {
      answer = await this.client.send({ method: 'GET', path })
    } catch (error) {
      const why = error instanceof ConnectionError && error.code === 'TIMEOUT'
        ? `no answer within ${READ_TIMEOUT_MS / 1000} s`
        : describe(error)
      throw new ClusterError(`cannot reach the API server at ${this.server.origin} (${this.source}): ${why}`)
    }
    if (answer.statusCode === 404 && absentOk) return undefined
    let body: unknown
    try {
      body = JSON.parse(answer.body)
    } catch {
      body = undefined
    }
    if (answer.statusCode !== 200) {
      const message = isRecord(body) && typeof body.message === 'string'
        ? body.message
        : answer.body.trim().slice(0, 200)
      throw new ClusterError(`GET ${path}: HTTP ${answer.statusCode}: ${message}`)
    }
    if (body === undefined) throw new ClusterError(`GET ${path}: the answer is not JSON`)
    return body
  }
}

/**
 * `/api/v1/namespaces/<ns>/pods`, `/apis/batch/v1/namespaces/<ns>/jobs`, `/api/v1/nodes`; all namespaces without one.
 */
export function collectionPath (type: ResourceType, namespace: string | undefined): string {
  const prefix = type.apiVersion.includes('/') ? `/apis/${type.apiVersion}` : `/api/${type.apiVersion}`
  if (!type.namespaced || namespace === undefined) return `${prefix}/${type.resource}`
  return `${prefix}/namespaces/${encodeURIComponent(namespace)}/${type.resource}`
}

/** The items of a list come without apiVersion and kind; the hooks read them. */
function typed (object: KubeObject, type: ResourceType): KubeObject {
  return { ...object, apiVersion: type.apiVersion, kind: type.kind }
}
