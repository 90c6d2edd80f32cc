// What the simulated API server knows about resources: the plural a CompositeController or a
// customize rule names, the kind objects carry, whether the resource is namespaced, and whether
// it has a status (the `status` subresource).

export interface ResourceType {
  apiVersion: string
  /** Plural, lowercase: what `parentResource`, `childResources` and related rules name. */
  resource: string
  kind: string
  namespaced: boolean
  /** Whether objects have a status (ConfigMaps and Secrets do not). */
  hasStatus: boolean
}

const JOBHOOKS = 'jobhooks.io/v1alpha1'

export const DEFAULT_RESOURCES: readonly ResourceType[] = [
  { apiVersion: 'batch/v1', resource: 'jobs', kind: 'Job', namespaced: true, hasStatus: true },
  { apiVersion: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, hasStatus: false },
  { apiVersion: 'v1', resource: 'secrets', kind: 'Secret', namespaced: true, hasStatus: false },
  { apiVersion: 'v1', resource: 'pods', kind: 'Pod', namespaced: true, hasStatus: true },
  {
    apiVersion: 'v1',
    resource: 'persistentvolumeclaims',
    kind: 'PersistentVolumeClaim',
    namespaced: true,
    hasStatus: true
  },
  { apiVersion: 'v1', resource: 'nodes', kind: 'Node', namespaced: false, hasStatus: true },
  {
    apiVersion: 'policy/v1',
    resource: 'poddisruptionbudgets',
    kind: 'PodDisruptionBudget',
    namespaced: true,
    hasStatus: true
  },
  { apiVersion: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false, hasStatus: true },
  { apiVersion: JOBHOOKS, resource: 'jobflows', kind: 'JobFlow', namespaced: true, hasStatus: true },
  { apiVersion: JOBHOOKS, resource: 'cronjobflows', kind: 'CronJobFlow', namespaced: true, hasStatus: true },
  { apiVersion: JOBHOOKS, resource: 'jobtemplates', kind: 'JobTemplate', namespaced: true, hasStatus: false },
  { apiVersion: JOBHOOKS, resource: 'jobflowtemplates', kind: 'JobFlowTemplate', namespaced: true, hasStatus: false },
  { apiVersion: JOBHOOKS, resource: 'daemonjobs', kind: 'DaemonJob', namespaced: true, hasStatus: true },
  { apiVersion: JOBHOOKS, resource: 'ephemeraljobs', kind: 'EphemeralJob', namespaced: true, hasStatus: true },
  { apiVersion: JOBHOOKS, resource: 'operationjobs', kind: 'OperationJob', namespaced: true, hasStatus: true },
  { apiVersion: JOBHOOKS, resource: 'collasets', kind: 'CollaSet', namespaced: true, hasStatus: true },
  // Kueue's objects, which manifests may hold beside a queued JobFlow (read by ./kueue.ts when modelled).
  ...['v1beta1', 'v1beta2'].flatMap(version => [
    kueueType(version, 'resourceflavors', 'ResourceFlavor', false),
    kueueType(version, 'clusterqueues', 'ClusterQueue', false),
    kueueType(version, 'localqueues', 'LocalQueue', true),
    kueueType(version, 'workloadpriorityclasses', 'WorkloadPriorityClass', false)
  ])
]

function kueueType (version: string, resource: string, kind: string, namespaced: boolean): ResourceType {
  return { apiVersion: `kueue.x-k8s.io/${version}`, resource, kind, namespaced, hasStatus: kind.endsWith('Queue') }
}

export class ResourceTable {
  private readonly types: ResourceType[]

  constructor (types: readonly ResourceType[] = DEFAULT_RESOURCES) {
    this.types = [...types]
  }

  add (type: ResourceType): void {
    this.types.push(type)
  }

  byResource (apiVersion: string, resource: string): ResourceType | undefined {
    return this.types.find(t => t.apiVersion === apiVersion && t.resource === resource)
  }

  byKind (apiVersion: string, kind: string): ResourceType | undefined {
    return this.types.find(t => t.apiVersion === apiVersion && t.kind === kind)
  }

  /** A type named either way (`{apiVersion, resource}` or `{apiVersion, kind}`); throws if unknown. */
  resolve (type: TypeName): ResourceType {
    const found = 'resource' in type
      ? this.byResource(type.apiVersion, type.resource)
      : this.byKind(type.apiVersion, type.kind)
    if (found === undefined) {
      throw new Error(`the simulator knows no resource ${JSON.stringify(type)}; add it to the resource table`)
    }
    return found
  }

  /** Namespaced unless known to be cluster-scoped. */
  isNamespaced (apiVersion: string, kind: string): boolean {
    return this.byKind(apiVersion, kind)?.namespaced ?? true
  }
}

export type TypeName = { apiVersion: string, resource: string } | { apiVersion: string, kind: string }
