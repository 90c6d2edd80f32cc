// The ui page's heaviest view: a JobFlow of 1,000 items (one step over them, then a merge), played
// to the end in the simulator, shown by `kubectl jobhooks ui` in headless Chromium. The figure is
// the time from the page asking for the view (its hash changed) to the view drawn and painted:
// the plugin's read of the object, its fragment (graph, attempts, Gantt chart), the server-sent
// event, the browser's parsing and layout. The API server is a small one in this process that
// serves the JobFlow and holds every watch open. Goal (issue 42): under 1 s.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import type { KubeObject } from '../src/k8s/types.js'
import { Simulator } from '../src/simulator/simulator.js'
import { jobflowController, JOBHOOKS_API_VERSION } from '../src/simulator/controllers.js'
import { connect } from '../src/cli/kubectl/client.js'
import { parseOptions } from '../src/cli/kubectl/options.js'
import { startUi } from '../src/cli/ui/server.js'
import { CHROMIUM_FLAGS, chromiumBinary, NO_CHROMIUM } from './chromium.js'

export const UI_ITEMS = 1_000
/** Views timed after the first (which warms the browser and the plugin); the median is the figure. */
export const UI_RENDERS = 9
export const UI_RENDER_GOAL_MS = 1_000

export interface UiRender {
  skipped?: string
  phase: string
  fragmentChars: number
  firstMs: number
  medianMs: number
}

/** The JobFlow at its end: its status holds 1,001 records (grouped as the hook writes them). */
async function playedFlow (): Promise<KubeObject> {
  const sim = new Simulator({
    controllers: [jobflowController('v2')], coalesce: true, transport: 'direct', checkReads: false
  })
  const containers = [{ name: 'main', image: 'busybox:1.36', command: ['sh', '-c', 'work'] }]
  const jobTemplate = { template: { spec: { containers } } }
  const items = Array.from({ length: UI_ITEMS }, (_, i) => `shard-${i}`)
  sim.apply({
    apiVersion: JOBHOOKS_API_VERSION,
    kind: 'JobFlow',
    metadata: { name: 'items', namespace: 'bench' },
    spec: {
      flows: [{ name: 'process', jobTemplate, forEach: items, parallelism: 100 },
        { name: 'merge', jobTemplate, dependencies: ['process'] }]
    }
  })
  try {
    await sim.runUntil(() => sim.isQuiet(), { maxSteps: 100_000 })
    const flow = sim.get({ apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow', namespace: 'bench', name: 'items' })
    if (flow === undefined) throw new Error('the simulator lost the JobFlow')
    return JSON.parse(JSON.stringify(flow)) as KubeObject
  } finally {
    await sim.close()
  }
}

/** An API server of one JobFlow: its object, empty lists of the rest, and watches held open. */
async function apiServer (flow: KubeObject): Promise<Server> {
  const server = createServer((request, res) => {
    const url = new URL(request.url ?? '/', 'http://api')
    if (url.searchParams.get('watch') === '1') {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.flushHeaders()
      return
    }
    res.writeHead(200, { 'content-type': 'application/json' })
    if (url.pathname.endsWith('/jobflows/items')) res.end(JSON.stringify(flow))
    else res.end(JSON.stringify({ kind: 'List', metadata: { resourceVersion: '1' }, items: [] }))
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return server
}

function kubeconfig (dir: string, server: Server): string {
  const { port } = server.address() as AddressInfo
  const file = join(dir, 'kubeconfig')
  writeFileSync(file, JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'bench', cluster: { server: `http://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'bench', user: { token: 'bench' } }],
    contexts: [{ name: 'bench', context: { cluster: 'bench', user: 'bench', namespace: 'bench' } }],
    'current-context': 'bench'
  }))
  return file
}

/**
 * In the page (a script, as the project compiles without the DOM's types): ask for the view, and
 * wait until it is drawn and painted; the milliseconds it took.
 */
const TIME_VIEW = `(async () => {
  const started = performance.now()
  location.hash = '#/JobFlow/bench/items'
  await new Promise(resolve => {
    const drawn = () => document.querySelector('main svg.gantt') !== null ? resolve() : requestAnimationFrame(drawn)
    drawn()
  })
  await new Promise(resolve => requestAnimationFrame(() => requestAnimationFrame(resolve)))
  return performance.now() - started
})()`

export async function benchUiRender (): Promise<UiRender> {
  const binary = chromiumBinary()
  if (binary === undefined) return { skipped: NO_CHROMIUM, phase: '-', fragmentChars: 0, firstMs: 0, medianMs: 0 }
  const flow = await playedFlow()
  const api = await apiServer(flow)
  const dir = mkdtempSync(join(tmpdir(), 'jobhooks-bench-ui-'))
  const options = parseOptions(['ui', '--kubeconfig', kubeconfig(dir, api)])
  const client = await connect({ kubeconfig: options.kubeconfig as string, timeoutMs: 30_000 })
  const io = { out: () => {}, err: () => {}, tty: false, now: () => new Date() }
  const ui = await startUi({ io, options, client, namespace: 'bench' }, 'bench')
  const browser = await chromium.launch({ executablePath: binary, args: CHROMIUM_FLAGS })
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    await page.goto(ui.url)
    const times: number[] = []
    for (let i = 0; i <= UI_RENDERS; i++) {
      await page.evaluate("location.hash = '#/'")
      await page.locator('table[data-kind="JobFlow"]').waitFor()
      times.push(await page.evaluate<number>(TIME_VIEW))
    }
    const fragmentChars = await page.evaluate<number>("document.querySelector('main').innerHTML.length")
    const phase = String((flow.status as Record<string, unknown> | undefined)?.phase)
    const rest = times.slice(1).sort((a, b) => a - b)
    return { phase, fragmentChars, firstMs: times[0] as number, medianMs: rest[Math.floor(rest.length / 2)] as number }
  } finally {
    await browser.close()
    await ui.close()
    api.closeAllConnections()
    api.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

export function uiRenderReport (r: UiRender): string {
  if (r.skipped !== undefined) return `Skipped: ${r.skipped}`
  const ok = r.medianMs < UI_RENDER_GOAL_MS
  return [
    '| view | JobFlow phase | fragment (characters) | first ms | median ms |',
    '| --- | --- | ---: | ---: | ---: |',
    `| a JobFlow of ${UI_ITEMS.toLocaleString('en')} items | ${r.phase} | ${r.fragmentChars.toLocaleString('en')} | ` +
      `${r.firstMs.toFixed(0)} | ${r.medianMs.toFixed(0)} |`,
    '',
    'Goals:',
    `- ${ok ? 'PASS' : 'FAIL'}: the view drawn and painted in ${r.medianMs.toFixed(0)} ms (goal < ` +
      `${UI_RENDER_GOAL_MS} ms, the median of ${UI_RENDERS} after the first)`
  ].join('\n')
}
