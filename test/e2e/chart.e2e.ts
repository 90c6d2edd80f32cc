// The Helm chart against the kustomize install, without a cluster: helm lint, and helm template
// compared object by object with kubectl kustomize manifests. With default values the chart must
// install what the kustomize install does, but for the differences named here, each on purpose;
// its values must change only what they say. (helm.e2e.ts installs it on a real API server.)
import t, { type Test } from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'
import { ROOT } from './cluster.js'
import { CHART, NAMESPACE, RELEASE, helm, helmBinary, kustomizeObjects, objectKey, renderChart } from './chart.js'

const chartMeta = parse(readFileSync(join(CHART, 'Chart.yaml'), 'utf8'))
const values = parse(readFileSync(join(CHART, 'values.yaml'), 'utf8'))
const kustomization = parse(readFileSync(join(ROOT, 'manifests', 'kustomization.yaml'), 'utf8'))
/** The CRDs of the project, one file each: as many as the chart installs. */
const CRD_COUNT = readdirSync(join(ROOT, 'manifests', 'crds')).filter(f => f.endsWith('.yaml')).length
/** One CompositeController per kind with hooks, one file each. */
const CONTROLLER_COUNT = readdirSync(join(ROOT, 'manifests', 'controllers')).filter(f => f.endsWith('.yaml')).length

/** The labels Helm's conventions add to every object the chart makes (not to its pods). */
const HELM_LABELS = {
  'app.kubernetes.io/instance': RELEASE,
  'app.kubernetes.io/managed-by': 'Helm',
  'helm.sh/chart': `jobhooks-${String(chartMeta.version)}`,
}

const kustomize = await kustomizeObjects()
const defaults = await renderChart()
t.comment(`helm: ${helmBinary()}`)

const byKey = (objects: any[]): Map<string, any> => new Map(objects.map((o) => [objectKey(o), o]))
const find = (objects: any[], kind: string, name?: string): any =>
  objects.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name))
const controllers = (objects: any[]): any[] => objects.filter((o) => o.kind === 'CompositeController')
const webhooks = (objects: any[]): Array<{ at: string; webhook: any }> =>
  controllers(objects).flatMap((c) =>
    Object.entries<any>(c.spec.hooks).map(([hook, config]) => ({
      at: `${String(c.metadata.name)} ${hook}`,
      webhook: config.webhook,
    }))
  )
const container = (objects: any[]): any => find(objects, 'Deployment', 'jobhooks').spec.template.spec.containers[0]
const env = (objects: any[]): Record<string, string> =>
  Object.fromEntries(container(objects).env.map((e: any) => [e.name, e.value]))

/**
 * The chart's object as the kustomize install would have it: Helm's labels taken off (checked to
 * be exactly those), and a CRD's keep annotation.
 */
function withoutHelm (object: any, t: Test): any {
  const copy = structuredClone(object)
  const labels: Record<string, string> = copy.metadata.labels ?? {}
  t.same(
    Object.fromEntries(Object.entries(labels).filter(([k]) => k in HELM_LABELS)),
    HELM_LABELS,
    `${objectKey(object)}: Helm's labels`
  )
  for (const label of Object.keys(HELM_LABELS)) delete labels[label]
  if (copy.kind === 'CustomResourceDefinition') {
    t.same(
      copy.metadata.annotations,
      { 'helm.sh/resource-policy': 'keep' },
      `${objectKey(object)}: kept on helm uninstall`
    )
    delete copy.metadata.annotations
  }
  return copy
}

t.test('helm lint --strict passes, with the defaults and with every optional part on', async (t) => {
  const variants: string[][] = [
    [],
    ['--set', 'tls.enabled=true,tls.mutual.enabled=true,serviceMonitor.enabled=true'],
    ['--set', 'token.existingSecret=my-token,replicaCount=1,crds.install=false,networkPolicy.enabled=false'],
    ['--set', 'controllers.hooksURL=https://hooks.example.com:8443,image.digest=sha256:' + 'a'.repeat(64)],
  ]
  for (const args of variants) {
    const result = await helm(['lint', '--strict', CHART, '--namespace', NAMESPACE, ...args])
    t.equal(result.code, 0, `helm lint --strict ${args.join(' ')}`, { stdout: result.stdout, stderr: result.stderr })
    t.match(result.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/)
  }
})

