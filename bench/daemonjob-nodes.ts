// The Nodes of the DaemonJob benchmark's cluster, as the API server returns them: labels, taints,
// status with conditions and a busy kubelet's images, managedFields. Deterministic: a Node's name
// and state follow from its position (bench/daemonjob.ts says which states and how often).
import type { KubeObject } from '../src/k8s/types.js'
import { fixtureUid, k8sTime } from './fixture-common.js'

/** The cluster's clock: the Nodes, the DaemonJob and its Jobs date from around it. */
export const T0 = Date.parse('2026-01-02T01:00:00Z')

export type NodeState = 'excluded' | 'cordoned' | 'tainted' | 'succeeded' | 'ttl-deleted' | 'running' | 'failed' | 'new'

export function nodeName (i: number, size: number): string {
  return `worker-${String(i).padStart(Math.max(4, String(size - 1).length), '0')}.pool-a.internal`
}

export function stateOf (i: number): NodeState {
  if (i % 10 === 0) return 'excluded'
  if (i % 20 === 5) return 'cordoned'
  if (i % 20 === 15) return 'tainted'
  if (i % 25 === 24) return 'failed'
  if (i % 6 === 1) return 'new'
  const fifth = i % 5
  if (fifth === 1 || fifth === 2 || fifth === 3) return i % 50 === 17 ? 'ttl-deleted' : 'succeeded'
  return 'running'
}

/**
 * What else a busy kubelet lists in `status.images` (it reports up to 50, `--node-status-max-images`):
 * 37 more application images, each by digest and by tag. With them a Node is about 11 KiB of JSON,
 * as Nodes of a busy cluster are.
 */
const BUSY_IMAGES = Array.from({ length: 37 }, (_, k) => {
  const repository = `registry.example.com/team-${String(k % 9).padStart(2, '0')}/service-${String(k).padStart(2, '0')}`
  const digest = Array.from({ length: 4 }, (_, part) => fixtureUid(`image/${k}/${part}`).replace(/-/g, ''))
    .join('')
    .slice(0, 64)
  return {
    names: [`${repository}@sha256:${digest}`, `${repository}:v2.${k % 13}.${k % 7}`],
    sizeBytes: 20_000_000 + k * 1_234_567,
  }
})

export function node (name: string, i: number, state: NodeState): KubeObject {
  const created = k8sTime(T0 - 86_400_000 - i * 1000)
  const heartbeat = k8sTime(T0 + 3_000_000)
  const taints: Array<Record<string, string>> = []
  if (state === 'cordoned') {
    taints.push({ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule', timeAdded: k8sTime(T0) })
  }
  if (state === 'tainted') taints.push({ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' })
  if (i % 7 === 3) taints.push({ key: 'workload', value: 'batch', effect: 'NoSchedule' })
  const cidr = `10.${Math.floor(i / 250) + 64}.${i % 250}.0/24`
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      uid: fixtureUid(`node/${name}`),
      resourceVersion: String(900_000 + i * 13),
      creationTimestamp: created,
      labels: {
        'beta.kubernetes.io/arch': 'amd64',
        'beta.kubernetes.io/instance-type': 'm7i.2xlarge',
        'beta.kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'node.kubernetes.io/instance-type': 'm7i.2xlarge',
        'topology.kubernetes.io/region': 'eu-west-1',
        'topology.kubernetes.io/zone': `eu-west-1${'abc'[i % 3] ?? 'a'}`,
      },
      annotations: {
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
      },
      managedFields: [
        {
          manager: 'kubelet',
          operation: 'Update',
          apiVersion: 'v1',
          time: created,
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': {
              'f:annotations': { '.': {}, 'f:volumes.kubernetes.io/controller-managed-attach-detach': {} },
              'f:labels': { '.': {}, 'f:kubernetes.io/hostname': {} },
            },
          },
        },
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          apiVersion: 'v1',
          time: created,
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:spec': { 'f:podCIDR': {}, 'f:podCIDRs': { '.': {}, [`v:"${cidr}"`]: {} } } },
        },
        {
          manager: 'kubelet',
          operation: 'Update',
          apiVersion: 'v1',
          time: heartbeat,
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:status': { 'f:conditions': { 'k:{"type":"Ready"}': { 'f:lastHeartbeatTime': {} } }, 'f:images': {} },
          },
          subresource: 'status',
        },
      ],
    },
    spec: {
      podCIDR: cidr,
      podCIDRs: [cidr],
      providerID: `aws:///eu-west-1a/i-${fixtureUid(name).slice(0, 17).replace(/-/g, '')}`,
      ...(state === 'cordoned' ? { unschedulable: true } : {}),
      ...(taints.length > 0 ? { taints } : {}),
    },
    status: {
      capacity: {
        cpu: '8',
        'ephemeral-storage': '104845292Ki',
        'hugepages-2Mi': '0',
        memory: '32386560Ki',
        pods: '58',
      },
      allocatable: {
        cpu: '7910m',
        'ephemeral-storage': '95551679124',
        'hugepages-2Mi': '0',
        memory: '31369728Ki',
        pods: '58',
      },
      conditions: [
        {
          type: 'MemoryPressure',
          status: 'False',
          lastHeartbeatTime: heartbeat,
          lastTransitionTime: created,
          reason: 'KubeletHasSufficientMemory',
          message: 'kubelet has sufficient memory available',
        },
        {
          type: 'DiskPressure',
          status: 'False',
          lastHeartbeatTime: heartbeat,
          lastTransitionTime: created,
          reason: 'KubeletHasNoDiskPressure',
          message: 'kubelet has no disk pressure',
        },
        {
          type: 'PIDPressure',
          status: 'False',
          lastHeartbeatTime: heartbeat,
          lastTransitionTime: created,
          reason: 'KubeletHasSufficientPID',
          message: 'kubelet has sufficient PID available',
        },
        {
          type: 'Ready',
          status: 'True',
          lastHeartbeatTime: heartbeat,
          lastTransitionTime: created,
          reason: 'KubeletReady',
          message: 'kubelet is posting ready status',
        },
      ],
      addresses: [
        { type: 'InternalIP', address: `10.0.${Math.floor(i / 250)}.${i % 250}` },
        { type: 'Hostname', address: name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: fixtureUid(`machine/${name}`).replace(/-/g, ''),
        systemUUID: fixtureUid(`system/${name}`),
        bootID: fixtureUid(`boot/${name}`),
        kernelVersion: '6.1.119-129.201.amzn2023.x86_64',
        osImage: 'Amazon Linux 2023.6.20250107',
        containerRuntimeVersion: 'containerd://1.7.25',
        kubeletVersion: 'v1.34.2-eks-1d1a4bc',
        kubeProxyVersion: 'v1.34.2-eks-1d1a4bc',
        operatingSystem: 'linux',
        architecture: 'amd64',
      },
      images: [
        {
          names: [
            'registry.example.com/sre/node-audit@sha256:' + fixtureUid(`img/${name}`).replace(/-/g, '').padEnd(64, '0'),
            'registry.example.com/sre/node-audit:3.2.1',
          ],
          sizeBytes: 48_213_551,
        },
        { names: ['602401143452.dkr.ecr.eu-west-1.amazonaws.com/amazon-k8s-cni:v1.19.2'], sizeBytes: 65_412_808 },
        {
          names: ['602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/kube-proxy:v1.34.2-minimal-eksbuild.2'],
          sizeBytes: 37_100_417,
        },
        ...BUSY_IMAGES,
      ],
    },
  }
}
