// DaemonJob against the real thing: kwok Nodes (some excluded, cordoned or tainted), the API
// server with our CRD and its rules, the scheduler placing each Job's pod on its node through
// the required node affinity, and Metacontroller calling our service. Everything asserted is
// read back from the API server.
//
// Metacontroller v1.5.20 (the only one the module proxy here serves) predates hook versions and
// calls the hooks with v1 semantics: it lists a related resource in the namespace of a namespaced
// parent, so a cluster-scoped resource such as Nodes comes back as an empty group. Against that
// version the scenario checks what it can (the hook says so in the status and creates nothing)
// and reports it; against a Metacontroller with v2 hooks it checks the whole behaviour.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseAllDocuments, stringify } from 'yaml'
import { addKwokNode, apply, ROOT, waitFor } from './cluster.js'
import { startScenarios } from './scenario.js'

const { cluster, namespace, getJson, track } = await startScenarios(t)
const ownCluster = cluster.nodeName !== undefined
const v1Only = /v1\.5\.|v0\./.test(cluster.metacontroller)

/** A kwok Node with the taints and cordon given, deleted at the end. */
async function addNode (name: string, spec: Record<string, unknown> = {}): Promise<void> {
  track('node', name)
  await addKwokNode(cluster.kubectl, name, spec)
}

/** The example of manifests/examples/daemonjob.yaml with short Jobs and the given exclude list. */
function example (excludeNodeList: string, mutate: (spec: any) => void = () => {}): any {
  const doc = parseAllDocuments(readFileSync(join(ROOT, 'manifests', 'examples', 'daemonjob.yaml'), 'utf8'))
    .map(d => d.toJS()).find(d => d?.kind === 'DaemonJob')
  doc.spec.excludeNodeList = excludeNodeList
  // kwok finishes Job pods after 3 s; on a real cluster they sleep 3 s.
  doc.spec.template.spec.containers[0].command = ['sh', '-c', 'sleep 3']
  mutate(doc.spec)
  return doc
}

async function jobsIn (ns: string): Promise<any[]> {
  return (await getJson(['get', 'jobs', '-n', ns])).items
}

/** Finished, invalid, or waiting because no Node arrived: whatever comes first. */
async function settled (ns: string, name: string): Promise<any> {
  return await waitFor(`DaemonJob ${ns}/${name} to finish or to say why it waits`, async () => {
    const dj = await getJson(['get', 'daemonjob', name, '-n', ns])
    const phase = dj.status?.phase
    if (['Succeeded', 'Failed', 'Invalid'].includes(phase)) return dj
    if (phase === 'Pending' && /sent no Nodes/.test(dj.status?.message ?? '')) return dj
    return undefined
  }, 180_000, 1_000)
}

