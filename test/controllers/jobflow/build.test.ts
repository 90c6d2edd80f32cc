// How a flow's Job is built: globals under the template's own values, shared volumes, scripts,
// JobTemplate references and names that fit.
import t from 'tap'
import { syncJobFlow } from '../../../src/controllers/jobflow/sync.js'
import { responseOf } from '../../helpers/hooks.js'
import { customizeJobFlow } from '../../../src/controllers/jobflow/customize.js'
import type { SyncRequest } from '../../../src/protocol/hooks.js'
import type { KubeObject } from '../../../src/k8s/types.js'
import { at, childrenOf, context, fixture, SHIPPED_SCRIPTS } from '../../helpers/fixtures.js'
import type { JobRecord } from '../../../src/controllers/jobflow/records.js'
import { objectAs, specOf } from '../../helpers/objects.js'
import { condition } from '../../helpers/conditions.js'
import { containerEnvironment } from '../../../src/k8s/expansion.js'
import { type JobFlowManifestSpec, type JobTemplateObject, jobOf, listOf } from '../../helpers/records.js'

const respond = responseOf(syncJobFlow)

function newFlow (mutate: (spec: any) => void): SyncRequest {
  const request = fixture('jobflow/sync-new.v2.json')
  mutate(request.parent.spec)
  return request
}
function job (request: SyncRequest, name = 'jobflow-example-job1'): KubeObject {
  const response = respond(request, context())
  const found = childrenOf(response.children, 'Job').get(name)
  if (found === undefined) throw new Error(`no Job ${name} in ${JSON.stringify(response.status)}`)
  return found
}

t.test('the flow template wins over globalParams, and nothing of it is dropped', async t => {
  const request = newFlow(spec => {
    const pod = spec.flows[0].jobTemplate.template
    pod.metadata = { labels: { key1: 'mine', app: 'x' }, annotations: { key2: 'mine' } }
    pod.spec.nodeName = 'node-9'
    pod.spec.containers[0].env = [{ name: 'QUE', value: 'mine' }, { name: 'REF', value: '$(FOO)-x' }]
    pod.spec.initContainers = [{ name: 'init', image: 'busybox' }]
  })
  const pod = at(job(request), 'spec.template')
  t.same(
    pod.metadata.labels,
    { key1: 'mine', key2: 'value2', app: 'x', 'jobhooks.io/jobflow': 'jobflow-example', 'jobhooks.io/flow': 'job1' }
  )
  t.same(pod.metadata.annotations, { key1: 'value1', key2: 'mine' })
  t.equal(pod.spec.nodeName, 'node-9')
  t.same(pod.spec.containers[0].env, [
    { name: 'FOO', value: 'bar' },
    { name: 'QUE', value: 'mine' },
    { name: 'REF', value: '$(FOO)-x' }
  ],
  'globals first so that the container can refer to them; its own value wins')
  t.same(pod.spec.initContainers[0].env, [{ name: 'FOO', value: 'bar' }, { name: 'QUE', value: 'pasa' }])
})

t.test('globalParams env is env as the user wrote it: its $(NAME) references are Kubernetes\' to expand', async t => {
  const request = newFlow(spec => {
    spec.globalParams.env = [{ name: 'HOST', value: 'db' }, { name: 'URL', value: 'http://$(HOST):$$(PORT)' }]
  })
  const env = at(job(request), 'spec.template.spec.containers.0.env')
  t.same(env.slice(0, 2), [{ name: 'HOST', value: 'db' }, { name: 'URL', value: 'http://$(HOST):$$(PORT)' }],
    'not escaped: unlike an output or an item, it is written as env')
  t.equal(containerEnvironment({ env }).get('URL'), 'http://db:$(PORT)')
})

