// The Deployment, Service, PDB, NetworkPolicy, kustomization and Dockerfile agree on names,
// labels and ports, the Deployment runs the service safely, and the ClusterRole grants exactly
// what the effects need.
import t from 'tap'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { defaultHooksDir, loadScriptLibrary } from '../../src/scripts/library.js'
import { EFFECT_PERMISSIONS, EVENT_PERMISSIONS, PARENT_PERMISSIONS } from '../../src/effects/executor.js'
import { type Json, NOW, ROOT, MANIFESTS, ofKind, services, docs } from '../helpers/manifests.js'

let app: FastifyInstance
t.before(async () => {
  app = await buildApp({ scripts: loadScriptLibrary(defaultHooksDir()), clock: () => NOW })
})
t.teardown(async () => await app?.close())

const deployments = ofKind('Deployment', 'deploy/').map(d => d.object)
const deployment = deployments[0]
const podLabels: Record<string, string> = deployment?.spec.template.metadata.labels ?? {}
const container =
  deployment?.spec.template.spec.containers.find((c: Json) => c.name === 'jobhooks') ??
  deployment?.spec.template.spec.containers[0]
const containerPorts: Json[] = container?.ports ?? []

const selects = (selector: Record<string, string> | undefined): boolean =>
  selector !== undefined &&
  Object.keys(selector).length > 0 &&
  Object.entries(selector).every(([k, v]) => podLabels[k] === v)
const namesPort = (port: unknown): boolean =>
  containerPorts.some(p => (typeof port === 'string' ? p.name === port : p.containerPort === port))

t.test('the Deployment runs the service safely', async t => {
  t.equal(deployments.length, 1, 'one Deployment')
  t.ok(deployment.spec.replicas >= 2, 'at least two replicas')
  t.ok(selects(deployment.spec.selector.matchLabels), 'its selector matches its pod labels')
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
  const images: Json[] = docs.find(d => d.file === 'kustomization.yaml')?.object?.images ?? []
  t.equal(container.image, 'jobhooks', 'the Deployment names the image for kustomize to set')
  t.same(
    images.map(i => i.name),
    ['jobhooks'],
    'the kustomization sets it, in one place'
  )
  t.equal(String(images[0]?.newTag), String(pkg.version), 'the image tag is the package version')
  t.match(images[0]?.newName, /^[a-z0-9.-]+(:\d+)?\/[a-z0-9/._-]+$/, 'a registry and a repository')
  const http = containerPorts.find(p => p.name === 'http')
  t.equal(http?.containerPort, 8080, 'container port 8080 is named http')
  const env = Object.fromEntries((container.env ?? []).map((e: Json) => [e.name, e.value]))
  t.equal(Number(env.PORT), http?.containerPort, 'PORT is the container port')

  for (const [probe, expected] of [
    ['readinessProbe', '/readyz'],
    ['livenessProbe', '/healthz']
  ] as const) {
    const get = container[probe]?.httpGet
    t.equal(get?.path, expected, `${probe} path`)
    t.ok(app.hasRoute({ method: 'GET', url: get?.path }), `${probe}: GET ${String(get?.path)} is a route of the app`)
    t.ok(namesPort(get?.port), `${probe} port is a container port`)
  }

  const pod = deployment.spec.template.spec
  const security = container.securityContext ?? {}
  t.equal(security.runAsNonRoot ?? pod.securityContext?.runAsNonRoot, true, 'runAsNonRoot')
  t.equal(security.runAsUser ?? pod.securityContext?.runAsUser, 1000, 'runs as the node user of the image')
  t.equal(security.readOnlyRootFilesystem, true, 'readOnlyRootFilesystem')
  t.equal(security.allowPrivilegeEscalation, false, 'allowPrivilegeEscalation false')
  t.same(security.capabilities?.drop, ['ALL'], 'drops every capability')
  t.equal(
    (security.seccompProfile ?? pod.securityContext?.seccompProfile)?.type,
    'RuntimeDefault',
    'RuntimeDefault seccomp profile'
  )
  const namespace = ofKind('Namespace', 'deploy/')
    .map(d => d.object)
    .find(n => n.metadata.name === deployment.metadata.namespace)
  t.equal(
    namespace?.metadata.labels?.['pod-security.kubernetes.io/enforce'],
    'restricted',
    'its namespace enforces the restricted Pod Security Standard, which the settings above meet'
  )
  t.equal(pod.hostNetwork ?? false, false, 'no host network (restricted)')
  t.notOk(
    (pod.volumes ?? []).some((v: Json) => v.hostPath !== undefined),
    'no hostPath volume (restricted)'
  )
  t.ok(
    container.resources?.requests?.cpu !== undefined && container.resources?.requests?.memory !== undefined,
    'resource requests'
  )
  t.ok(container.resources?.limits?.memory !== undefined, 'a memory limit')

  const graceMs = Number(env.SHUTDOWN_GRACE_MS ?? 15000)
  const preStop = container.lifecycle?.preStop
  const pauseMs =
    preStop?.sleep?.seconds !== undefined
      ? preStop.sleep.seconds * 1000
      : Number(preStop?.exec?.command?.[0] === 'sleep' ? preStop.exec.command[1] : 0) * 1000
  t.ok(
    pod.terminationGracePeriodSeconds * 1000 > graceMs + pauseMs,
    'the grace period covers the preStop pause and the drain of hooks in flight'
  )

  const spread = pod.topologySpreadConstraints?.[0]
  const antiAffinity = pod.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.[0]
  t.ok(
    (spread?.whenUnsatisfiable === 'ScheduleAnyway' && selects(spread.labelSelector?.matchLabels)) ||
      selects(antiAffinity?.podAffinityTerm?.labelSelector?.matchLabels),
    'replicas prefer different nodes'
  )

  const accounts = ofKind('ServiceAccount', 'deploy/').map(d => d.object)
  t.ok(
    accounts.some(
      a => a.metadata.name === pod.serviceAccountName && a.metadata.namespace === deployment.metadata.namespace
    ),
    'its ServiceAccount exists'
  )
  const account = accounts.find(a => a.metadata.name === pod.serviceAccountName)
  t.not(
    pod.automountServiceAccountToken ?? account?.automountServiceAccountToken,
    false,
    'the pods get the token that applies effects'
  )
})

