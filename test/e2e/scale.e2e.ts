// A DaemonJob over a large cluster, against the real thing: thousands of kwok Nodes (kwok plays
// each one's kubelet), the scheduler placing a Job's pod on every one of them, Metacontroller
// v4.17.2 sending every Node and every Job to our service on each sync. The DaemonJob must reach
// Succeeded, and the service's memory, read from /proc while it runs, must stay flat: what it
// builds of each request is what the DaemonJob reads, not the request.
//
// E2E_SCALE_NODES sets the number of Nodes (default 2,000).
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseAllDocuments, stringify } from 'yaml'
import { apply, ROOT, waitFor } from './cluster.js'
import { startScenarios, waitForStatusOf } from './scenario.js'

const NODES = Number(process.env.E2E_SCALE_NODES ?? 2000)
const POOL = { key: 'e2e/pool', value: 'scale' }
const MIB = 1024 * 1024
/**
 * The Deployment's memory limit, past which Kubernetes kills the service. Under its Node options
 * V8 may let the heap grow towards its 576 MiB limit before it collects hard: in two runs the
 * service stayed between 340 and 410 MiB, in a third it climbed to 550 MiB by steps of about
 * 15 MiB, which the bench's repeated syncs (200 MiB, steady) do not show.
 */
const MEMORY_LIMIT = 1024 * MIB
/** How much more the second half of the run may hold than the first: the young generation (3 × 64 MiB). */
const GROWTH_MARGIN = 192 * MIB

const { cluster, namespace, getJson } = await startScenarios(t)

/** The service's resident memory now, and the most it has had, from /proc. */
function memory (pid: number): { resident: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kib = (field: string): number => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) * 1024
  return { resident: kib('VmRSS'), peak: kib('VmHWM') }
}

function kwokNode (name: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { 'kwok.x-k8s.io/node': 'fake' },
      labels: { 'kubernetes.io/hostname': name, type: 'kwok', [POOL.key]: POOL.value },
    },
    status: {
      allocatable: { cpu: '32', memory: '256Gi', pods: '110' },
      capacity: { cpu: '32', memory: '256Gi', pods: '110' },
    },
  }
}

t.test(
  `a DaemonJob over ${NODES.toLocaleString('en')} Nodes reaches Succeeded, and the service's memory stays flat`,
  {
    skip: cluster.servicePid === undefined ? "needs the tier's own control plane and service" : false,
    timeout: 1_500_000,
  },
  async (t) => {
    const pid = cluster.servicePid as number
    const names = Array.from({ length: NODES }, (_, i) => `kwok-scale-${String(i).padStart(5, '0')}`)
    // Not tracked for deletion: this runs only on the tier's own control plane, which goes whole.
    const created = await cluster.kubectl(
      ['create', '-f', '-'],
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: names.map(kwokNode) })
    )
    t.equal(created.code, 0, `${NODES} Nodes created${created.code !== 0 ? `: ${created.stderr.slice(0, 300)}` : ''}`)
    await waitFor(
      `${NODES} kwok Nodes Ready`,
      async () => {
        const ready = await cluster.kubectl([
          'get',
          'nodes',
          '-l',
          `${POOL.key}=${POOL.value}`,
          '-o',
          'jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}',
        ])
        return ready.stdout.split('\n').filter((s) => s === 'True').length === NODES ? true : undefined
      },
      600_000,
      2_000
    )

    const samples: Array<{ at: number; resident: number }> = []
    let sampling = true
    const start = Date.now()
    const sampler = (async () => {
      while (sampling) {
        samples.push({ at: Date.now() - start, resident: memory(pid).resident })
        await new Promise((resolve) => setTimeout(resolve, 1_000))
      }
    })()
    t.teardown(async () => {
      sampling = false
      await sampler
    })

    // The example, on the pool only (customize asks Metacontroller for the pool's Nodes), with
    // short Jobs: kwok finishes their pods after 3 s.
    const doc = parseAllDocuments(readFileSync(join(ROOT, 'manifests', 'examples', 'daemonjob.yaml'), 'utf8'))
      .map((d) => d.toJS())
      .find((d) => d?.kind === 'DaemonJob')
    doc.metadata.name = 'daemonjob-scale'
    doc.spec.excludeNodeList = ''
    doc.spec.template.spec.nodeSelector = { [POOL.key]: POOL.value }
    doc.spec.template.spec.containers[0].command = ['sh', '-c', 'sleep 3']
    const ns = await namespace('scale')
    await apply(cluster.kubectl, stringify(doc), ns)
    const dj = await waitForStatusOf(
      getJson,
      'daemonjob',
      ns,
      'daemonjob-scale',
      'finished',
      (status) => ['Succeeded', 'Failed', 'Invalid'].includes(status.phase),
      1_200_000
    )
    sampling = false
    await sampler

    t.match(
      dj.status,
      { phase: 'Succeeded', desired: NODES, succeeded: NODES, failed: 0, active: 0 },
      `every one of the ${NODES} Nodes ran its Job`
    )
    const jobs = (await getJson(['get', 'jobs', '-n', ns])).items as unknown[]
    t.equal(jobs.length, NODES, 'one Job per Node')

    const { peak } = memory(pid)
    const mib = (bytes: number): string => `${(bytes / MIB).toFixed(0)} MiB`
    const resident = samples.map((s) => s.resident)
    t.comment(
      `${samples.length} samples over ${Math.round((samples.at(-1)?.at ?? 0) / 1000)} s; resident memory (MiB): ` +
        `${resident.map((r) => (r / MIB).toFixed(0)).join(' ')}`
    )
    t.ok(
      peak < MEMORY_LIMIT,
      `the service's peak resident memory ${mib(peak)} stays under the Deployment's ${mib(MEMORY_LIMIT)}`
    )
    // Flat: the second half of the run holds no more than the first half did, give or take the
    // young generation (the service runs with --max-semi-space-size=64).
    const half = Math.floor(resident.length / 2)
    const first = Math.max(...resident.slice(0, half))
    const second = Math.max(...resident.slice(half))
    t.ok(resident.length >= 4, 'memory sampled through the run')
    t.ok(
      second <= first + GROWTH_MARGIN,
      `no growth: at most ${mib(first)} in the first half, ${mib(second)} in the second`
    )
  }
)