t.test('OnFailure and backoffLimit are kept as the user wrote them', async t => {
  const request = newFlow(spec => {
    spec.flows[0].jobTemplate.backoffLimit = 3
    spec.flows[0].jobTemplate.template.spec.restartPolicy = 'OnFailure'
  })
  const built = job(request)
  t.equal(at(built, 'spec.backoffLimit'), 3)
  t.equal(at(built, 'spec.template.spec.restartPolicy'), 'OnFailure')
  t.equal(
    specOf<JobFlowManifestSpec>(request.parent).flows[0]?.jobTemplate?.template.metadata,
    undefined,
    'the spec itself is not changed'
  )
})

t.test('shared volumes reach every Job; mounts are global plus the flow\'s own', async t => {
  const request = newFlow(spec => {
    spec.shareVolumes = [{ name: 'data', persistentVolumeClaim: { claimName: 'pvc' } }, { name: 'tmp', emptyDir: {} }]
    spec.shareVolumeMounts = [{ name: 'data', mountPath: '/data' }]
    spec.flows[0].shareVolumeMounts = [{ name: 'tmp', mountPath: '/tmp/shared' }, { name: 'tmp', mountPath: '/data' }]
    const pod = spec.flows[0].jobTemplate.template.spec
    pod.volumes = [{ name: 'tmp', configMap: { name: 'own' } }]
    pod.initContainers = [{ name: 'init', image: 'busybox' }]
  })
  const pod = at(job(request), 'spec.template.spec')
  t.same(
    pod.volumes,
    [{ name: 'tmp', configMap: { name: 'own' } }, { name: 'data', persistentVolumeClaim: { claimName: 'pvc' } }],
    'a volume the template names is kept as it is'
  )
  t.same(
    pod.containers[0].volumeMounts,
    [{ name: 'data', mountPath: '/data' }, { name: 'tmp', mountPath: '/tmp/shared' }],
    'one mount per path'
  )
  t.same(pod.initContainers[0].volumeMounts, pod.containers[0].volumeMounts)
  const job4 = at(job(request, 'jobflow-example-job4'), 'spec.template.spec')
  t.same(
    job4.containers[0].volumeMounts,
    [{ name: 'data', mountPath: '/data' }],
    'other flows get only the global mounts'
  )
})

t.test('a script runs from a content-hashed ConfigMap mounted 0554 at /scripts', async t => {
  const request = newFlow(spec => { spec.flows[0].script = { name: 'wait-for.sh', args: ['-t', '60', 'db:5432'] } })
  const response = respond(request, context())
  const configMaps = [...childrenOf(response.children, 'ConfigMap').values()]
  t.equal(configMaps.length, 1)
  const cm = objectAs<KubeObject & { immutable?: boolean }>(configMaps[0])
  t.match(cm.metadata.name, /^jobflow-example-scripts-[0-9a-f]{10}$/)
  t.same(cm.metadata.labels, { 'jobhooks.io/jobflow': 'jobflow-example' })
  t.equal(cm.immutable, true)
  t.same(cm.data, { 'wait-for.sh': SHIPPED_SCRIPTS.get('wait-for.sh') })
  const pod = at(childrenOf(response.children, 'Job').get('jobflow-example-job1'), 'spec.template.spec')
  t.same(pod.volumes, [{ name: 'jobhooks-scripts', configMap: { name: cm.metadata.name, defaultMode: 364 } }])
  t.same(pod.containers[0].command, ['/scripts/wait-for.sh'])
  t.same(pod.containers[0].args, ['-t', '60', 'db:5432'])
  t.same(pod.containers[0].volumeMounts, [{ name: 'jobhooks-scripts', mountPath: '/scripts', readOnly: true }])
  const job4 = at(childrenOf(response.children, 'Job').get('jobflow-example-job4'), 'spec.template.spec')
  t.equal(job4.volumes, undefined, 'flows without a script mount nothing')
})