t.test("the ClusterRole grants exactly what the effects need, to the Deployment's ServiceAccount", async t => {
  const roles = ofKind('ClusterRole', 'deploy/').map(d => d.object)
  t.equal(roles.length, 1, 'one ClusterRole')
  const role = roles[0]
  const granted: string[] = []
  for (const rule of role?.rules ?? []) {
    t.same(
      Object.keys(rule).sort(),
      ['apiGroups', 'resources', 'verbs'],
      'no resourceNames, nonResourceURLs or aggregation'
    )
    for (const group of rule.apiGroups ?? []) {
      for (const resource of rule.resources ?? []) {
        for (const verb of rule.verbs ?? []) granted.push(`${String(group)} ${String(resource)} ${String(verb)}`)
      }
    }
  }
  const needed = [...Object.values(EFFECT_PERMISSIONS), PARENT_PERMISSIONS, EVENT_PERMISSIONS].flatMap(permissions =>
    permissions.flatMap(p => p.verbs.map(verb => `${p.apiGroup} ${p.resource} ${verb}`))
  )
  t.same(
    [...new Set(granted)].sort(),
    [...new Set(needed)].sort(),
    "the union of EFFECT_PERMISSIONS, the parents' reads and the Events, no more, no less"
  )
  t.same(
    EVENT_PERMISSIONS,
    [{ apiGroup: '', resource: 'events', verbs: ['create', 'patch'] }],
    'Events: create and patch in the core group, nothing more'
  )
  t.same(
    PARENT_PERMISSIONS.map(p => `${p.resource} ${p.verbs.join(',')}`),
    ['ephemeraljobs get', 'operationjobs get', 'collasets get', 'jobflows get', 'cronjobflows get'],
    'reads of the parents whose hooks have effects, only get'
  )
  t.same(granted.length, new Set(granted).size, 'nothing granted twice')
  t.notOk(
    granted.some(g => g.includes('*')),
    'no wildcards'
  )
  t.same(
    Object.keys(EFFECT_PERMISSIONS).sort(),
    ['Delete', 'Evict', 'InjectEphemeralContainers', 'ReleaseClaim', 'ResizePod', 'SetPodCondition', 'SetPodLabels',
      'StopJobFlow', 'UpdatePodInPlace'],
    'every effect type has its permissions listed'
  )

  const bindings = ofKind('ClusterRoleBinding', 'deploy/').map(d => d.object)
  t.equal(bindings.length, 1, 'one ClusterRoleBinding')
  const binding = bindings[0]
  t.same(
    binding?.roleRef,
    { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role?.metadata.name },
    'binds the ClusterRole'
  )
  t.same(
    binding?.subjects,
    [
      {
        kind: 'ServiceAccount',
        name: deployment.spec.template.spec.serviceAccountName,
        namespace: deployment.metadata.namespace
      }
    ],
    "to the Deployment's ServiceAccount only"
  )
})

