// The Jobs of many nodes share what does not depend on the node: each must still serialise to
// exactly what a Job built from fresh copies of the template did, and the Jobs of two nodes must
// not share what differs between them.
import t from 'tap'
import type { JobSpec } from 'kubernetes-types/batch/v1.js'
import type { PodSpec } from 'kubernetes-types/core/v1.js'
import {
  buildNodeJob, DAEMONJOB_LABEL, NODE_LABEL, nodeJobBuilder, nodeJobName
} from '../../../src/controllers/daemonjob/job.js'
import { parseDaemonJobSpec, type DaemonJobSpec } from '../../../src/controllers/daemonjob/spec.js'
import { applyGlobalParams } from '../../../src/controllers/common/global-params.js'
import { JOB_TTL_LABEL } from '../../../src/controllers/common/job-ttl.js'
import { runScriptInPod } from '../../../src/scripts/configmap.js'
import { fitName } from '../../../src/k8s/names.js'
import type { KubeObject } from '../../../src/k8s/types.js'

/** The Job of a node as it was built before: two deep copies of the template per Job. */
function referenceJob (
  parent: KubeObject,
  node: string,
  spec: DaemonJobSpec,
  scriptsConfigMap: string | undefined
): KubeObject | string {
  const template = structuredClone(spec.job.template)
  applyGlobalParams(template, spec.globalParams)
  const { ttlSecondsAfterFinished: ttl, ...rest } = structuredClone(spec.job)
  // The service applies the TTL itself: it travels as a label, not in the JobSpec.
  const jobSpec: JobSpec = { ...rest, template }
  const ids = { [DAEMONJOB_LABEL]: fitName(parent.metadata.name), [NODE_LABEL]: fitName(node) }
  template.metadata = { ...template.metadata, labels: { ...template.metadata?.labels, ...ids } }
  const pod = template.spec as PodSpec
  pod.restartPolicy ??= 'Never'
  const pin = { key: 'metadata.name', operator: 'In', values: [node] }
  const affinity = pod.affinity ?? {}
  const nodeAffinity = affinity.nodeAffinity ?? {}
  const terms = nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []
  const pinned = terms.length === 0
    ? [{ matchFields: [pin] }]
    : terms.map(
      term => ({ ...term, matchFields: [...(term.matchFields ?? []), pin] })
    )
  pod.affinity = {
    ...affinity,
    nodeAffinity: {
      ...nodeAffinity,
      requiredDuringSchedulingIgnoredDuringExecution: {
        ...nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution,
        nodeSelectorTerms: pinned
      }
    }
  }
  if (spec.script !== undefined && scriptsConfigMap !== undefined) {
    const problem = runScriptInPod(pod, scriptsConfigMap, spec.script)
    if (problem !== undefined) return problem
  }
  const annotations = spec.globalParams.annotations
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: nodeJobName(parent.metadata.name, node),
      ...(parent.metadata.namespace !== undefined ? { namespace: parent.metadata.namespace } : {}),
      labels: { ...spec.globalParams.labels, ...ids, ...(ttl !== undefined ? { [JOB_TTL_LABEL]: String(ttl) } : {}) },
      ...(Object.keys(annotations).length > 0 ? { annotations } : {})
    },
    spec: jobSpec
  }
}

function parent (spec: Record<string, unknown>, namespace: string | undefined = 'ops'): KubeObject {
  return {
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'DaemonJob',
    metadata: { name: 'audit', ...(namespace !== undefined ? { namespace } : {}) },
    spec
  }
}

const container = { name: 'audit', image: 'busybox:1.36', env: [{ name: 'OWN', value: '1' }] }
const SPECS: Record<string, Record<string, unknown>> = {
  minimal: { template: { spec: { containers: [container] } } },
  'template with metadata after spec': {
    backoffLimit: 2,
    template: { spec: { containers: [container] }, metadata: { labels: { app: 'a' } } },
    ttlSecondsAfterFinished: 60
  },
  'globals, nodeName and restart policy': {
    globalParams: {
      nodeName: '',
      labels: { team: 'sre', [NODE_LABEL]: 'mine' },
      annotations: { ticket: 'OPS-1' },
      env: [{ name: 'RUN', value: 'x' }, { name: 'OWN', value: 'global' }]
    },
    template: {
      metadata: { labels: { [DAEMONJOB_LABEL]: 'first' } },
      spec: {
        restartPolicy: 'OnFailure',
        containers: [container],
        initContainers: [{ name: 'init', image: 'busybox' }]
      }
    }
  },
  'required affinity of two terms': {
    template: {
      spec: {
        affinity: {
          podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [] },
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              { weight: 1, preference: { matchExpressions: [{ key: 'z', operator: 'Exists' }] } }
            ],
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
                { matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['x'] }], matchExpressions: [] }
              ]
            }
          }
        },
        containers: [container],
        tolerations: [{ operator: 'Exists' }]
      }
    }
  },
  'affinity without node affinity': { template: { spec: { affinity: {}, containers: [container] } } },
  script: {
    script: { name: 'retry.sh', args: ['-n', '3'] },
    template: {
      spec: {
        containers: [container, { name: 'side', image: 'busybox', volumeMounts: [{ name: 'v', mountPath: '/v' }] }]
      }
    }
  },
  'script in a named container, volumes already there': {
    script: { name: 'retry.sh', container: 'side' },
    template: {
      spec: { volumes: [{ name: 'v', emptyDir: {} }], containers: [container, { name: 'side', image: 'busybox' }] }
    }
  },
  'script in a container that is not there': {
    script: { name: 'retry.sh', container: 'nope' },
    template: { spec: { containers: [container] } }
  }
}

const NODES = ['node-1', 'node-2', `node-${'x'.repeat(70)}`]

for (const [title, raw] of Object.entries(SPECS)) {
  for (const namespace of ['ops', undefined]) {
    t.test(`${title}${namespace === undefined ? ', no namespace' : ''}`, async t => {
      const owner = parent(structuredClone(raw), namespace)
      const parsed = parseDaemonJobSpec(owner)
      if (!parsed.ok) throw new Error(parsed.problems.join('; '))
      const before = JSON.stringify(owner)
      for (const configMap of [undefined, 'audit-scripts']) {
        const build = nodeJobBuilder(owner, parsed.value, configMap)
        const jobs = NODES.map(node => build(node))
        NODES.forEach((node, i) => {
          const expected = JSON.stringify(referenceJob(owner, node, parsed.value, configMap))
          t.equal(JSON.stringify(jobs[i]), expected, `${node} (${configMap ?? 'no scripts'}): as before, byte for byte`)
          t.equal(
            JSON.stringify(buildNodeJob(owner, node, parsed.value, configMap)),
            expected,
            `${node}: buildNodeJob too`
          )
        })
        const [a, b] = jobs as [KubeObject, KubeObject]
        if (typeof a !== 'string' && typeof b !== 'string') {
          const podA = (a.spec as JobSpec).template.spec as PodSpec
          const podB = (b.spec as JobSpec).template.spec as PodSpec
          t.not(podA, podB, 'each Job has its own pod spec')
          t.not(podA.affinity, podB.affinity, 'and its own affinity')
          t.not(a.metadata.labels, b.metadata.labels, 'and its own labels')
          t.not(
            (a.spec as JobSpec).template.metadata,
            (b.spec as JobSpec).template.metadata,
            'and its own template metadata'
          )
          t.equal(podA.containers, podB.containers, 'what does not depend on the node is shared')
        }
      }
      t.equal(JSON.stringify(owner), before, 'the DaemonJob itself is never changed')
    })
  }
}