t.test('spec.scripts wins over a shipped script of the same name; an edit makes a new ConfigMap and the old one ' +
  'stays while a Job mounts it', async t => {
  const request = fixture('jobflow/sync-job1-done.v2.json')
  const spec = specOf<JobFlowManifestSpec>(request.parent)
  spec.scripts = { 'wait-for.sh': 'echo mine' }
  spec.flows[1]!.script = { name: 'wait-for.sh' }
  const first = respond(request, context())
  const cm = [...childrenOf(first.children, 'ConfigMap').values()][0] as KubeObject
  t.same(cm.data, { 'wait-for.sh': 'echo mine' })

  // The ConfigMap and job2 now exist; then the script is edited.
  const job2 = childrenOf(first.children, 'Job').get('jobflow-example-job2') as KubeObject
  request.children['Job.batch/v1']!['default/jobflow-example-job2'] = {
    ...job2,
    metadata: { ...job2.metadata, uid: 'j2' },
    status: { active: 1 }
  }
  request.children['ConfigMap.v1']![`default/${cm.metadata.name}`] = {
    ...cm,
    metadata: { ...cm.metadata, uid: 'c1', resourceVersion: '5' }
  }
  request.parent.status = first.status
  spec.scripts!['wait-for.sh'] = 'echo edited'
  const second = respond(request, context())
  const names = [...childrenOf(second.children, 'ConfigMap').keys()]
  t.equal(names.length, 2, 'the new version and the one job2 runs with')
  t.ok(names.includes(cm.metadata.name))
  const kept = childrenOf(second.children, 'ConfigMap').get(cm.metadata.name)
  t.same(
    kept,
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: cm.metadata.name, namespace: 'default' } },
    'kept by its identity'
  )

  // Once job2 is gone (finished and deleted), the old version goes too.
  delete request.children['Job.batch/v1']!['default/jobflow-example-job2']
  request.parent.status = {
    ...second.status,
    jobs: listOf<JobRecord>(second.status, 'jobs').map(
      j => j.name === 'job2' ? { ...j, phase: 'Succeeded', completionTime: 'x' } : j
    )
  }
  const third = respond(request, context())
  t.same([...childrenOf(third.children, 'ConfigMap').keys()], names.filter(n => n !== cm.metadata.name))
})

t.test('jobTemplateRef takes the JobTemplate\'s spec and labels the Job with it', async t => {
  const request = fixture('jobflow/sync-template-ref.v2.json')
  const response = respond(request, context())
  const jobs = childrenOf(response.children, 'Job')
  t.same([...jobs.keys()], ['release-build'])
  const build = jobOf(jobs.get('release-build'))
  t.equal(build.spec.backoffLimit, 2)
  t.same(build.spec.template.spec.containers[0]?.command, ['sh', '-c', 'make'])
  t.equal(build.metadata.labels['jobhooks.io/job-template'], 'builder')
  const related = objectAs<JobTemplateObject>(request.related['JobTemplate.jobhooks.io/v1alpha1']!['default/builder'])
  t.equal(related.spec.jobTemplate.template.spec?.restartPolicy, undefined, 'the JobTemplate is not changed')
})

t.test('long names are shortened with a stable hash to fit Job names and label values', async t => {
  const long = 'x'.repeat(60)
  const request = newFlow(
    spec => { spec.flows = [{ ...spec.flows[0], name: 'a-very-long-flow-name-that-is-still-a-valid-label' }] }
  )
  request.parent.metadata.name = long
  const response = respond(request, context())
  const names = response.children.map(c => c.metadata.name)
  for (const name of names) t.ok(name.length <= 63, `${name} fits`)
  t.equal(new Set(names).size, names.length, 'still distinct')
  const again = respond(request, context()).children.map(c => c.metadata.name)
  t.same(again, names, 'stable')
  const labels = response.children[0]!.metadata.labels as Record<string, string>
  t.ok((labels['jobhooks.io/jobflow'] as string).length <= 63)
  t.match(names[0], /^x+-[0-9a-f]{10}$/)
  t.equal(listOf<JobRecord>(response.status, 'jobs')[0]?.jobName, names[0], 'the record names the real Job')
})