t.test(
  'with default values the chart renders the objects of kubectl kustomize manifests, but for the differences on ' +
    'purpose',
  async (t) => {
    const chart = byKey(defaults)
    const manifests = byKey(kustomize)
    t.ok(manifests.size >= 18, `kubectl kustomize manifests: ${manifests.size} objects`)

    // On purpose, and said in charts/jobhooks/README.md, "Differences from the kustomize install":
    // the chart makes the token Secret the kustomize install has the user make first, and Helm
    // needs the release namespace before it installs anything, so the chart cannot make it.
    t.same(
      [...chart.keys()].filter((k) => !manifests.has(k)),
      [`Secret ${NAMESPACE}/jobhooks-hook-token`],
      'the chart alone makes the token Secret'
    )
    t.same(
      [...manifests.keys()].filter((k) => !chart.has(k)),
      [`Namespace ${NAMESPACE}`],
      'the kustomize install alone makes the namespace'
    )

    for (const [key, expected] of manifests) {
      const object = chart.get(key)
      if (object === undefined) continue
      t.same(withoutHelm(object, t), expected, `${key}: the same object`)
    }
    // The pods carry no Helm label: the Deployment's selector and the pods are the kustomize install's.
    t.same(
      find(defaults, 'Deployment').spec.template.metadata.labels,
      find(kustomize, 'Deployment').spec.template.metadata.labels
    )
  }
)

t.test(
  "the image is named in one place per install: the kustomization's images entry, the chart's values",
  async (t) => {
    const [entry] = kustomization.images
    t.equal(container(kustomize).image, `${String(entry.newName)}:${String(entry.newTag)}`)
    t.same(
      values.image,
      { repository: entry.newName, tag: entry.newTag, digest: '', pullPolicy: 'IfNotPresent' },
      "the chart's default is the kustomization's image"
    )
    const templates =
      readFileSync(join(CHART, 'templates', 'deployment.yaml'), 'utf8') +
      readFileSync(join(CHART, 'templates', '_helpers.tpl'), 'utf8')
    t.notMatch(templates, String(entry.newName), 'no template names the image')
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
    t.equal(chartMeta.appVersion, pkg.version, "the chart's appVersion is the service's version")

    t.equal(
      container(await renderChart(['--set', 'image.repository=registry.example/jobhooks,image.tag=1.2.3'])).image,
      'registry.example/jobhooks:1.2.3'
    )
    const digest = `sha256:${'0123456789abcdef'.repeat(4)}`
    t.equal(
      container(await renderChart(['--set', `image.digest=${digest}`])).image,
      `${String(entry.newName)}@${digest}`,
      'a digest pins the image, whatever the tag'
    )
  }
)

t.test(
  "the token: random and new for every install, never a value of the chart; or the user's own Secret",
  async (t) => {
    const tokenOf = (objects: any[]): string =>
      Buffer.from(find(objects, 'Secret', 'jobhooks-hook-token').data.token, 'base64').toString()
    const first = tokenOf(defaults)
    const second = tokenOf(await renderChart())
    t.match(first, /^[A-Za-z0-9]{64}$/, 'a 64-character token (the service wants 32 or more)')
    t.not(first, second, 'another install, another token')
    t.notMatch(readFileSync(join(CHART, 'values.yaml'), 'utf8'), /^\s*token:\s*\S+\s*$/m, 'values.yaml holds no token')
    const secret = find(defaults, 'Secret', 'jobhooks-hook-token')
    t.equal(secret.type, 'Opaque')
    t.same(Object.keys(secret.data), ['token'])

    const own = await renderChart(['--set', 'token.existingSecret=my-token,token.existingSecretKey=bearer'])
    t.equal(find(own, 'Secret'), undefined, 'with token.existingSecret the chart makes no Secret')
    for (const { at, webhook } of webhooks(own)) {
      t.same(
        webhook.authorization,
        { type: 'Bearer', secretRef: { name: 'my-token', namespace: NAMESPACE, key: 'bearer' } },
        `${at}: sends the user's token`
      )
    }
    const deployment = find(own, 'Deployment')
    t.equal(env(own).AUTH_TOKEN_FILE, '/var/run/jobhooks/auth/bearer', 'the service reads that key')
    t.match(
      deployment.spec.template.spec.volumes.find((v: any) => v.name === 'hook-token'),
      { secret: { secretName: 'my-token', defaultMode: 0o440 } }
    )
    t.equal(
      deployment.spec.template.spec.volumes.find((v: any) => v.name === 'hook-token').secret.optional,
      undefined,
      'never optional: no Secret, no pods'
    )
  }
)

