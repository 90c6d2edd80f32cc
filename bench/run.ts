// `npm run bench`: POST /hooks/jobflow/sync on JobFlows of 10, 100 and 1,000 Jobs, against an
// echo route that only parses the same body and serialises it back, in the same process.
//
// The hook app is built by buildApp; since it is ready (sealed) when built, the echo route lives
// on a second fastify instance configured like it (same bodyLimit, JSON parser, logging; it keeps the
// objects' managedFields, which the hook routes skip unparsed, since it must give the body back). The
// load comes from autocannon in a worker thread, so that writing the requests and reading the
// answers does not run on the servers' event loop.
//
// Each route of each size is measured for about BENCH_DURATION seconds in total, split into
// BENCH_ROUNDS slices; the slices of all sizes and both routes are interleaved (hook before echo
// in one round, echo before hook in the next), so that a neighbour loading the machine for a
// while hits every case about equally and the ratios stay fair. A slice sends a fixed number of
// requests (the warm-up's rate times the slice length) and waits for every answer, so no work
// the server did is left uncounted when a slice ends: with 7 MB bodies and four connections a
// timed slice would drop up to four requests' worth of server time.
//
// Environment: BENCH_DURATION (seconds per route and size, default 5), BENCH_ROUNDS (default 3),
// BENCH_CONNECTIONS (default 4), BENCH_SIZES (default "10,100,1000"), BENCH_CLIENT=inline to
// run autocannon on the main thread, BENCH_BREAKDOWN=0 to skip the in-process breakdown.
// BENCH_KIND_SIZES and BENCH_KINDS choose what bench/kinds.ts times of the other kinds;
// BENCH_SCALE=0 skips the largest cluster and the burst (bench/scale.ts). BENCH_PARENTS=0 skips
// the memo's hit rate over 50 parents of each kind synced in turn (bench/parents.ts).
// BENCH_FLOW_SIZE=0 skips the JobFlows of 10,000 items and of 2,000 steps (bench/jobflow-size.ts).
// BENCH_SHED=0 skips the burst of 20 first syncs of a 10,000-item JobFlow (bench/shed.ts).
// BENCH_PLUGIN=0 skips the single-file plugin's cold start (bench/plugin-start.ts).
// BENCH_UI=0 skips the ui page's view of a 1,000-item JobFlow in headless Chromium (bench/ui-render.ts).
//
// This module is the driver: bench/jobflow-echo.ts times the JobFlow part, bench/load.ts drives the
// load, bench/settings.ts reads the environment.
import { benchJobFlow } from './jobflow-echo.js'
import { benchKinds, CASES, deploymentMemoLimit, kindGoals, kindTable, type KindCase } from './kinds.js'
import { benchScale, BURST_CALLS, BURST_NODES, LARGEST_NODES, scaleReport } from './scale.js'
import { hitRateGoals, hitRateTable, memoHitRates, PARENTS } from './parents.js'
import { benchSizes, sizeGoals, sizeTable } from './jobflow-size.js'
import { benchShed, SHED_CALLS, SHED_ITEMS, shedReport } from './shed.js'
import { benchPluginStart, PLUGIN_STARTS, pluginStartReport } from './plugin-start.js'
import { benchUiRender, UI_ITEMS, uiRenderReport } from './ui-render.js'
import {
  duration, flowSize, kindNames, kindSizes, parents, pluginStart, scale, shed, sizes, uiRender
} from './settings.js'

async function main (): Promise<void> {
  if (sizes.length > 0) await benchJobFlow()
  if (kindSizes === undefined || kindSizes.length > 0) {
    const cases = kindCases()
    console.log(
      `\n# ${cases.map((c) => c.kind).join(', ')}: one sync at a time over HTTP, about ${duration} s per kind and ` +
        `size, the memo of built objects ${(deploymentMemoLimit() / 1024 / 1024).toFixed(0)} MiB (as large as the ` +
        'Deployment\'s process has it)\n'
    )
    const rows = await benchKinds(kindSizes, duration, cases)
    console.log(kindTable(rows))
    console.log('\nGoals:')
    console.log(kindGoals(rows).join('\n'))
  }
  if (parents) await benchParents()
  if (flowSize) {
    console.log('\n# JobFlows as large as the API server admits, played to the end in the simulator; their ' +
      'heaviest sync (every Job and its Pod observed) posted one at a time\n')
    const rows = await benchSizes()
    console.log(sizeTable(rows))
    console.log('\nGoals:')
    console.log(sizeGoals(rows).join('\n'))
  }
  if (scale) {
    console.log(
      `\n# The largest cluster and a burst: DaemonJob at ${LARGEST_NODES.toLocaleString('en')} Nodes, and ` +
        `${BURST_CALLS} syncs of ${BURST_NODES.toLocaleString('en')} Nodes at once, against the service as the ` +
        'Deployment runs it\n'
    )
    console.log(scaleReport(await benchScale()))
  }
  if (shed) {
    console.log(
      `\n# Shedding by cost: ${SHED_CALLS} first syncs of a JobFlow over ${SHED_ITEMS.toLocaleString('en')} items at ` +
        'once, small requests and large answers, against the service as the Deployment runs it\n'
    )
    console.log(shedReport(await benchShed()))
  }
  if (pluginStart) {
    console.log(`\n# The single-file plugin's cold start: --help as a new process, the median of ${PLUGIN_STARTS}\n`)
    console.log(pluginStartReport(benchPluginStart()))
  }
  if (uiRender) {
    console.log(`\n# kubectl jobhooks ui in headless Chromium: a JobFlow of ${UI_ITEMS.toLocaleString('en')} items, ` +
      'from asking for its view to the view painted\n')
    console.log(uiRenderReport(await benchUiRender()))
  }
}

/**
 * The memo's hit rate over PARENTS parents of each kind, of 100 objects each (what every fixture allows), synced in
 * turn twice.
 */
async function benchParents (): Promise<void> {
  const memo = deploymentMemoLimit()
  console.log(
    `\n# The memo over ${PARENTS} parents of each kind, synced in turn, then again (memo ` +
      `${(memo / 1024 / 1024).toFixed(0)} MiB)\n`
  )
  const rows = await memoHitRates(() => 100, PARENTS, kindCases(), memo)
  console.log(hitRateTable(rows))
  console.log('\nGoals:')
  console.log(hitRateGoals(rows).join('\n'))
}

/** The kinds BENCH_KINDS names (all of them when unset). */
function kindCases (): readonly KindCase[] {
  if (kindNames.length === 0) return CASES
  const unknown = kindNames.filter((name) => !CASES.some((c) => c.kind.toLowerCase() === name))
  if (unknown.length > 0) {
    throw new Error(`BENCH_KINDS: no kind ${unknown.join(', ')} (kinds: ${CASES.map((c) => c.kind).join(', ')})`)
  }
  return CASES.filter((c) => kindNames.includes(c.kind.toLowerCase()))
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error)
  process.exitCode = 1
})
