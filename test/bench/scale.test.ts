// bench/scale.ts runs the service with the Deployment's settings, read from the manifests, and
// judges its goals from what it measured.
import t from 'tap'
import { deploymentSettings, scaleReport, type ScaleResult } from '../../bench/scale.js'

const MIB = 1024 * 1024

t.test(
  "the service process gets the image's and the Deployment's Node options and is judged against its memory limit",
  async (t) => {
    const deployment = deploymentSettings()
    t.ok(deployment.nodeOptions.includes('--max-semi-space-size=64'), "the image's command")
    t.ok(
      deployment.nodeOptions.some((o) => /^--max-old-space-size=\d+$/.test(o)),
      "the Deployment's NODE_OPTIONS"
    )
    t.equal(deployment.memoryLimit, 1024 * MIB)
  }
)

t.test(
  'the goals: 15,000 Nodes under 2 s and 512 MiB; ' +
    'a burst answered 200 within 10 s or 429, a fifth served, under the limit',
  async (t) => {
    const deployment = { nodeOptions: ['--max-old-space-size=384'], memoryLimit: 1024 * MIB }
    const result = (largest: Partial<ScaleResult['largest']>, burst: Partial<ScaleResult['burst']>): ScaleResult => ({
      deployment,
      largest: { nodes: 15000, bodyBytes: 200 * MIB, p50: 1000, p99: 1500, peak: 400 * MIB, ...largest },
      burst: {
        nodes: 5000,
        calls: 25,
        bodyBytes: 69 * MIB,
        served: 6,
        shed: 19,
        other: 0,
        slowestServedMs: 2500,
        slowestShedMs: 90,
        peak: 600 * MIB,
        ...burst,
      },
    })
    const passes = scaleReport(result({}, {}))
    t.notMatch(passes, /FAIL/)
    t.equal(passes.match(/PASS/g)?.length, 5)
    const fails = scaleReport(
      result(
        { p99: 2100, peak: 600 * MIB },
        { served: 4, shed: 20, other: 1, slowestServedMs: 11000, peak: 1100 * MIB }
      )
    )
    t.equal(fails.match(/FAIL/g)?.length, 5, fails)
  }
)