t.test(
  'TLS and mutual TLS make the changes docs/security.md, "HTTPS and mutual TLS" makes by hand to the kustomize install',
  async (t) => {
    for (const mutual of [false, true]) {
      await t.test(mutual ? 'mutual TLS' : 'HTTPS', async (t) => {
        const chart = await renderChart([
          '--set',
          `tls.enabled=true,tls.secretName=jobhooks-tls,tls.mutual.enabled=${String(mutual)},` +
            'tls.mutual.clientSecretName=metacontroller-client-tls',
        ])
        const expected = byKey(structuredClone(kustomize))
        // What the page says to change, on the kustomize install's objects.
        for (const controller of controllers([...expected.values()])) {
          for (const hook of Object.values<any>(controller.spec.hooks)) {
            hook.webhook.service.protocol = 'https'
            hook.webhook.caBundle = { secretRef: { name: 'jobhooks-tls', namespace: NAMESPACE, key: 'ca.crt' } }
            if (mutual) {
              hook.webhook.clientTLS = { secretRef: { name: 'metacontroller-client-tls', namespace: NAMESPACE } }
            }
          }
        }
        const deployment = expected.get(`Deployment ${NAMESPACE}/jobhooks`)
        const pod = deployment.spec.template.spec
        const c = pod.containers[0]
        c.env.push(
          { name: 'TLS_CERT_FILE', value: '/var/run/jobhooks/tls/tls.crt' },
          { name: 'TLS_KEY_FILE', value: '/var/run/jobhooks/tls/tls.key' }
        )
        if (mutual) c.env.push({ name: 'TLS_CLIENT_CA_FILE', value: '/var/run/jobhooks/tls/ca.crt' })
        c.volumeMounts.push({ name: 'tls', mountPath: '/var/run/jobhooks/tls', readOnly: true })
        pod.volumes.push({ name: 'tls', secret: { secretName: 'jobhooks-tls', defaultMode: 0o440 } })
        for (const probe of [c.readinessProbe, c.livenessProbe]) probe.httpGet.scheme = 'HTTPS'
        // The chart's own addition: the port is named https, since a mesh reads a port's protocol
        // from its name and would treat TLS named http as plain HTTP.
        c.ports[0].name = 'https'
        for (const probe of [c.readinessProbe, c.livenessProbe]) probe.httpGet.port = 'https'
        const service = expected.get(`Service ${NAMESPACE}/jobhooks`)
        service.spec.ports[0].name = 'https'
        service.spec.ports[0].targetPort = 'https'

        const rendered = byKey(chart)
        for (const [key, object] of expected) {
          if (rendered.has(key)) t.same(withoutHelm(rendered.get(key), t), object, `${key}: as the page says`)
        }
      })
    }
  }
)

t.test('values change what they say, and only that', async (t) => {
  const changed = await renderChart([
    '--set',
    'replicaCount=3,metacontroller.namespace=metacontroller-system,controllers.resyncPeriodSeconds=120,' +
      'logLevel=debug,nodeOptions=--max-old-space-size=768',
    '--set',
    'resources.limits.memory=2Gi,extraEnv[0].name=EFFECTS_CONCURRENCY,extraEnv[0].value=4,nodeSelector.pool=system',
  ])
  const deployment = find(changed, 'Deployment')
  t.equal(deployment.spec.replicas, 3)
  t.same(container(changed).resources, { requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '2Gi' } })
  t.match(env(changed), { LOG_LEVEL: 'debug', NODE_OPTIONS: '--max-old-space-size=768', EFFECTS_CONCURRENCY: '4' })
  t.same(deployment.spec.template.spec.nodeSelector, { pool: 'system' })
  t.same(
    find(changed, 'NetworkPolicy').spec.ingress[0].from,
    [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'metacontroller-system' } } }],
    "only the pods of Metacontroller's namespace reach the hooks"
  )
  t.same(
    controllers(changed).map((c) => c.spec.resyncPeriodSeconds),
    Array.from({ length: CONTROLLER_COUNT }, () => 120)
  )

  const single = await renderChart(['--set', 'replicaCount=1'])
  t.equal(
    find(single, 'PodDisruptionBudget'),
    undefined,
    'one replica: no PodDisruptionBudget, which would block every drain'
  )

  const scraped = await renderChart([
    '--set-json',
    'networkPolicy.extraFrom=[{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"monitoring"}}}]',
  ])
  t.same(
    find(scraped, 'NetworkPolicy').spec.ingress[0].from.map(
      (peer: any) => peer.namespaceSelector.matchLabels['kubernetes.io/metadata.name']
    ),
    ['metacontroller', 'monitoring']
  )

  const noCrds = await renderChart(['--set', 'crds.install=false'])
  t.equal(noCrds.filter((o) => o.kind === 'CustomResourceDefinition').length, 0, 'crds.install=false: no CRDs')
  const unkept = await renderChart(['--set', 'crds.keep=false'])
  t.same(
    unkept.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => o.metadata.annotations),
    Array(CRD_COUNT).fill(undefined),
    'crds.keep=false: helm uninstall deletes them'
  )

  const outside = await renderChart(['--set', 'controllers.hooksURL=https://hooks.example.com:8443/'])
  for (const { at, webhook } of webhooks(outside)) {
    const original = webhooks(kustomize).find((w) => w.at === at)?.webhook
    t.same(
      webhook,
      {
        url: `https://hooks.example.com:8443${String(original.path)}`,
        timeout: original.timeout,
        authorization: original.authorization,
      },
      `${at}: called at controllers.hooksURL`
    )
  }
})

