// The live preview against the real thing: `npm run simulate -- --kubeconfig <file> -f <manifest>`
// reads what Metacontroller would send the next sync of a running JobFlow and names the Jobs that
// sync creates; the sync that then runs creates exactly those. The preview writes nothing: the
// JobFlow and its children keep their resourceVersions across it.
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { stringify } from 'yaml'
import { ROOT, run, waitFor } from './cluster.js'
import { jobFlowExample, startFlowUntilFirstJobs, startScenarios, waitForStatusOf } from './scenario.js'

const { cluster, namespace, getJson } = await startScenarios(t)

/** `<kind>/<name>@<resourceVersion>` of the JobFlow, its Jobs and its ConfigMaps in `ns`. */
async function versions (ns: string): Promise<string[]> {
  const list = await getJson(['get', 'jobflows,jobs,configmaps', '-n', ns])
  return list.items
    .map((o: any) => `${String(o.kind)}/${String(o.metadata.name)}@${String(o.metadata.resourceVersion)}`)
    .sort()
}

/** A Job's condition of `type` is True. */
const hasCondition = (job: any, type: string): boolean =>
  (job.status?.conditions ?? []).some((c: any) => c.type === type && c.status === 'True')

const restartable = cluster.killService !== undefined && cluster.startService !== undefined
t.test(
  'a preview of a running JobFlow names exactly the Jobs its next sync creates, and writes nothing',
  { skip: restartable ? false : 'the service is not run by the tier' },
  async (t) => {
    const { killService, startService } = cluster as Required<typeof cluster>
    const ns = await namespace('preview')
    const flow = jobFlowExample(cluster)
    const manifest = join(t.testdir({}), 'jobflow.yaml')
    writeFileSync(manifest, stringify(flow))
    const watch = await startFlowUntilFirstJobs(t, { cluster, getJson }, ns, flow)
    // The first sync's status says Pending (its Jobs not yet observed); the sync that sees them
    // writes Running. Killed before that one is answered, the flow would stay Pending.
    await waitForStatusOf(getJson, 'jobflow', ns, flow.metadata.name, 'Running', (s) => s.phase === 'Running', 60_000)

    // Without the service no sync can run: the cluster holds still while job1 and job4 finish.
    await killService()
    const killed = Date.now()
    await waitFor(
      'job1 and job4 to be Complete',
      async () => {
        const jobs = (await getJson(['get', 'jobs', '-n', ns])).items
        return jobs.filter((j: any) => hasCondition(j, 'Complete')).length === 2 ? true : undefined
      },
      120_000,
      250
    )
    t.comment(`job1 and job4 Complete ${((Date.now() - killed) / 1000).toFixed(1)} s after the service was killed`)

    const before = await versions(ns)
    const simulate = async (...more: string[]) =>
      await run(process.execPath, [
        join(ROOT, 'dist', 'src', 'cli', 'simulate.js'),
        '--kubeconfig',
        cluster.kubeconfig,
        '-f',
        manifest,
        '-n',
        ns,
        ...more,
      ])
    const started = Date.now()
    const json = await simulate('--output', 'json')
    const took = (Date.now() - started) / 1000
    t.equal(json.code, 0, `the preview ran (${took.toFixed(1)} s): ${json.stderr}`)
    const text = await simulate()
    t.equal(text.code, 0, text.stderr)
    t.comment(
      'npm run simulate -- --kubeconfig <the tier\'s> -f jobflow.yaml -n ' +
        `${ns}\n${text.stdout.replaceAll(ns, '<ns>').trimEnd()}`
    )
    t.same(
      await versions(ns),
      before,
      'the JobFlow, its Jobs and ConfigMaps have the resourceVersions they had before the preview'
    )

    const [preview] = JSON.parse(json.stdout).objects
    t.match(preview, { kind: 'JobFlow', name: 'jobflow-example', namespace: ns, exists: true, phase: 'Running' })
    const named = preview.create.map((c: any) => `${String(c.kind)} ${String(c.name)}`)
    t.same(named, ['Job jobflow-example-job2'], 'the preview: the next sync creates job2 (job3 and job5 wait for it)')
    t.same(preview.delete, [], 'and deletes nothing')

    await startService()
    const back = Date.now()
    await waitFor(
      'the next sync to create a Job',
      async () => {
        const names = (await getJson(['get', 'jobs', '-n', ns])).items.map((j: any) => j.metadata.name)
        return names.length > 2 ? true : undefined
      },
      120_000,
      250
    )
    const after = (Date.now() - back) / 1000
    // What comes next needs job2 to finish first, which takes kwok 3 s at least.
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    const added = (await watch.stop()).filter((e) => e.type === 'ADDED').map((e) => e.fields[0])
    const created = added.filter((name) => name !== 'jobflow-example-job1' && name !== 'jobflow-example-job4')
    t.same(
      created.map((name) => `Job ${String(name)}`),
      named,
      `the next sync, ${after.toFixed(1)} s after the service was back, created exactly the Jobs the preview named`
    )
  }
)
