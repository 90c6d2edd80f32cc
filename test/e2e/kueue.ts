// Kueue in the end-to-end tier, for the scenario files that ask for it (TierOptions.kueue): the
// binary and config/default of Kueue's own module (test/e2e/build-binaries.sh), installed as that
// manifest installs it, except what needs a Service network or a Deployment. The API server calls
// its webhooks and CRD conversion at `url: https://127.0.0.1:<port>/<path>` instead of the
// Service, with a serving certificate the tier makes (a CA and a certificate for IP 127.0.0.1),
// and cmd/kueue runs as a process with the tier's kubeconfig, every server on 127.0.0.1.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse, parseAllDocuments, stringify } from 'yaml'
import { freePort, probeStatus, run, waitFor, type Process, type Result } from './processes.js'

export interface KueueBinaries {
  kueue: string
  version: string
  /** Kueue's config/default, rendered (KUEUE_MANIFESTS of build-binaries.sh). */
  manifests: string
}

/** What Kueue needs of the tier: its folder, kubeconfig, kubectl and a way to start processes. */
export interface KueueHost {
  dir: string
  kubeconfig: string
  kubectl: (args: string[], input?: string) => Promise<Result>
  start: (name: string, command: string, args: string[], env?: NodeJS.ProcessEnv) => Process
}

/** The Kueue npm run e2e built (E2E_KUEUE...), or undefined when it did not. */
export function kueueFromEnv (): KueueBinaries | undefined {
  const kueue = process.env.E2E_KUEUE
  const version = process.env.E2E_KUEUE_VERSION
  const manifests = process.env.E2E_KUEUE_MANIFESTS
  if (kueue === undefined || kueue === '' || manifests === undefined || manifests === '') return undefined
  return { kueue, version: version ?? 'unknown', manifests }
}

/** Whether the cluster has Kueue's API (a user's cluster, E2E_KUBECONFIG). */
export async function hasKueueApi (kubectl: KueueHost['kubectl']): Promise<boolean> {
  const result = await kubectl(['get', 'crd', 'clusterqueues.kueue.x-k8s.io', 'workloads.kueue.x-k8s.io'])
  return result.code === 0
}

async function ok (kubectl: KueueHost['kubectl'], args: string[], input?: string): Promise<string> {
  const result = await kubectl(args, input)
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${result.stderr}`)
  return result.stdout
}

async function openssl (args: string[]): Promise<void> {
  const result = await run('openssl', args)
  if (result.code !== 0) throw new Error(`openssl ${args.join(' ')} failed: ${result.stderr}`)
}

/** A CA and a serving certificate for IP 127.0.0.1 signed by it, as tls.crt/tls.key in `dir`; the CA's PEM. */
async function makeCertificate (dir: string): Promise<string> {
  mkdirSync(dir, { recursive: true })
  const at = (name: string): string => join(dir, name)
  await openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=e2e-kueue-ca',
    '-keyout', at('ca.key'), '-out', at('ca.crt')])
  await openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', at('tls.key'),
    '-out', at('tls.csr')])
  writeFileSync(at('san.cnf'), 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n')
  await openssl(['x509', '-req', '-in', at('tls.csr'), '-CA', at('ca.crt'), '-CAkey', at('ca.key'),
    '-CAcreateserial', '-days', '2', '-extfile', at('san.cnf'), '-out', at('tls.crt')])
  return readFileSync(at('ca.crt'), 'utf8')
}

/** A webhook client config's `service` (and `port`) made a URL on 127.0.0.1, trusting `caBundle`. */
function pointAt (clientConfig: any, port: number, caBundle: string): any {
  const { service, ...rest } = clientConfig ?? {}
  if (service === undefined) throw new Error(`a Kueue webhook reaches no service: ${JSON.stringify(clientConfig)}`)
  return { ...rest, url: `https://127.0.0.1:${port}${String(service.path ?? '/')}`, caBundle }
}

/**
 * The objects of Kueue's manifest the tier applies, its webhooks at 127.0.0.1:`port`: the CRDs,
 * its Namespace and its two webhook configurations. Left out: the Deployment and Services (the
 * binary runs as a process), RBAC (it runs as the tier's admin), the internal certificate's
 * Secret (the tier makes the certificate) and the visibility APIService (its server is off).
 */