t.test("Service, PDB and NetworkPolicy select the Deployment's pods", async t => {
  t.equal(services.length, 1, 'one Service')
  const service = services[0]
  t.equal(service.spec.type ?? 'ClusterIP', 'ClusterIP')
  t.ok(selects(service.spec.selector), 'the Service selects the pods')
  for (const port of service.spec.ports) {
    t.ok(namesPort(port.targetPort ?? port.port), `Service port ${String(port.port)} targets a container port`)
  }
  t.ok(
    service.spec.ports.some((p: Json) => p.port === 80),
    'the Service listens on 80'
  )

  const pdb = ofKind('PodDisruptionBudget', 'deploy/')[0]?.object
  t.ok(selects(pdb?.spec.selector.matchLabels), 'the PDB selects the pods')
  t.ok(
    pdb?.spec.minAvailable >= 1 && pdb?.spec.minAvailable < deployment.spec.replicas,
    'the PDB keeps one pod but lets drains proceed'
  )

  const policy = ofKind('NetworkPolicy', 'deploy/')[0]?.object
  t.ok(selects(policy?.spec.podSelector.matchLabels), 'the NetworkPolicy selects the pods')
  const ports = (policy?.spec.ingress ?? []).flatMap((rule: Json) => rule.ports ?? [])
  t.ok(ports.length > 0 && ports.every((p: Json) => namesPort(p.port)), 'the NetworkPolicy opens the container port')
  t.same(policy?.spec.policyTypes, ['Ingress'])
  t.same(
    (policy?.spec.ingress ?? []).map((rule: Json) => rule.from),
    [[{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'metacontroller' } } }]],
    "only Metacontroller's namespace is admitted, by default the one its own manifests create"
  )

  const namespaces = new Set(ofKind('Namespace', 'deploy/').map(d => d.object.metadata.name))
  const clusterScoped = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding'])
  for (const { file, object } of docs.filter(d => d.file.startsWith('deploy/') && !clusterScoped.has(d.object.kind))) {
    t.ok(namespaces.has(object.metadata.namespace), `${file}: in a namespace the manifests create`)
  }
})

