// The example JobFlow of the docs, built in code: what manifests/examples/jobflow.yaml holds.
// Scenarios use the manifest when it exists and this otherwise.
import type { KubeObject } from '../../src/k8s/types.js'
import { JOBHOOKS_API_VERSION } from '../../src/simulator/controllers.js'

/** A Job spec with one busybox container that prints the global env. */
export function busyboxJobSpec (message: string): Record<string, unknown> {
  return {
    backoffLimit: 0,
    template: {
      spec: {
        containers: [{ name: 'main', image: 'busybox:1.36', command: ['sh', '-c', `echo ${message} $FOO $QUE`] }]
      }
    }
  }
}

/**
 * `jobflow-example`: job1 and job4 have no dependencies, job2 ← job1, job3 ← job1 + job2,
 * job5 ← job2 + job4; global env FOO=bar QUE=pasa, labels, annotations and a nodeName.
 */
export function exampleJobFlow (namespace = 'default'): KubeObject {
  const flow = (name: string, dependencies: string[] = []): Record<string, unknown> => ({
    name,
    ...(dependencies.length > 0 ? { dependencies } : {}),
    jobTemplate: busyboxJobSpec(name)
  })
  return {
    apiVersion: JOBHOOKS_API_VERSION,
    kind: 'JobFlow',
    metadata: { name: 'jobflow-example', namespace },
    spec: {
      globalParams: {
        nodeName: 'worker-1',
        env: [{ name: 'FOO', value: 'bar' }, { name: 'QUE', value: 'pasa' }],
        labels: { key1: 'value1', key2: 'value2' },
        annotations: { key1: 'value1', key2: 'value2' }
      },
      flows: [
        flow('job1'),
        flow('job2', ['job1']),
        flow('job3', ['job1', 'job2']),
        flow('job4'),
        flow('job5', ['job2', 'job4'])
      ]
    }
  }
}

/** A JobTemplate holding `jobTemplate` (a JobSpec). */
export function jobTemplate (
  name: string,
  namespace = 'default',
  spec: Record<string, unknown> = busyboxJobSpec(name)
): KubeObject {
  return {
    apiVersion: JOBHOOKS_API_VERSION,
    kind: 'JobTemplate',
    metadata: { name, namespace },
    spec: { jobTemplate: spec }
  }
}
