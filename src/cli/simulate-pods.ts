// What `npm run simulate` adds for the kinds that act on Pods (EphemeralJob, OperationJob,
// CollaSet): the Pods themselves. A manifest's Pods are created as written; a Deployment stands
// for its ReplicaSet and keeps `replicas` Pods of its template alive (a Pod evicted is made
// again, as the ReplicaSet controller would); a scripted kubelet brings every Pod up, and the
// ephemeral containers injected into a Pod exit 0 unless `--fail` or `--hang` names the Pod or
// its workload.
import { createHash } from 'node:crypto'
import type { KubeObject } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'
import { nameSuffix } from '../controllers/collaset/pods.js'
import { PodKubelet } from '../simulator/collaset.js'
import type { Simulator } from '../simulator/simulator.js'

/** The ReplicaSets that stand between a Deployment and its Pods: the simulator must know the type. */
export const REPLICASET_TYPE = {
  apiVersion: 'apps/v1', resource: 'replicasets', kind: 'ReplicaSet', namespaced: true, hasStatus: true
}

/** Seconds from a Pod's creation to Running with its containers ready. */
const POD_START_SECONDS = 3

interface Deployment {
  name: string
  namespace: string
  replicas: number
  hash: string
  labels: Record<string, string>
  template: Record<string, unknown>
  /** The next name slot to try. */
  slot: number
  /** Its ReplicaSet's UID: the Pods' owner, so the garbage collector keeps them and Recreate finds a controller. */
  owner: string
}

export interface PodWorldOptions {
  /** Pods (or workloads) whose ephemeral containers exit 1. */
  fail: string[]
  /** Pods (or workloads) whose ephemeral containers keep running. */
  hang: string[]
}

export class PodWorld {
  private readonly kubelet: PodKubelet
  private readonly deployments: Deployment[] = []
  /** Pod (and ReplicaSet) name → the Deployment that made it. */
  private readonly madeBy = new Map<string, string>()

  constructor (private readonly sim: Simulator, private readonly options: PodWorldOptions) {
    this.kubelet = new PodKubelet(sim, { startAfterSeconds: POD_START_SECONDS, runs: () => true })
  }

  /** Takes the Pods and Deployments of a manifest; true when the object was one of them. */
  add (object: KubeObject): boolean {
    if (object.apiVersion === 'v1' && object.kind === 'Pod') {
      this.sim.apply({ ...object, status: undefined })
      return true
    }
    if (object.apiVersion === 'apps/v1' && object.kind === 'Deployment') {
      const spec = isRecord(object.spec) ? object.spec : {}
      const template = isRecord(spec.template) ? spec.template : {}
      const metadata = isRecord(template.metadata) ? template.metadata : {}
      const hash = createHash('sha256').update(JSON.stringify(template)).digest('hex').slice(0, 10)
      const namespace = object.metadata.namespace ?? 'default'
      const replicaSet = `${object.metadata.name}-${hash}`
      this.madeBy.set(replicaSet, object.metadata.name)
      const owner = this.sim.apply({
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: replicaSet, namespace },
        spec: { selector: spec.selector, template }
      }).metadata.uid as string
      this.deployments.push({
        name: object.metadata.name,
        namespace,
        replicas: typeof spec.replicas === 'number' ? spec.replicas : 1,
        hash,
        labels: isRecord(metadata.labels) ? metadata.labels as Record<string, string> : {},
        template,
        slot: 0,
        owner
      })
      this.tick()
      return true
    }
    return false
  }

  /** The workload a Pod belongs to: the Deployment that made it, or its controller (a CollaSet, say). */
  workloadOf (pod: KubeObject): string | undefined {
    const controller = pod.metadata.ownerReferences?.find(o => o.controller === true)?.name
    if (this.madeBy.has(pod.metadata.name)) return this.madeBy.get(pod.metadata.name)
    return controller !== undefined ? this.madeBy.get(controller) ?? controller : undefined
  }

  /** The timeline's subject for a Pod or ReplicaSet a Deployment made (`Deployment helloworld`). */
  ownerOf (name: string): string | undefined {
    const deployment = this.madeBy.get(name)
    return deployment === undefined ? undefined : `Deployment ${deployment}`
  }

  /** Every Pod of the store named by `names`, itself or through its workload. */
  private named (pod: KubeObject, names: string[]): boolean {
    const workload = this.workloadOf(pod)
    return names.includes(pod.metadata.name) || (workload !== undefined && names.includes(workload))
  }

  /** Brings the Pods up to date: the Deployments' missing Pods made, the kubelet's work done, exits set. */
  tick (): void {
    for (const deployment of this.deployments) this.keepReplicas(deployment)
    this.kubelet.tick()
    for (const pod of this.sim.list({ apiVersion: 'v1', kind: 'Pod' })) {
      if (this.named(pod, this.options.hang)) this.sim.kubelet.setExit(pod.metadata.name, 'hang')
      else if (this.named(pod, this.options.fail)) this.sim.kubelet.setExit(pod.metadata.name, 1)
    }
  }

  /**
   * Whether every Pod that is not going away is Running or done (the kubelet has nothing left to
   * do): a finished Job's Pod stays Succeeded or Failed, and must not keep the run going.
   */
  podsUp (): boolean {
    const settledPhases = ['Running', 'Succeeded', 'Failed']
    return this.sim.list({ apiVersion: 'v1', kind: 'Pod' }).every(p => p.metadata.deletionTimestamp !== undefined ||
      (isRecord(p.status) && settledPhases.includes(String(p.status.phase))))
  }

  /** Names given to `--fail` or `--hang` that no Pod answered to. */
  unmatched (): string[] {
    const pods = this.sim.list({ apiVersion: 'v1', kind: 'Pod' })
    const known = new Set([...this.madeBy.values(), ...pods.flatMap(p => [p.metadata.name, this.workloadOf(p) ?? ''])])
    return [...this.options.fail, ...this.options.hang].filter(name => !known.has(name))
  }

  private keepReplicas (deployment: Deployment): void {
    const live = this.sim.list({ apiVersion: 'v1', kind: 'Pod' }, deployment.namespace)
      .filter(p => this.madeBy.get(p.metadata.name) === deployment.name && p.metadata.deletionTimestamp === undefined)
    for (let n = live.length; n < deployment.replicas; n++) {
      // The ReplicaSet's names: <deployment>-<template hash>-<5 characters>.
      let name: string
      do name = `${deployment.name}-${deployment.hash}-${nameSuffix(`${deployment.name}#${deployment.slot++}`)}`
      while (this.sim.get({ apiVersion: 'v1', kind: 'Pod', namespace: deployment.namespace, name }) !== undefined)
      this.madeBy.set(name, deployment.name)
      const spec = isRecord(deployment.template.spec) ? deployment.template.spec : {}
      this.sim.apply({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name,
          namespace: deployment.namespace,
          labels: { ...deployment.labels, 'pod-template-hash': deployment.hash },
          // Owned by the ReplicaSet, as Recreate needs a controller to bring a Pod back.
          ownerReferences: [{
            apiVersion: 'apps/v1',
            kind: 'ReplicaSet',
            name: `${deployment.name}-${deployment.hash}`,
            uid: deployment.owner,
            controller: true,
            blockOwnerDeletion: true
          }]
        },
        spec
      })
    }
  }
}