t.test('one Job per eligible node; excluded, cordoned and tainted nodes get none; Succeeded', async t => {
  // The tier's node kwok-node-0 is eligible; of these, only kwok-dj-1 is.
  if (ownCluster) {
    await addNode('kwok-dj-1')
    await addNode('kwok-dj-2')
    await addNode('kwok-dj-3', { taints: [{ key: 'e2e/dedicated', value: 'gpu', effect: 'NoSchedule' }] })
    await addNode('kwok-dj-4', { unschedulable: true })
  }
  const all = (await getJson(['get', 'nodes'])).items.map((n: any) => n.metadata.name as string).sort()
  const excluded = ownCluster ? 'kwok-dj-2 , no-such-node' : `${String(all[0])} , no-such-node`
  const ns = await namespace('daemonjob')
  await apply(cluster.kubectl, stringify(example(excluded)), ns)
  const dj = await settled(ns, 'daemonjob-example')
  t.equal(dj.status.observedGeneration, dj.metadata.generation, 'Metacontroller wrote the status')
  t.match(dj.status.conditions, [{ type: 'Valid', status: 'True' }])
  const table = await cluster.kubectl(['get', 'daemonjobs', '-n', ns])
  t.match(table.stdout, /^NAME\s+STATUS\s+DESIRED\s+SUCCEEDED\s+FAILED\s+AGE\s*\n/, 'kubectl get daemonjobs shows the columns')

  if (dj.status.phase === 'Pending') {
    // What this Metacontroller sent: the Node group, empty (the hook's message says which case).
    t.ok(v1Only, `only a Metacontroller without v2 hooks sends no Nodes (this is ${cluster.metacontroller}): ${String(dj.status.message)}`)
    t.match(dj.status, { desired: 0, active: 0, message: /related Node\.v1 is empty/ })
    await new Promise(resolve => setTimeout(resolve, 5_000))
    t.same(await jobsIn(ns), [], 'no Job is created without Nodes')
    t.comment(`FINDING: ${cluster.metacontroller} calls the DaemonJob hooks without Nodes (related Node.v1 is empty) although ${all.length} nodes exist; status.message: ${String(dj.status.message)}`)
    return
  }

  t.equal(dj.status.phase, 'Succeeded')
  const jobs = await jobsIn(ns)
  const byNode = new Map(jobs.map((j: any) => [j.metadata.labels['jobhooks.io/node'], j]))
  const expected = ownCluster ? ['kwok-dj-1', String(cluster.nodeName)].sort() : dj.status.succeededNodes
  t.same([...byNode.keys()].sort(), expected, 'Jobs exist only for the eligible nodes')
  t.notOk(byNode.has(ownCluster ? 'kwok-dj-2' : all[0]), 'the excluded node has none')
  t.match(dj.status, { desired: expected.length, active: 0, succeeded: expected.length, failed: 0, failedNodes: [] })
  t.same(dj.status.succeededNodes, expected)
  for (const [node, job] of byNode) {
    t.equal(job.metadata.name, `daemonjob-example-${String(node)}`)
    t.match(job.status.conditions, [{ type: 'SuccessCriteriaMet', status: 'True' }], `${String(node)}'s Job really ran`)
    const pods = (await getJson(['get', 'pods', '-n', ns, '-l', `job-name=${String(job.metadata.name)}`])).items
    t.ok(pods.length > 0 && pods.every((p: any) => p.spec.nodeName === node), `the scheduler put ${String(job.metadata.name)}'s pod on ${String(node)}`)
  }

  if (ownCluster) {
    await addNode('kwok-dj-5')
    await new Promise(resolve => setTimeout(resolve, 5_000))
    t.notOk((await jobsIn(ns)).some((j: any) => j.metadata.labels['jobhooks.io/node'] === 'kwok-dj-5'), 'a node added after the end gets no Job')
    t.equal((await getJson(['get', 'daemonjob', 'daemonjob-example', '-n', ns])).status.phase, 'Succeeded')
  }
})

t.test('the CRD refuses invalid DaemonJobs at kubectl apply time', async t => {
  const ns = await namespace('dj-rules')
  const cases: Array<[string, (spec: any) => void, RegExp]> = [
    ['restartPolicy Always', spec => { spec.template.spec.restartPolicy = 'Always' }, /Unsupported value: "Always"/],
    ['excludeNodeList as a list', spec => { spec.excludeNodeList = ['a', 'b'] }, /excludeNodeList: Invalid value: "array"/],
    ['a template without containers', spec => { spec.template.spec.containers = [] }, /containers/],
    ['a script container that does not exist', spec => { spec.script = { name: 'retry.sh', container: 'sidecar' } }, /script.container must name a container/]
  ]
  for (const [what, mutate, message] of cases) {
    const result = await cluster.kubectl(['apply', '-n', ns, '-f', '-'], stringify(example('', mutate)))
    t.not(result.code, 0, `${what} is refused`)
    t.match(result.stderr, message, what)
  }
  const none = await cluster.kubectl(['get', 'daemonjobs', '-n', ns, '-o', 'name'])
  t.equal(none.stdout.trim(), '', 'none of them was stored')
})