t.test('customize asks for the referenced JobTemplates by name in the namespace', async t => {
  const request = fixture<any>('jobflow/customize.json')
  request.parent.spec.flows.push({ name: 'again', jobTemplateRef: 'builder' })
  const pods = (name: string, namespace?: string): object => ({
    apiVersion: 'v1',
    resource: 'pods',
    ...(namespace !== undefined ? { namespace } : {}),
    labelSelector: {
      matchLabels: { 'jobhooks.io/jobflow': name },
      matchExpressions: [{ key: 'jobhooks.io/item-index', operator: 'DoesNotExist' }]
    }
  })
  t.same(customizeJobFlow(request), {
    relatedResources: [{
      apiVersion: 'jobhooks.io/v1alpha1',
      resource: 'jobtemplates',
      namespace: 'default',
      names: ['builder', 'tester']
    }, pods('release', 'default')]
  })
  t.same(
    customizeJobFlow({
      parent: {
        apiVersion: 'jobhooks.io/v1alpha1',
        kind: 'JobFlow',
        metadata: { name: 'x' },
        spec: { flows: 'nonsense' }
      }
    }),
    { relatedResources: [pods('x')] }
  )
  t.same(
    customizeJobFlow(fixture('jobflow/sync-new.v2.json')),
    { relatedResources: [pods('jobflow-example', 'default')] },
    'inline templates need no JobTemplate; the pods of its Jobs carry the outputs, but a fan-out item\'s'
  )
})

t.test('flows[].patch: a JSON merge patch of the JobTemplate\'s Job spec, before the globals; one template, many ' +
  'flows', async t => {
  const request: any = fixture('jobflow/sync-template-ref.v2.json')
  const flows = request.parent.spec.flows
  flows[0].patch = {
    backoffLimit: 5,
    template: {
      spec: {
        containers: [{ name: 'nginx', image: 'busybox:1.36', args: ['release'] }],
        nodeSelector: { pool: 'build' }
      }
    }
  }
  request.parent.spec.globalParams = { env: [{ name: 'FOO', value: 'bar' }] }
  const patched = job(request, 'release-build')
  t.equal(at(patched, 'spec.backoffLimit'), 5, 'a scalar replaced')
  t.same(at(patched, 'spec.template.spec.containers').map((c: any) => [c.image, c.args, c.env]), [
    ['busybox:1.36', ['release'], [{ name: 'FOO', value: 'bar' }]]
  ],
  'a list replaced whole, then the globals applied to what the patch made')
  t.same(at(patched, 'spec.template.spec.nodeSelector'), { pool: 'build' }, 'a field added')
  const template = objectAs<JobTemplateObject>(request.related['JobTemplate.jobhooks.io/v1alpha1']['default/builder'])
  t.same(
    template.spec.jobTemplate.template.spec?.containers[0]?.command,
    ['sh', '-c', 'make'],
    'the JobTemplate itself is not changed'
  )

  const removal: any = fixture('jobflow/sync-template-ref.v2.json')
  removal.parent.spec.flows[0].patch = { backoffLimit: null }
  t.equal(at(job(removal, 'release-build'), 'spec.backoffLimit'), undefined, 'null removes a field')
})

t.test('a patch that makes an invalid Job spec, or is not an object, makes the spec Invalid and deletes ' +
  'nothing', async t => {
  for (const [patch, message] of [
    [
      { template: { spec: { containers: null } } },
      /flow "build" \(its Job spec patched\): the Job template has no containers/
    ],
    [
      { template: { spec: { containers: [{ name: 'x' }] } } },
      /flow "build" \(its Job spec patched\): container 1 of the Job template needs a name and an image/
    ],
    [{ template: { spec: { restartPolicy: 'Always' } } }, /restartPolicy Always/],
    [['not', 'an', 'object'], /flow "build": patch must be an object/]
  ] as Array<[unknown, RegExp]>) {
    const request: any = fixture('jobflow/sync-template-ref.v2.json')
    request.parent.spec.flows[0].patch = patch
    const response = respond(request, context())
    t.equal(response.status.phase, 'Invalid', JSON.stringify(patch))
    t.match(condition(response.status, 'Valid')?.message, message)
    t.same(
      response.children,
      Object.values(request.children).flatMap((byName: any) => Object.values(byName)),
      'every child kept as observed'
    )
  }
})