t.test("an optional ServiceMonitor scrapes /metrics on the Service's port", async (t) => {
  t.equal(find(defaults, 'ServiceMonitor'), undefined, 'none by default')
  for (const tls of [false, true]) {
    const chart = await renderChart([
      '--set',
      `serviceMonitor.enabled=true,serviceMonitor.labels.release=prometheus,tls.enabled=${String(tls)}`,
    ])
    const monitor = find(chart, 'ServiceMonitor')
    const service = find(chart, 'Service')
    t.equal(monitor.apiVersion, 'monitoring.coreos.com/v1')
    t.equal(monitor.metadata.labels.release, 'prometheus', 'with the labels Prometheus selects by')
    t.same(monitor.spec.namespaceSelector, { matchNames: [NAMESPACE] })
    for (const [label, value] of Object.entries<string>(monitor.spec.selector.matchLabels)) {
      t.equal(service.metadata.labels[label], value, `selects the Service by ${label}`)
    }
    const others = chart.filter((o) => o.kind === 'Service' && o !== service)
    t.same(others, [], 'the only Service')
    t.same(
      monitor.spec.endpoints,
      [
        {
          port: service.spec.ports[0].name,
          path: '/metrics',
          interval: '30s',
          scrapeTimeout: '10s',
          ...(tls
            ? {
                scheme: 'https',
                tlsConfig: {
                  serverName: `jobhooks.${NAMESPACE}.svc`,
                  ca: { secret: { name: 'jobhooks-tls', key: 'ca.crt' } },
                },
              }
            : {}),
        },
      ],
      tls ? "over HTTPS, checking the service's certificate" : 'over HTTP'
    )
  }
})

t.test('values the chart refuses, naming what is wrong', async (t) => {
  const refused: Array<[string[], RegExp]> = [
    [['--set', 'replicas=3'], /additional properties 'replicas' not allowed/],
    [['--set', 'tls.mutual.enabled=true'], /tls.mutual.enabled needs tls.enabled/],
    [['--set', 'tls.enabled=true,tls.secretName='], /tls.secretName is required/],
    [['--set', 'extraEnv[0].name=AUTH,extraEnv[0].value=none'], /extraEnv\/0\/name/],
    [['--set', 'extraEnv[0].name=AUTH_TOKEN_FILE,extraEnv[0].value=/tmp/x'], /extraEnv\/0\/name/],
    [['--set', 'image.digest=latest'], /image\/digest/],
    [['--set', 'controllers.hooksURL=hooks.example.com'], /controllers\/hooksURL/],
    [['--set', 'metacontroller.namespace='], /metacontroller\/namespace/],
    [['--set', 'logLevel=verbose'], /logLevel/],
  ]
  for (const [args, message] of refused) {
    const result = await helm(['template', RELEASE, CHART, '--namespace', NAMESPACE, ...args])
    t.not(result.code, 0, `refused: ${args.join(' ')}`)
    t.match(result.stderr, message, args.join(' '))
  }
})
