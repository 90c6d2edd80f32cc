// The benchmark's settings, from the environment (bench/run.ts describes each variable).

export const duration = positiveNumber('BENCH_DURATION', 5)
export const rounds = Math.round(positiveNumber('BENCH_ROUNDS', 3))
export const connections = Math.round(positiveNumber('BENCH_CONNECTIONS', 4))
export const sizes = (process.env.BENCH_SIZES ?? '10,100,1000')
  .split(',')
  .filter((s) => s.trim() !== '')
  .map((s) => Number(s.trim()))
/**
 * Objects of the other kinds (Nodes, Pods, targets): unset, each kind's own two sizes (bench/kinds.ts);
 * a list, those sizes for every kind; BENCH_KIND_SIZES= (empty) skips them. BENCH_KINDS (a
 * comma-separated list of kinds, e.g. "DaemonJob,CollaSet") times only those; BENCH_SIZES= (empty)
 * skips the JobFlow part.
 */
export const kindSizes =
  process.env.BENCH_KIND_SIZES === undefined
    ? undefined
    : process.env.BENCH_KIND_SIZES.split(',')
      .filter((s) => s.trim() !== '')
      .map((s) => Number(s.trim()))
export const kindNames = (process.env.BENCH_KINDS ?? '')
  .split(',')
  .map((s) => s.trim().toLowerCase())
  .filter((s) => s !== '')
export const inlineClient = process.env.BENCH_CLIENT === 'inline'
/** BENCH_SCALE=0 skips the largest cluster and the burst (bench/scale.ts). */
export const scale = process.env.BENCH_SCALE !== '0'
export const breakdown = process.env.BENCH_BREAKDOWN !== '0'
export const parents = process.env.BENCH_PARENTS !== '0'
/** BENCH_FLOW_SIZE=0 skips the JobFlows of 10,000 items and 2,000 steps (bench/jobflow-size.ts). */
export const flowSize = process.env.BENCH_FLOW_SIZE !== '0'
/** BENCH_SHED=0 skips the burst of JobFlow first syncs shed by cost (bench/shed.ts). */
export const shed = process.env.BENCH_SHED !== '0'
/** BENCH_PLUGIN=0 skips the single-file plugin's cold start (bench/plugin-start.ts). */
export const pluginStart = process.env.BENCH_PLUGIN !== '0'
/** BENCH_UI=0 skips the ui page's view of a 1,000-item JobFlow in headless Chromium (bench/ui-render.ts). */
export const uiRender = process.env.BENCH_UI !== '0'
export const slice = duration / rounds
export const warmup = Math.max(0.5, Math.min(2, duration / 4))

function positiveNumber (name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value <= 0) {
    throw new Error(`${name} must be a positive number, not ${JSON.stringify(raw)}`)
  }
  return value
}
