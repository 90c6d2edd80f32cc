// `npm run simulate -- <manifest> --output mermaid|html`: pictures of each simulated JobFlow. The
// text is parsed back: every step of the spec is a node, every dependency an edge, and the page
// refers to nothing outside itself.
import t from 'tap'
import { fileURLToPath } from 'node:url'
import { main } from '../../src/cli/simulate.js'
import { mermaidText } from '../../src/cli/picture-mermaid.js'
import { dagSvg, depths, escapeXml } from '../../src/cli/picture-svg.js'
import type { FlowShape } from '../../src/cli/flow-shape.js'
import { exampleObjects, stepDependencies } from '../helpers/example-promises.js'

const EXAMPLES = fileURLToPath(new URL('../../manifests/examples/', import.meta.url))

async function run (argv: string[]): Promise<{ code: number, text: string }> {
  const out: string[] = []
  const code = await main(argv, line => out.push(line), () => {})
  return { code, text: out.join('\n') }
}

/** The example's JobFlow spec as edges `dependency->step` and its step names. */
function specShape (file: string): { steps: string[], edges: string[], whens: string[] } {
  const flow = exampleObjects(file).find(o => o.kind === 'JobFlow')
  const flows: Array<{ name: string, dependencies?: string[], depends?: string, when?: string }> = flow.spec.flows
  return {
    steps: flows.map(f => f.name).sort(),
    edges: flows.flatMap(f => stepDependencies(f).map(d => `${d}->${f.name}`)).sort(),
    whens: flows.filter(f => f.when !== undefined).map(f => f.name).sort()
  }
}

/** A Mermaid flowchart read back: node id to label, and the edges by step name. */
function parseMermaid (text: string): { labels: Map<string, string>, edges: string[], dotted: string[] } {
  const labels = new Map<string, string>()
  for (const m of text.matchAll(/^\s+(\w+)\["([^"]*)"\]/gm)) labels.set(m[1] as string, m[2] as string)
  const name = (id: string): string => (labels.get(id) ?? id).split('<br/>')[0] as string
  const edges: string[] = []
  const dotted: string[] = []
  for (const m of text.matchAll(/^\s+(\w+) (-->|-\.->\|when\|) (\w+)$/gm)) {
    const edge = `${name(m[1] as string)}->${name(m[3] as string)}`
    edges.push(edge)
    if (m[2] !== '-->') dotted.push(name(m[3] as string))
  }
  return { labels, edges: edges.sort(), dotted: [...new Set(dotted)].sort() }
}

for (const file of ['jobflow.yaml', 'jobflow-when.yaml', 'jobflow-retry.yaml', 'jobflow-kueue.yaml']) {
  t.test(`--output mermaid draws ${file}: every step a node, every dependency an edge`, async t => {
    const { code, text } = await run([`${EXAMPLES}${file}`, '--kueue-quota', '2', '--output', 'mermaid'])
    t.equal(code, 0)
    t.match(text, /^flowchart LR\n/)
    const spec = specShape(file)
    const parsed = parseMermaid(text)
    t.same([...parsed.labels.values()].map(l => l.split('<br/>')[0]).sort(), spec.steps, 'the nodes')
    t.same(parsed.edges, spec.edges, 'the edges')
    t.same(parsed.dotted, spec.whens, 'the edges into a step with a when are marked')
  })

  t.test(`--output html draws ${file}: every step a node, every dependency an edge, nothing external`, async t => {
    const { code, text } = await run([`${EXAMPLES}${file}`, '--kueue-quota', '2', '--output', 'html'])
    t.equal(code, 0)
    t.match(text, /^<!DOCTYPE html>/)
    const spec = specShape(file)
    const dag = /<svg class="dag"[\s\S]*?<\/svg>/.exec(text)?.[0] ?? ''
    t.same([...dag.matchAll(/<g class="step" data-step="([^"]+)"/g)].map(m => m[1]).sort(), spec.steps)
    t.same([...dag.matchAll(/class="edge" data-from="([^"]+)" data-to="([^"]+)"/g)]
      .map(m => `${m[1]}->${m[2]}`).sort(), spec.edges)
    t.same([...dag.matchAll(/data-to="([^"]+)"[^>]*stroke-dasharray/g)].map(m => m[1]).filter((v, i, a) =>
      a.indexOf(v) === i).sort(), spec.whens, 'dashed into a step with a when')
    t.notMatch(text, /https?:|\/\/[a-z]|\bsrc=|<link|<script|@import/i, 'no external reference')
    t.match(text, /<svg class="gantt"/)
  })
}

t.test('the Gantt chart has a bar per Job attempt, from its start to its end', async t => {
  const { text } = await run([`${EXAMPLES}jobflow-retry.yaml`, '--output', 'html'])
  const gantt = /<svg class="gantt"[\s\S]*?<\/svg>/.exec(text)?.[0] ?? ''
  const jobs = [...gantt.matchAll(/data-job="([^"]+)"/g)].map(m => m[1])
  t.same(jobs, [
    'jobflow-retry-fetch', 'jobflow-retry-upload', 'jobflow-retry-upload-2', 'jobflow-retry-upload-3',
    'jobflow-retry-notify', 'jobflow-retry-publish'
  ])
  t.match(gantt, /jobflow-retry-upload-2: Failed, 16s to 17s/, 'its 1 s deadline ends each attempt')
  t.match(gantt, /jobflow-retry-notify: Succeeded, 28s to 38s/)
  t.match(gantt, /jobflow-retry-publish<\/text><text [^>]*>Skipped, not started/)
})

t.test('without a JobFlow there is nothing to draw, and the pictures say so', async t => {
  const mermaid = await run([`${EXAMPLES}daemonjob.yaml`, '--output', 'mermaid'])
  t.equal(mermaid.code, 0)
  t.match(mermaid.text, /^%% no JobFlow/)
  t.match((await run([`${EXAMPLES}daemonjob.yaml`, '--output', 'html'])).text, /No JobFlow was simulated/)
  t.equal((await run([`${EXAMPLES}jobflow.yaml`, '--output', 'png'])).code, 2, 'an unknown output is refused')
})

const SHAPE: FlowShape = {
  namespace: 'default',
  name: 'odd',
  phase: 'Failed',
  attempts: [],
  steps: [
    { name: 'a', dependencies: ['c'], phase: 'Pending' },
    { name: 'b', dependencies: ['a'], phase: 'Pending', when: 'flows.a.message == "<x>"' },
    { name: 'c', dependencies: ['b'], phase: 'Pending' },
    { name: 'd', dependencies: ['gone'], phase: 'Pending' }
  ]
}

t.test('an invalid spec still draws: a cycle ends, a missing dependency draws no edge, text is escaped', async t => {
  t.same([...depths(SHAPE.steps).keys()].sort(), ['a', 'b', 'c', 'd'], 'every step gets a layer')
  const svg = dagSvg(SHAPE)
  t.equal([...svg.matchAll(/class="edge"/g)].length, 3, 'the cycle a->b->c->a, not the missing one')
  t.match(svg, /when flows\.a\.message == &quot;&lt;x&gt;&quot;/)
  t.equal(escapeXml('<a href=\'x\'>&'), '&lt;a href=&#39;x&#39;&gt;&amp;')
  const mermaid = mermaidText([SHAPE])
  t.match(mermaid, /when flows\.a\.message == #quot;#lt;x#gt;#quot;"\]/)
  t.notMatch(mermaid, /gone/)
})
