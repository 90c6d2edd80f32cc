// Load shedding against the real Metacontroller v4.17.2: the service runs with an in-flight
// budget of one byte, so that any sync arriving while another is answered is shed with 429 and
// Retry-After; the test holds one call of its own open meanwhile, so that Metacontroller's are.
// Metacontroller must take that as "come back later" (pkg/hooks/webhook.go: it
// requeues the parent after Retry-After, with no error and no event), and every parent must
// still get where it goes.
import t from 'tap'
import { request as httpRequest } from 'node:http'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseAllDocuments, stringify } from 'yaml'
import { apply, ROOT, waitFor } from './cluster.js'
import { startScenarios } from './scenario.js'
import type { KubeObject } from '../../src/k8s/types.js'
import { valueAt } from '../helpers/objects.js'

const FLOWS = 12
const { cluster, namespace, getJson } = await startScenarios(t, { serviceEnv: { INFLIGHT_BUDGET_BYTES: '1' } })

/** The service's count of calls that ended `outcome`, over every kind and hook, from /metrics. */
async function calls (outcome: string): Promise<number> {
  const text = await (await fetch(`${cluster.hooksUrl as string}/metrics`)).text()
  return text
    .split('\n')
    .filter((l) => l.startsWith('jobhooks_hook_calls_total{') && l.includes(`outcome="${outcome}"`))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0)
}

t.test(
  `${FLOWS} JobFlows at once through a budget of one byte: calls are shed with 429, Metacontroller comes back, every ` +
    'flow Succeeds',
  {
    skip: cluster.hooksUrl === undefined ? "needs the tier's own service, with its budget set" : false,
  },
  async (t) => {
    const ns = await namespace('shedding')
    const doc = parseAllDocuments(readFileSync(join(ROOT, 'manifests', 'examples', 'jobflow.yaml'), 'utf8'))
      .map((d) => d.toJS())
      .find((d) => d?.kind === 'JobFlow')
    doc.spec.globalParams.nodeName = cluster.nodeName
    for (const flow of doc.spec.flows) flow.jobTemplate.template.spec.containers[0].command = ['sh', '-c', 'sleep 3']
    const flows = Array.from({ length: FLOWS }, (_, i) => ({
      ...doc,
      metadata: { ...doc.metadata, name: `flow-${i}` },
    }))

    // A call of our own, with the token, that sends the start of its body and then waits: it is in
    // flight, alone admitted, and every call that comes meanwhile is past the budget.
    const held = httpRequest(`${cluster.hooksUrl as string}/hooks/jobflow/sync`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${cluster.token as string}`,
        'content-type': 'application/json',
        'content-length': '1000',
      },
    })
    held.on('error', () => {})
    held.write('{"parent":')
    await waitFor(
      'the held call to be in flight',
      async () => {
        const text = await (await fetch(`${cluster.hooksUrl as string}/metrics`)).text()
        return /^jobhooks_inflight_request_bytes [1-9]/m.test(text) ? true : undefined
      },
      10_000,
      100
    )

    // One kubectl call: the JobFlows arrive together and Metacontroller's workers sync them side by side.
    await apply(cluster.kubectl, flows.map((f) => stringify(f)).join('---\n'), ns)
    await waitFor(
      "Metacontroller's calls to be shed",
      async () => ((await calls('shed')) >= FLOWS ? true : undefined),
      60_000,
      500
    )
    held.destroy()

    const done = await waitFor(
      `${FLOWS} JobFlows to finish`,
      async () => {
        const items: KubeObject[] = (await getJson(['get', 'jobflows', '-n', ns])).items
        return items.length === FLOWS &&
          items.every((f) => ['Succeeded', 'Failed', 'Invalid'].includes(String(valueAt(f, 'status', 'phase'))))
          ? items
          : undefined
      },
      600_000,
      2_000
    )
    t.same(
      done.map((f) => `${f.metadata.name}=${String(valueAt(f, 'status', 'phase'))}`).sort(),
      flows.map((f) => `${f.metadata.name}=Succeeded`).sort(),
      'every flow Succeeded'
    )

    const shed = await calls('shed')
    t.ok(shed >= FLOWS, `calls were shed (${shed})`)
    t.equal(await calls('error'), 0, 'no call failed')
    // What Metacontroller made of the 429s: a requeue, never a sync error or a Warning event.
    const events: Array<{ reason?: string; message?: string }> = (await getJson(['get', 'events', '-n', ns])).items
    t.same(
      events.filter((e) => e.reason === 'SyncError').map((e) => String(e.message)),
      [],
      'no SyncError event on any JobFlow'
    )
    const log = readFileSync(join(cluster.logDir as string, 'metacontroller.log'), 'utf8')
    t.ok(
      log.includes('Resync due to too many request for sync hooks'),
      'Metacontroller logged the requeue after Retry-After'
    )
    t.notMatch(log, new RegExp(`failed to sync JobFlow '${ns}/`), 'and never a failed sync of these JobFlows')
  }
)
