// The Helm chart on the tier's real API server, with Metacontroller v4.17.2: helm install makes
// every object of the chart, and the JobFlow example runs through the CRDs, the CompositeControllers
// and the token Secret the chart made; after helm upgrade, through mutual TLS with the chart's TLS
// settings, then through a token Secret of the user's own; helm uninstall keeps the CRDs.
//
// What runs where: the tier has no image registry and kwok plays every pod, so the hooks are
// served by the service the tier runs on 127.0.0.1, and the chart's webhooks are pointed at it
// (controllers.hooksURL). The chart's Deployment is installed all the same: admitted in a
// namespace that enforces the restricted Pod Security Standard, scheduled, rolled out (kwok's
// pods); its pod spec is compared with the kustomize install's in chart.e2e.ts. The service
// reads the token the chart generated, from the Secret on the API server, as the Deployment
// mounts it; Metacontroller sends it from that same Secret. Everything asserted is read back from
// the API server.
import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import { readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { stringify } from 'yaml'
import { authority } from '../helpers/certificates.js'
import { apply, ROOT, waitFor } from './cluster.js'
import { CHART, NAMESPACE, RELEASE, helm, parseObjects } from './chart.js'
import { jobFlowExample, startScenarios } from './scenario.js'

/** The CRDs of the project, one file each: as many as the chart installs. */
const CRD_COUNT = readdirSync(join(ROOT, 'manifests', 'crds')).filter(f => f.endsWith('.yaml')).length

if (process.env.E2E_KUBECONFIG !== undefined && process.env.E2E_KUBECONFIG !== '') {
  t.plan(0, 'the cluster of E2E_KUBECONFIG runs jobhooks already: the chart would clash with it')
} else {
  await scenarios()
}

async function scenarios (): Promise<void> {
  const { cluster, namespace, getJson } = await startScenarios(t, { jobhooks: 'none' })
  const { kubectl } = cluster
  const startService = cluster.startService as NonNullable<typeof cluster.startService>
  const killService = cluster.killService as NonNullable<typeof cluster.killService>
  const hooksUrl = String(cluster.hooksUrl)
  const files = String(cluster.logDir)

  const ok = async (
    result: Promise<{ code: number | null; stdout: string; stderr: string }>,
    what: string
  ): Promise<string> => {
    const { code, stdout, stderr } = await result
    if (code !== 0) throw new Error(`${what} failed: ${stderr}${stdout}`)
    return stdout
  }
  const helmOk = async (args: string[]): Promise<string> =>
    await ok(helm([...args, '--kubeconfig', cluster.kubeconfig]), `helm ${args.slice(0, 2).join(' ')}`)
  const install = async (verb: 'install' | 'upgrade', set: string): Promise<string> =>
    await helmOk([verb, RELEASE, CHART, '--namespace', NAMESPACE, '--set', set, '--wait', '--timeout', '3m'])
  /** What helm would print, the notes included, reading the cluster as a real run does. */
  const dryRun = async (verb: 'install' | 'upgrade', set: string): Promise<string> =>
    await helmOk([verb, RELEASE, CHART, '--namespace', NAMESPACE, '--set', set, '--dry-run=server'])
  const tokenIn = async (secret: string): Promise<string> =>
    Buffer.from((await getJson(['get', 'secret', secret, '-n', NAMESPACE])).data.token, 'base64').toString()
  /** The token in a file for the service, as the Deployment mounts the Secret. */
  const tokenFile = (name: string, token: string): string => {
    const file = join(files, name)
    writeFileSync(file, token, { mode: 0o600 })
    return file
  }

  /** Applies the five-job example in a namespace of its own and waits until it is done. */
  const runExample = async (t: Test, name: string): Promise<void> => {
    const ns = await namespace(name)
    await apply(kubectl, stringify(jobFlowExample(cluster)), ns)
    const flow = await waitFor(
      `JobFlow ${ns}/jobflow-example to finish`,
      async () => {
        const current = await getJson(['get', 'jobflow', 'jobflow-example', '-n', ns])
        return ['Succeeded', 'Failed', 'Invalid'].includes(current.status?.phase) ? current : undefined
      },
      180_000,
      1_000
    )
    t.equal(flow.status.phase, 'Succeeded', `the example succeeded (${String(flow.status.jobsSucceeded)})`)
    t.equal(flow.status.jobsSucceeded, '5/5')
    t.equal(flow.status.observedGeneration, flow.metadata.generation, 'Metacontroller wrote the status')
  }

  /** The webhooks of the CompositeControllers as the API server keeps them. */
  const storedWebhooks = async (): Promise<any[]> =>
    (await getJson(['get', 'compositecontrollers'])).items.flatMap((c: any) =>
      Object.values<any>(c.spec.hooks).map((h) => h.webhook)
    )

  let token = ''

  await t.test(
    'helm install makes every object of the chart, and the Deployment rolls out in a restricted namespace',
    async (t) => {
      // The namespace as charts/jobhooks/README.md has users make it.
      await ok(kubectl(['create', 'namespace', NAMESPACE]), 'kubectl create namespace')
      t.match(
        await dryRun('install', `controllers.hooksURL=${hooksUrl}`),
        `Warning: namespace ${NAMESPACE} does not enforce the restricted Pod Security Standard`,
        'the notes warn of a namespace left unlabelled'
      )
      await ok(
        kubectl([
          'label',
          'namespace',
          NAMESPACE,
          'pod-security.kubernetes.io/enforce=restricted',
          'pod-security.kubernetes.io/enforce-version=latest',
          'pod-security.kubernetes.io/warn=restricted',
          'pod-security.kubernetes.io/audit=restricted',
        ]),
        'kubectl label namespace'
      )
      const notes = await install('install', `controllers.hooksURL=${hooksUrl}`)
      t.notMatch(notes, /Warning: namespace/, 'the notes find the namespace labelled')

      const manifest = parseObjects(await helmOk(['get', 'manifest', RELEASE, '--namespace', NAMESPACE]))
      const kinds = manifest.map((o) => String(o.kind)).sort()
      t.same(
        [...new Set(kinds)],
        [
          'ClusterRole',
          'ClusterRoleBinding',
          'CompositeController',
          'CustomResourceDefinition',
          'Deployment',
          'NetworkPolicy',
          'PodDisruptionBudget',
          'Secret',
          'Service',
          'ServiceAccount',
        ]
      )
      for (const object of manifest) {
        const args = [
          'get',
          String(object.kind).toLowerCase(),
          object.metadata.name,
          ...(object.metadata.namespace !== undefined ? ['-n', object.metadata.namespace] : []),
        ]
        const stored = await getJson(args)
        t.equal(
          stored.metadata.annotations?.['meta.helm.sh/release-name'],
          RELEASE,
          `${String(object.kind)} ${String(object.metadata.name)} is the release's`
        )
        // A field the API server does not know is dropped without a word (an authorization block
        // lost so would mean calls without the token): what the chart sent must all be there.
        if (object.kind === 'CompositeController') {
          t.has(stored.spec, object.spec, `${String(object.metadata.name)}: stored as the chart made it`)
        }
      }
      const deployment = await getJson(['get', 'deployment', 'jobhooks', '-n', NAMESPACE])
      t.equal(
        deployment.status.readyReplicas,
        2,
        'two replicas ready (kwok plays the pods the restricted namespace admitted)'
      )
      const crds = (await getJson(['get', 'crd'])).items.filter((c: any) => c.spec.group === 'jobhooks.io')
      t.equal(crds.length, CRD_COUNT, `the ${CRD_COUNT} CRDs`)
      for (const crd of crds) {
        t.ok(
          crd.status.conditions.some((c: any) => c.type === 'Established' && c.status === 'True'),
          `${String(crd.metadata.name)} established`
        )
      }

      token = await tokenIn('jobhooks-hook-token')
      t.match(token, /^[A-Za-z0-9]{64}$/, 'the chart generated a 64-character token')
      for (const webhook of await storedWebhooks()) {
        t.same(webhook.authorization.secretRef, { name: 'jobhooks-hook-token', namespace: NAMESPACE, key: 'token' })
      }
      await startService({ AUTH_TOKEN_FILE: tokenFile('chart-token', token) })
    }
  )

  await t.test('the JobFlow example runs through the objects the chart installed', async (t) => {
    await runExample(t, 'helm-install')
  })

  await t.test(
    "helm upgrade keeps the token; with the chart's TLS settings Metacontroller calls over mutual TLS",
    async (t) => {
      const ca = authority('jobhooks e2e CA')
      const server = ca.issue('jobhooks', 'server')
      const client = ca.issue('metacontroller', 'client')
      const pem = {
        'tls.crt': server.cert,
        'tls.key': server.key,
        'ca.crt': ca.cert,
        'client.crt': client.cert,
        'client.key': client.key,
      }
      for (const [name, content] of Object.entries(pem)) writeFileSync(join(files, name), content, { mode: 0o600 })
      // The Secrets as cert-manager would write them (docs/security.md, "HTTPS and mutual TLS").
      await ok(
        kubectl([
          '-n',
          NAMESPACE,
          'create',
          'secret',
          'generic',
          'jobhooks-tls',
          ...['tls.crt', 'tls.key', 'ca.crt'].map((f) => `--from-file=${f}=${join(files, f)}`),
        ]),
        "the serving certificate's Secret"
      )
      await ok(
        kubectl([
          '-n',
          NAMESPACE,
          'create',
          'secret',
          'tls',
          'metacontroller-client-tls',
          `--cert=${join(files, 'client.crt')}`,
          `--key=${join(files, 'client.key')}`,
        ]),
        "the client certificate's Secret"
      )

      await install(
        'upgrade',
        `controllers.hooksURL=${hooksUrl.replace(/^http:/, 'https:')},tls.enabled=true,tls.mutual.enabled=true`
      )
      t.equal(await tokenIn('jobhooks-hook-token'), token, 'the upgrade kept the token')
      for (const webhook of await storedWebhooks()) {
        t.match(webhook, {
          url: /^https:\/\/127\.0\.0\.1:\d+\/hooks\//,
          caBundle: { secretRef: { name: 'jobhooks-tls', namespace: NAMESPACE, key: 'ca.crt' } },
          clientTLS: { secretRef: { name: 'metacontroller-client-tls', namespace: NAMESPACE } },
        })
      }
      const deployment = await getJson(['get', 'deployment', 'jobhooks', '-n', NAMESPACE])
      t.equal(deployment.status.updatedReplicas, 2, 'the Deployment rolled out with the TLS Secret mounted')

      // The service as the Deployment now runs it: HTTPS, a client certificate of the CA required.
      await killService()
      await startService({
        AUTH_TOKEN_FILE: tokenFile('chart-token', token),
        TLS_CERT_FILE: join(files, 'tls.crt'),
        TLS_KEY_FILE: join(files, 'tls.key'),
        TLS_CLIENT_CA_FILE: join(files, 'ca.crt'),
      })
      await runExample(t, 'helm-mtls')
    }
  )

  await t.test("token.existingSecret: the webhooks send the user's Secret, and the chart's own is gone", async (t) => {
    const own = randomBytes(32).toString('hex')
    t.match(
      await dryRun('upgrade', `controllers.hooksURL=${hooksUrl},token.existingSecret=my-hook-token`),
      `Warning: Secret ${NAMESPACE}/my-hook-token (token.existingSecret) does not exist yet`,
      'the notes warn of a Secret not there yet'
    )
    await ok(
      kubectl(['-n', NAMESPACE, 'create', 'secret', 'generic', 'my-hook-token', `--from-literal=token=${own}`]),
      "the user's token Secret"
    )
    await install('upgrade', `controllers.hooksURL=${hooksUrl},token.existingSecret=my-hook-token`)
    t.equal(
      (await kubectl(['get', 'secret', 'jobhooks-hook-token', '-n', NAMESPACE])).code,
      1,
      'the generated Secret was removed'
    )
    for (const webhook of await storedWebhooks()) {
      t.same(webhook.authorization.secretRef, { name: 'my-hook-token', namespace: NAMESPACE, key: 'token' })
    }
    await killService()
    await startService({ AUTH_TOKEN_FILE: tokenFile('own-token', own) })
    await runExample(t, 'helm-own-token')
  })

  await t.test('helm uninstall removes the install but keeps the CRDs, and with them every JobFlow', async (t) => {
    const before = (await getJson(['get', 'jobflows', '-A'])).items.length
    await helmOk(['uninstall', RELEASE, '--namespace', NAMESPACE, '--wait', '--timeout', '2m'])
    t.same((await getJson(['get', 'compositecontrollers'])).items, [], 'no CompositeController')
    t.equal((await kubectl(['get', 'deployment', 'jobhooks', '-n', NAMESPACE])).code, 1, 'no Deployment')
    t.equal((await kubectl(['get', 'clusterrole', 'jobhooks-effects'])).code, 1, 'no ClusterRole')
    t.equal(
      (await getJson(['get', 'crd'])).items.filter((c: any) => c.spec.group === 'jobhooks.io').length,
      CRD_COUNT,
      `the ${CRD_COUNT} CRDs stay`
    )
    t.equal((await getJson(['get', 'jobflows', '-A'])).items.length, before, `the ${before} JobFlows stay`)
    // The CRDs no longer belong to a release; a new install takes them over.
    await install('install', `controllers.hooksURL=${hooksUrl}`)
    t.pass('installed again over the kept CRDs')
  })
}
