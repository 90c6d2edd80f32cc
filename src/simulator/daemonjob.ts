// DaemonJob in the simulator: its CompositeController as manifests/controllers/daemonjob.yaml
// declares it, and Nodes as the simulated API server stores them (cluster-scoped).
import type { KubeObject } from '../k8s/types.js'
import type { ControllerConfig, HookVersion } from './types.js'
import { controllerFromManifest } from './controllers.js'

/** DaemonJob: children Jobs and ConfigMaps, customize asks for every Node. */
export function daemonjobController (hookVersion?: HookVersion): ControllerConfig {
  return controllerFromManifest('daemonjobs', hookVersion)
}

export interface NodeOptions {
  labels?: Record<string, string>
  /** Cordoned: `spec.unschedulable` and the taint the node controller adds for it. */
  cordoned?: boolean
  taints?: Array<{ key: string, value?: string, effect: string }>
}

/** A Ready Node as a kubelet registers it. */
export function simNode (name: string, options: NodeOptions = {}): KubeObject {
  const taints = [
    ...(options.cordoned === true ? [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }] : []),
    ...(options.taints ?? [])
  ]
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', ...options.labels } },
    spec: { ...(options.cordoned === true ? { unschedulable: true } : {}), ...(taints.length > 0 ? { taints } : {}) },
    status: {
      allocatable: { cpu: '4', memory: '16Gi', pods: '110' },
      conditions: [
        { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' }
      ]
    }
  }
}