export function kueueObjects (manifest: string, port: number, caPem: string): { applied: any[]; config: any } {
  const docs = parseAllDocuments(manifest).map((d) => d.toJS()).filter((d) => d !== null)
  const caBundle = Buffer.from(caPem).toString('base64')
  const applied = []
  for (const doc of docs) {
    if (doc.kind === 'Namespace') applied.push(doc)
    if (doc.kind === 'CustomResourceDefinition') {
      const webhook = doc.spec?.conversion?.webhook
      if (webhook !== undefined) webhook.clientConfig = pointAt(webhook.clientConfig, port, caBundle)
      applied.push(doc)
    }
    if (doc.kind === 'MutatingWebhookConfiguration' || doc.kind === 'ValidatingWebhookConfiguration') {
      for (const hook of doc.webhooks ?? []) hook.clientConfig = pointAt(hook.clientConfig, port, caBundle)
      applied.push(doc)
    }
  }
  const configMap = docs.find((d) => d.kind === 'ConfigMap' && d.data?.['controller_manager_config.yaml'] !== undefined)
  if (configMap === undefined) throw new Error('Kueue\'s manifest has no ConfigMap with controller_manager_config.yaml')
  return { applied, config: parse(configMap.data['controller_manager_config.yaml']) }
}

/**
 * Installs Kueue and starts it; resolves once its webhooks answer the API server. Its
 * Configuration is the manifest's own with what the tier changes: servers on 127.0.0.1, the
 * tier's certificate instead of internal certificate management, no leader election, the
 * batch/job integration only, and no visibility server (an extension API server of its own).
 */
export async function startKueue (host: KueueHost, binaries: KueueBinaries): Promise<void> {
  const [webhookPort, metricsPort, healthPort] = await Promise.all([freePort(), freePort(), freePort()])
  const certDir = join(host.dir, 'kueue-certs')
  const caPem = await makeCertificate(certDir)
  const { applied, config } = kueueObjects(readFileSync(binaries.manifests, 'utf8'), webhookPort, caPem)
  const hooks = applied.filter((d) => d.kind.endsWith('WebhookConfiguration'))
  const rest = applied.filter((d) => !d.kind.endsWith('WebhookConfiguration'))
  await ok(host.kubectl, ['apply', '--server-side', '-f', '-'], rest.map((d) => stringify(d)).join('---\n'))
  await ok(host.kubectl, ['wait', '--for=condition=Established', '--timeout=60s', 'crd', '-l',
    'app.kubernetes.io/name=kueue'])

  const configFile = join(host.dir, 'kueue-config.yaml')
  writeFileSync(configFile, stringify({
    ...config,
    health: { ...config.health, healthProbeBindAddress: `127.0.0.1:${healthPort}` },
    metrics: { ...config.metrics, bindAddress: `127.0.0.1:${metricsPort}` },
    webhook: { ...config.webhook, host: '127.0.0.1', port: webhookPort, certDir },
    leaderElection: { ...config.leaderElection, leaderElect: false },
    internalCertManagement: { enable: false },
    integrations: { frameworks: ['batch/job'] },
    featureGates: { ...config.featureGates, VisibilityOnDemand: false },
  }))
  const kueue = host.start('kueue', binaries.kueue, [`--config=${configFile}`, '--zap-log-level=2'], {
    ...process.env,
    KUBECONFIG: host.kubeconfig,
    KUEUE_METRICS_CERT_DIR: certDir,
  })
  await waitFor('Kueue /readyz', async () => {
    if (!kueue.running) throw new Error(`Kueue exited (log: ${join(host.dir, 'kueue.log')})`)
    return (await probeStatus(`http://127.0.0.1:${healthPort}/readyz`)) === 200 ? true : undefined
  }, 60_000)
  await ok(host.kubectl, ['apply', '--server-side', '-f', '-'], hooks.map((d) => stringify(d)).join('---\n'))
  // The API server calls the webhooks as soon as their configurations are stored: a dry-run
  // through the ResourceFlavor webhooks passes once they answer with the tier's certificate.
  const flavor = stringify({
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'ResourceFlavor',
    metadata: { name: 'e2e-webhook-probe' },
  })
  await waitFor('Kueue\'s webhooks to answer', async () =>
    (await host.kubectl(['create', '--dry-run=server', '-f', '-'], flavor)).code === 0 ? true : undefined
  , 60_000)
}