t.test(
  'every hook sends the token of a Secret the Deployment mounts as AUTH_TOKEN_FILE; no token ships in the manifests',
  async t => {
    const pod = deployment.spec.template.spec
    const env = Object.fromEntries((container.env ?? []).map((e: Json) => [e.name, e.value]))
    const tokenFile = String(env.AUTH_TOKEN_FILE)
    const mount = (container.volumeMounts ?? []).find((m: Json) => tokenFile.startsWith(`${String(m.mountPath)}/`))
    t.ok(mount !== undefined, `AUTH_TOKEN_FILE ${tokenFile} is in a mounted volume`)
    t.equal(mount?.readOnly, true, 'mounted read-only')
    const volume = (pod.volumes ?? []).find((v: Json) => v.name === mount?.name)
    const secretName = volume?.secret?.secretName
    t.ok(typeof secretName === 'string', 'the volume is a Secret')
    t.not(volume?.secret?.optional, true, 'a missing Secret stops the pod instead of serving without a token')
    const key = tokenFile.slice(String(mount?.mountPath).length + 1)
    const mode = volume?.secret?.defaultMode ?? 0o644
    t.equal(mode & 0o007, 0, 'the token is not world-readable')
    if ((mode & 0o070) !== 0) {
      t.equal(pod.securityContext?.fsGroup, pod.securityContext?.runAsGroup ?? 1000, 'readable through fsGroup')
    }

    const controllers = ofKind('CompositeController', 'controllers/')
    for (const { file, object } of controllers) {
      for (const [hook, config] of Object.entries<Json>(object.spec.hooks ?? {})) {
        t.same(
          config.webhook.authorization,
          {
            type: 'Bearer',
            secretRef: { name: secretName, namespace: deployment.metadata.namespace, key }
          },
          `${file}: the ${hook} hook sends the token the service reads`
        )
      }
    }
    t.same(
      docs.filter(d => d.object.kind === 'Secret').map(d => d.file),
      [],
      'no Secret in the manifests: every installation makes its own token'
    )
    for (const file of [
      'README.md',
      ...readdirSync(join(ROOT, 'docs'))
        .filter(f => f.endsWith('.md'))
        .map(f => `docs/${f}`)
    ]) {
      t.notMatch(
        readFileSync(join(ROOT, file), 'utf8'),
        /--from-literal=token=(?!"\$\()/,
        `${file} never shows a fixed token`
      )
    }
  }
)

t.test('kustomization.yaml installs crds, controllers and deploy, and only those', async t => {
  const kustomization = docs.find(d => d.file === 'kustomization.yaml')?.object
  const resources: string[] = kustomization?.resources ?? []
  for (const resource of resources) t.ok(existsSync(join(MANIFESTS, resource)), `${resource} exists`)
  t.notOk(
    resources.some(r => r.startsWith('examples')),
    'the examples are not installed'
  )
  const installable = [...new Set(docs.map(d => d.file))].filter(f => /^(crds|controllers|deploy)\//.test(f))
  for (const file of installable) t.ok(resources.includes(file), `${file} is listed`)
  t.same([...new Set(resources)], resources, 'no resource listed twice')
})

t.test('the Dockerfile builds what the Deployment runs', async t => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
  const build = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8'))
  const cmd = /^CMD\s+(\[.*\])\s*$/m.exec(dockerfile)?.[1]
  const args = cmd === undefined ? [] : (JSON.parse(cmd) as string[])
  t.equal(args.at(-1), `${String(build.compilerOptions.outDir)}/src/server.js`, 'CMD runs the compiled server')
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
  const start = (pkg.scripts.start as string)
    .split('&&')
    .map(part => part.trim())
    .find(part => part.startsWith('node '))
  t.same(args, start?.split(/\s+/), 'the image runs the server exactly as npm start does (same node flags)')
  t.ok(existsSync(join(ROOT, 'src', 'server.ts')), 'its source exists')
  t.match(
    dockerfile,
    new RegExp(`^EXPOSE\\s+${String(containerPorts[0]?.containerPort)}\\s*$`, 'm'),
    'EXPOSE matches the container port'
  )
  t.match(dockerfile, /^USER\s+node\s*$/m, 'runs as the node user (uid 1000)')
  t.match(dockerfile, /^COPY\s+hooks\s+\S*hooks\/?\s*$/m, 'ships hooks/')
  t.match(dockerfile, /^COPY\s+package\.json\s/m, 'ships package.json, which the server uses to find hooks/')
  t.match(dockerfile, /npm ci --omit=dev/, 'production dependencies only in the runtime image')
  const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map(l => l.trim())
  for (const needed of ['src', 'hooks', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json']) {
    t.notOk(ignored.includes(needed), `.dockerignore keeps ${needed}`)
  }
  t.ok(ignored.includes('node_modules'), '.dockerignore leaves out node_modules')
})
