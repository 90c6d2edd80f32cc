// The trust boundary against the real thing: the service as the manifests run it (a token
// Secret, Metacontroller sending it), called by someone else. A call without the token is refused
// and changes no Pod; a call with the token about an EphemeralJob the API server does not have,
// selecting a real Pod, injects nothing, because the executor confirms the parent first.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { stringify } from 'yaml'
import { apply, waitFor } from './cluster.js'
import { startScenarios } from './scenario.js'

const { cluster, namespace, getJson } = await startScenarios(t)
const hooksUrl = cluster.hooksUrl
const token = cluster.token

/** A sync request for an EphemeralJob `name` that selects `pod`, as Metacontroller would build it. */
function forgedSync (ns: string, name: string, pod: any): unknown {
  return {
    controller: {
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: 'CompositeController',
      metadata: { name: 'ephemeraljob-controller' },
    },
    parent: {
      apiVersion: 'jobhooks.io/v1alpha1',
      kind: 'EphemeralJob',
      metadata: { name, namespace: ns, uid: randomUUID(), generation: 1, creationTimestamp: new Date().toISOString() },
      spec: {
        selector: { matchLabels: { app: 'target' } },
        replicas: 1,
        parallelism: 1,
        template: {
          ephemeralContainers: [
            {
              name: 'intruder',
              image: 'busybox:1.36',
              imagePullPolicy: 'IfNotPresent',
              terminationMessagePolicy: 'File',
              command: ['sh', '-c', 'cat /etc/shadow'],
              targetContainerName: 'app',
            },
          ],
        },
      },
    },
    children: {},
    related: { 'Pod.v1': { [`${ns}/${String(pod.metadata.name)}`]: pod } },
    finalizing: false,
  }
}

async function post (
  path: string,
  body: unknown,
  headers: Record<string, string> = {}
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${String(hooksUrl)}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
  const text = await response.text()
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = text
  }
  return { status: response.status, body: parsed }
}

t.test(
  'calls from outside Metacontroller',
  {
    skip:
      hooksUrl === undefined || token === undefined
        ? "the service runs in the user's cluster: its address and token are not the tier's"
        : false,
  },
  async (t) => {
    const ns = await namespace('trust')
    await apply(
      cluster.kubectl,
      stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'target', labels: { app: 'target' } },
        spec: {
          ...(cluster.nodeName !== undefined ? { nodeName: cluster.nodeName } : {}),
          containers: [{ name: 'app', image: 'busybox:1.36', command: ['sleep', '3600'] }],
        },
      }),
      ns
    )
    const pod = await waitFor('the target Pod to run', async () => {
      const current = await getJson(['get', 'pod', 'target', '-n', ns])
      return current.status?.phase === 'Running' ? current : undefined
    })
    const request = forgedSync(ns, 'not-there', pod)

    await t.test('without the token: 401, and the Pod is unchanged', async (t) => {
      const attempts: Array<Record<string, string>> = [
        {},
        { authorization: 'Bearer not-the-token-0123456789abcdef0123456789' },
        { authorization: `Basic ${Buffer.from(`x:${String(token)}`).toString('base64')}` },
      ]
      for (const headers of attempts) {
        const answer = await post('/hooks/ephemeraljob/sync', request, headers)
        t.equal(
          answer.status,
          401,
          'refused: ' +
            (Object.keys(headers).length === 0 ? 'no header' : (String(Object.values(headers)[0]).split(' ')[0] ?? ''))
        )
        t.match(answer.body, { statusCode: 401, error: 'Unauthorized' })
      }
      const byQuery = await post(`/hooks/ephemeraljob/sync?token=${String(token)}`, request)
      t.equal(byQuery.status, 401, 'the token in a query string is no token')
      const after = await getJson(['get', 'pod', 'target', '-n', ns])
      t.same(after.spec.ephemeralContainers ?? [], [], 'no ephemeral container')
      t.equal(after.metadata.resourceVersion, pod.metadata.resourceVersion, 'the Pod was not written at all')
    })

    await t.test(
      'with the token, about an EphemeralJob the API server does not have: nothing is injected',
      async (t) => {
        const answer = await post('/hooks/ephemeraljob/sync', request, { authorization: `Bearer ${String(token)}` })
        t.equal(answer.status, 200, 'the hook answers')
        t.match(
          answer.body.status.conditions.find((c: any) => c.type === 'EffectsApplied'),
          {
            status: 'False',
            reason: 'EffectRefused',
            message: new RegExp(`the API server has no EphemeralJob ${ns}/not-there: the parent is unknown`),
          },
          `the injection is refused (conditions: ${JSON.stringify(answer.body.status.conditions)})`
        )
        // Give a wrongly applied patch time to show.
        await new Promise((resolve) => setTimeout(resolve, 2_000))
        const after = await getJson(['get', 'pod', 'target', '-n', ns])
        t.same(after.spec.ephemeralContainers ?? [], [], 'no ephemeral container')
        t.equal(after.metadata.resourceVersion, pod.metadata.resourceVersion, 'the Pod was not written at all')
        const metrics = await (await fetch(`${String(hooksUrl)}/metrics`)).text()
        t.match(
          metrics,
          /jobhooks_effects_total\{type="InjectEphemeralContainers",result="refused"\} [1-9]/,
          'counted as refused'
        )
        t.match(
          metrics,
          /jobhooks_hook_refusals_total\{reason="missing_token"\} [1-9]/,
          'the calls without the token were counted'
        )
      }
    )
  }
)
