// Unknown fields of a JobSpec, found the way the API server finds them under the DaemonJob CRD.
import t from 'tap'
import { unknownJobSpecFields } from '../../src/k8s/job-spec-check.js'

const OWN = ['globalParams', 'nodeParallelism']

t.test('fields of the kind and of the JobSpec pass, at every depth', async t => {
  t.same(unknownJobSpecFields({
    globalParams: { anything: true },
    nodeParallelism: 2,
    backoffLimit: 1,
    podFailurePolicy: { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] }] },
    template: {
      metadata: { labels: { a: 'b' }, creationTimestamp: null },
      spec: {
        containers: [{
          name: 'c',
          resources: { limits: { cpu: 1 } },
          env: [{ name: 'A', valueFrom: { fieldRef: { fieldPath: 'x' } } }]
        }],
        volumes: [{ name: 'v', configMap: { name: 'm', items: [{ key: 'k', path: 'p' }] } }]
      }
    }
  }, 'spec', OWN), [])
})

t.test('an unknown field is named by its path', async t => {
  t.same(unknownJobSpecFields({
    restartLimit: 3,
    template: {
      spec: {
        containers: [
          { name: 'c' },
          { name: 'd', imagePullPolicyy: 'Always', livenessProbe: { httpGet: { porrt: 80 } } }
        ],
        volumes: [{ name: 'v', emptyDir: { size: 1 } }]
      }
    }
  }, 'spec', OWN), [
    "spec.restartLimit: unknown field (not the DaemonJob's, nor a batch/v1 JobSpec's)",
    'spec.template.spec.containers[1].imagePullPolicyy: unknown field (not a field of Container)',
    'spec.template.spec.containers[1].livenessProbe.httpGet.porrt: unknown field (not a field of HTTPGetAction)',
    'spec.template.spec.volumes[0].emptyDir.size: unknown field (not a field of EmptyDirVolumeSource)'
  ])
})

t.test('at most `limit` problems', async t => {
  const spec = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`x${i}`, i]))
  t.equal(unknownJobSpecFields(spec, 'spec', OWN).length, 10)
  t.equal(unknownJobSpecFields(spec, 'spec', OWN, 3).length, 3)
})
