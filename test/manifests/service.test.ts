// The manifests against the service: every CompositeController calls routes the app serves
// through the Service that exists, and the hooks run every example JobFlow with a status that
// fits the CRD.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { defaultHooksDir, loadScriptLibrary } from '../../src/scripts/library.js'
import { ALL_KINDS } from '../../src/controllers/kinds.js'
import { updateStrategyProblem } from '../../src/protocol/update-strategy.js'
import {
  type Json, NOW, ofKind, crds, storageVersion,
  openApiErrors, exampleJobFlows, services, firstSync, examples
} from '../helpers/manifests.js'

let app: FastifyInstance
t.before(async () => {
  app = await buildApp({ scripts: loadScriptLibrary(defaultHooksDir()), clock: () => NOW })
})
t.teardown(async () => await app?.close())

t.test('every CompositeController calls routes the app serves, through the Service', async t => {
  const controllers = ofKind('CompositeController', 'controllers/')
  t.ok(controllers.length >= 1, 'at least one CompositeController')
  for (const { file, object } of controllers) {
    const spec = object.spec
    t.equal(object.apiVersion, 'metacontroller.k8s.io/v1alpha1', `${file}: apiVersion`)
    const [group, version] = String(spec.parentResource.apiVersion).split('/')
    const parentCrd = crds.find(c => c.spec.group === group && c.spec.names.plural === spec.parentResource.resource)
    t.ok(parentCrd !== undefined, `${file}: parent ${spec.parentResource.resource} has a CRD`)
    t.ok(
      parentCrd?.spec.versions.some((v: Json) => v.name === version && v.served === true),
      `${file}: parent version ${String(version)} is served`
    )
    t.ok(
      storageVersion(parentCrd ?? { spec: { versions: [] } })?.subresources?.status !== undefined,
      `${file}: the parent has a status subresource`
    )
    // Every child resource has a strategy its kind's answers are safe under (src/protocol/update-strategy.ts):
    // JobFlow's Jobs InPlace, answered as last applied, for spec.suspend; every other OnDelete,
    // children that exist answered by identity only.
    const kind = ALL_KINDS.find(k => spec.hooks?.sync?.webhook?.path === `/hooks/${k.kind}/sync`)
    t.equal(
      kind === undefined ? 'no kind serves it' : updateStrategyProblem(object, kind),
      undefined,
      `${file}: update strategies its kind is safe under`
    )
    for (const child of spec.childResources ?? []) {
      // Only JobFlow's Jobs (spec.suspend) and CronJobFlow's runs (Replace's deadline) change in place.
      const inPlace = object.metadata.name === 'jobflow-controller' && child.resource === 'jobs'
      const expected = inPlace ? 'InPlace' : 'OnDelete'
      t.equal(child.updateStrategy?.method, expected, `${file}: ${String(child.resource)} update strategy`)
    }
    // After an outage every parent is synced again within a minute of the service's return: the
    // next resync, plus time for the queue (docs/operations.md, "Recovery after an outage").
    t.ok(
      Number.isInteger(spec.resyncPeriodSeconds) && spec.resyncPeriodSeconds >= 1 && spec.resyncPeriodSeconds <= 50,
      `${file}: resyncPeriodSeconds ${String(spec.resyncPeriodSeconds)} within 1–50`
    )
    t.ok(spec.hooks?.sync !== undefined, `${file}: has a sync hook`)
    for (const [hook, config] of Object.entries<Json>(spec.hooks ?? {})) {
      const where = `${file}: ${hook} hook`
      t.equal(config.version, 'v2', `${where} uses version v2`)
      const webhook = config.webhook
      let path: string
      if (webhook.url !== undefined) {
        path = new URL(webhook.url).pathname
      } else {
        path = webhook.path
        const service = services.find(
          s => s.metadata.name === webhook.service?.name && s.metadata.namespace === webhook.service?.namespace
        )
        t.ok(
          service !== undefined,
          `${where} names the Service ${String(webhook.service?.namespace)}/${String(webhook.service?.name)}`
        )
        t.ok(
          service?.spec.ports.some((p: Json) => p.port === (webhook.service?.port ?? 80)),
          `${where} calls a port of that Service`
        )
      }
      t.ok(app.hasRoute({ method: 'POST', url: path }), `${where}: POST ${path} is a route of the app`)
      t.equal(
        path,
        `/hooks/${String(parentCrd?.spec.names.singular)}/${hook}`,
        `${where}: the path names the parent's kind and the hook`
      )
      if (webhook.timeout !== undefined) t.match(webhook.timeout, /^\d+(ms|s)$/, `${where}: timeout is a Go duration`)
    }
  }
})

/** The steps without dependencies, a template group by its template's own (`<group>.<step>`). */
function rootSteps (flows: Json[], file: string): string[] {
  const roots = flows.filter((f: Json) => (f.dependencies ?? []).length === 0 && f.depends === undefined)
  return roots.flatMap((f: Json): string[] => {
    if (f.flowTemplateRef === undefined) return [String(f.name)]
    const template = examples.find(d => d.file === file && d.object.kind === 'JobFlowTemplate' &&
      d.object.metadata.name === f.flowTemplateRef.name)
    return rootSteps(template?.object.spec.flows ?? [], file).map(step => `${String(f.name)}.${step}`)
  })
}

t.test('the hooks run every example JobFlow: root flows start and the status fits the CRD', async t => {
  const crd = crds.find(c => c.spec.names.kind === 'JobFlow')
  for (const { file, object } of exampleJobFlows) {
    const name = String(object.metadata.name)
    const customize = await app.inject({
      method: 'POST',
      url: '/hooks/jobflow/customize',
      payload: { parent: { ...object, metadata: { ...object.metadata, namespace: 'default' } } }
    })
    t.equal(customize.statusCode, 200, `${file}: customize answers`)
    const wanted = customize.json().relatedResources.flatMap((r: Json) => r.names ?? [])
    const refs = [
      ...new Set<string>(
        object.spec.flows.flatMap((f: Json) => (f.jobTemplateRef !== undefined ? [f.jobTemplateRef] : []))
      )
    ].sort()
    t.same([...wanted].sort(), refs, `${file}: customize asks for the referenced JobTemplates`)

    const response = await app.inject({ method: 'POST', url: '/hooks/jobflow/sync', payload: firstSync(object, file) })
    t.equal(response.statusCode, 200, `${file}: sync answers`)
    const body = response.json()
    t.not(body.status.phase, 'Invalid', `${file}: ${name} is valid (${JSON.stringify(body.status.conditions)})`)
    const jobs = body.children
      .filter((c: Json) => c.kind === 'Job')
      .map((c: Json) => c.metadata.name)
      .sort()
    // A JobFlow applied suspended starts nothing.
    const roots = object.spec.suspend === true ? [] : rootSteps(object.spec.flows, file).map(s => `${name}-${s}`).sort()
    t.same(jobs, roots, `${file}: the flows without dependencies start first (none while suspended)`)
    t.same(
      openApiErrors(crd, { ...object, status: body.status }),
      [],
      `${file}: the status the hook returns fits the CRD's status schema`
    )
  }
})
