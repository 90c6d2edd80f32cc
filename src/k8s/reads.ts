// What the hooks read of the objects Metacontroller sends them, as shapes the hook routes build a
// request from (src/protocol/projection.ts): a member the shape leaves out is never built. A
// 15,000-Node cluster is a 171 MiB request, most of it images, conditions and managedFields that
// no hook reads; what they read of a Node is a few hundred bytes.
//
// A shape is `true` (build the value whole), `false` (skip it), or an object naming the members
// to build, each with its own shape; `'*'` is the shape of every member not named (without one,
// members not named are skipped). An object shape met by an array applies to each element, and
// met by anything else (a string where an object was expected) builds that value as it is.
//
// Each kind declares the shapes of its children and related objects (`reads` in its index.ts),
// from the blocks here. A test runs every hook with and without its shapes and fails when the
// answers differ: a field a hook starts reading has to be added here.
import { LAST_APPLIED_ANNOTATION } from './objects.js'

export type Shape = boolean | ObjectShape
/** A shape that names members. */
export type ObjectShape = { readonly [member: string]: Shape }

/** Every member but managedFields: the parent, and objects a kind reads whole. */
export const WHOLE_OBJECT: ObjectShape = { '*': true, metadata: { '*': true, managedFields: false } }

/**
 * What any hook reads of an object's metadata: who it is, whom it belongs to, its labels, and
 * when it came and is going. Not its annotations (Metacontroller's last-applied copy of the whole
 * object is one) nor managedFields.
 */
export const METADATA_READS: ObjectShape = {
  name: true,
  namespace: true,
  uid: true,
  generation: true,
  labels: true,
  ownerReferences: true,
  creationTimestamp: true,
  deletionTimestamp: true
}

/** An object's identity and metadata, nothing of its spec or status: ConfigMaps of scripts. */
export const OBJECT_IDENTITY: Shape = { apiVersion: true, kind: true, metadata: METADATA_READS }

/** A ConfigMap's identity and data: one that holds what a hook wrote for itself (JobFlow's pinned templates). */
export const CONFIGMAP_DATA_READS: Shape = { apiVersion: true, kind: true, metadata: METADATA_READS, data: true }

/**
 * A Pod: its containers' names, its ephemeral containers and their statuses (EphemeralJob, Exec),
 * its readiness gates, its node (CollaSet's scheduledReplicas), phase and conditions (readiness,
 * the PodOpsLifecycle gate).
 */
export const POD_READS: Shape = {
  apiVersion: true,
  kind: true,
  metadata: METADATA_READS,
  spec: { containers: { name: true }, ephemeralContainers: true, readinessGates: true, nodeName: true },
  status: { phase: true, conditions: true, ephemeralContainerStatuses: true }
}

/**
 * A Job: its status (outcome and times), and of its Pod template the volumes (the scripts
 * ConfigMap it mounts), the affinity (the Node a DaemonJob's Job is pinned to) and the
 * containers' names.
 */
export const JOB_READS: ObjectShape = {
  apiVersion: true,
  kind: true,
  metadata: METADATA_READS,
  // managedBy: a Job another controller manages is never written; suspend: Kueue holds a queued
  // Job by it (src/k8s/kueue.ts).
  // containers' names: a JobFlow step's output comes from its first container by default.
  spec: {
    managedBy: true,
    suspend: true,
    template: { spec: { volumes: true, affinity: true, containers: { name: true } } }
  },
  status: true
}

/**
 * A JobFlow's Job: JOB_READS and the one annotation in which Metacontroller keeps the Job it last
 * applied. JobFlow answers its Jobs as that copy (keepAsApplied, src/k8s/objects.ts), so that
 * Metacontroller may update them in place (spec.suspend) without changing anything else.
 */
export const APPLIED_JOB_READS: Shape = {
  ...JOB_READS,
  metadata: { ...METADATA_READS, annotations: { [LAST_APPLIED_ANNOTATION]: true } }
}

/**
 * A pod of a JobFlow's Job: its labels (its Job's name), phase, and each container's termination
 * message, which is the step's output (src/controllers/jobflow/outputs.ts).
 */
export const OUTPUT_POD_READS: Shape = {
  apiVersion: true,
  kind: true,
  metadata: METADATA_READS,
  status: {
    phase: true,
    containerStatuses: { name: true, state: { terminated: { message: true, finishedAt: true } } }
  }
}

/** A Node: its name and labels, taints and `unschedulable`, which decide where a DaemonJob runs. */
export const NODE_READS: Shape = {
  apiVersion: true,
  kind: true,
  metadata: METADATA_READS,
  spec: { taints: true, unschedulable: true }
}

/** The member shape `shape` gives `member`: its own, else `'*'`'s, else skipped. */
function memberShape (shape: ObjectShape, member: string): Shape {
  if (Object.hasOwn(shape, member)) return shape[member] as Shape
  return Object.hasOwn(shape, '*') ? shape['*'] as Shape : false
}

/** A shape that builds everything either shape builds. */
export function mergeShapes (a: Shape, b: Shape): Shape {
  if (a === true || b === true) return true
  if (a === false) return b
  if (b === false) return a
  const merged: Record<string, Shape> = {}
  for (const member of new Set([...Object.keys(a), ...Object.keys(b)])) {
    merged[member] = mergeShapes(memberShape(a, member), memberShape(b, member))
  }
  return merged
}
