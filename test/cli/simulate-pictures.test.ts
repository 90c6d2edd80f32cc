// `npm run simulate -- <manifest> --output mermaid|html`: pictures of each simulated JobFlow. The
// text is parsed back: every step of the spec is a node, every dependency an edge, and the page
// refers to nothing outside itself.
import t from 'tap'
import { fileURLToPath } from 'node:url'
import { main } from '../../src/cli/simulate.js'
import { mermaidText } from '../../src/cli/picture-mermaid.js'
import { dagSvg, escapeXml } from '../../src/cli/picture-svg.js'
import { depths } from '../../src/cli/picture-layout.js'
import type { FlowShape } from '../../src/cli/flow-shape.js'
import { exampleObjects, stepDependencies } from '../helpers/example-promises.js'

const EXAMPLES = fileURLToPath(new URL('../../manifests/examples/', import.meta.url))

async function run (argv: string[]): Promise<{ code: number, text: string }> {
  const out: string[] = []
  const code = await main(argv, line => out.push(line), () => {})
  return { code, text: out.join('\n') }
}

interface WrittenStep {
  name: string
  dependencies?: string[]
  depends?: string
  when?: string
  flowTemplateRef?: { name: string }
}

/**
 * The steps a list of steps makes, by full name: a template group's (a JobFlowTemplate of the
 * example file) followed by its template's steps named `<group>.<step>`, their dependencies renamed so.
 */
function expanded (steps: WrittenStep[], file: string, group = ''): WrittenStep[] {
  const full = (name: string): string => group === '' ? name : `${group}.${name}`
  return steps.flatMap(step => {
    const own = { ...step, name: full(step.name), dependencies: stepDependencies(step).map(full) }
    const ref = step.flowTemplateRef
    if (ref === undefined) return [own]
    const template = exampleObjects(file).find(o => o.kind === 'JobFlowTemplate' && o.metadata.name === ref.name)
    return [own, ...expanded(template.spec.flows, file, own.name)]
  })
}

/**
 * The example's JobFlow spec (its flows, its template groups' steps, its exit steps) as edges
 * `dependency->step` and its step names.
 */
function specShape (file: string): { steps: string[], edges: string[], whens: string[] } {
  const flow = exampleObjects(file).find(o => o.kind === 'JobFlow')
  const flows: WrittenStep[] = expanded([...flow.spec.flows, ...flow.spec.onExit ?? []], file)
  return {
    steps: flows.map(f => f.name).sort(),
    edges: flows.flatMap(f => (f.dependencies ?? []).map(d => `${d}->${f.name}`)).sort(),
    whens: flows.filter(f => f.when !== undefined).map(f => f.name).sort()
  }
}

/**
 * A Mermaid flowchart read back: node id to label, each node's and template group's step name (a
 * group's steps' names under its own, as the subgraphs nest), and the edges by step name.
 */
function parseMermaid (text: string): {
  labels: Map<string, string>, steps: string[], edges: string[], dotted: string[]
} {
  const labels = new Map<string, string>()
  const names = new Map<string, string>()
  // For each subgraph the line is in, the group its steps' names begin with ('' for none).
  const groups: string[] = []
  const full = (name: string): string => [groups.at(-1) ?? '', name].filter(part => part !== '').join('.')
  for (const line of text.split('\n')) {
    const subgraph = /^\s+subgraph (\w+)\["([^"]*)"\]$/.exec(line)
    const node = /^\s+(\w+)(?:\["([^"]*)"\]|\{\{"([^"]*)"\}\}):::/.exec(line)
    if (subgraph !== null) {
      const group = / \(JobFlowTemplate [^)]+\)<br\/>/.test(subgraph[2] as string)
      const name = full((subgraph[2] as string).split(' (')[0] as string)
      if (group) names.set(subgraph[1] as string, name)
      groups.push(group ? name : groups.at(-1) ?? '')
    } else if (/^\s+end$/.test(line)) groups.pop()
    else if (node !== null) {
      const label = node[2] ?? node[3] as string
      labels.set(node[1] as string, label)
      names.set(node[1] as string, full(label.split('<br/>')[0] as string))
    }
  }
  const name = (id: string): string => names.get(id) ?? id
  const edges: string[] = []
  const dotted: string[] = []
  for (const m of text.matchAll(/^\s+(\w+) (-->|-\.->\|when\|) (\w+)$/gm)) {
    const edge = `${name(m[1] as string)}->${name(m[3] as string)}`
    edges.push(edge)
    if (m[2] !== '-->') dotted.push(name(m[3] as string))
  }
  return { labels, steps: [...names.values()].sort(), edges: edges.sort(), dotted: [...new Set(dotted)].sort() }
}

const PICTURED = ['jobflow.yaml', 'jobflow-when.yaml', 'jobflow-retry.yaml', 'jobflow-kueue.yaml',
  'jobflow-onexit.yaml', 'jobflow-approval.yaml', 'jobflow-template.yaml']
for (const file of PICTURED) {
  t.test(`--output mermaid draws ${file}: every step a node, every dependency an edge`, async t => {
    const { code, text } = await run([`${EXAMPLES}${file}`, '--kueue-quota', '2', '--output', 'mermaid'])
    t.equal(code, 0)
    t.match(text, /^flowchart LR\n/)
    const spec = specShape(file)
    const parsed = parseMermaid(text)
    t.same(parsed.steps, spec.steps, 'the nodes, and the subgraphs of template groups')
    t.same(parsed.edges, spec.edges, 'the edges')
    t.same(parsed.dotted, spec.whens, 'the edges into a step with a when are marked')
  })

  t.test(`--output html draws ${file}: every step a node, every dependency an edge, nothing external`, async t => {
    const { code, text } = await run([`${EXAMPLES}${file}`, '--kueue-quota', '2', '--output', 'html'])
    t.equal(code, 0)
    t.match(text, /^<!DOCTYPE html>/)
    const spec = specShape(file)
    const dag = /<svg class="dag"[\s\S]*?<\/svg>/.exec(text)?.[0] ?? ''
    t.same([...dag.matchAll(/<g class="(?:step|group)" data-(?:step|group)="([^"]+)"/g)].map(m => m[1]).sort(),
      spec.steps, 'a box per step, a frame per template group')
    t.same([...dag.matchAll(/class="edge" data-from="([^"]+)" data-to="([^"]+)"/g)]
      .map(m => `${m[1]}->${m[2]}`).sort(), spec.edges)
    t.same([...dag.matchAll(/data-to="([^"]+)"[^>]*stroke-dasharray/g)].map(m => m[1]).filter((v, i, a) =>
      a.indexOf(v) === i).sort(), spec.whens, 'dashed into a step with a when')
    t.notMatch(text, /https?:|\/\/[a-z]|\bsrc=|<link|<script|@import/i, 'no external reference')
    t.match(text, /<svg class="gantt"/)
  })
}

t.test('--output mermaid: the exit steps in a subgraph onExit, a dotted edge into it from the DAG\'s leaf', async t => {
  const { code, text } = await run([`${EXAMPLES}jobflow-onexit.yaml`, '--output', 'mermaid'])
  t.equal(code, 0)
  const { labels } = parseMermaid(text)
  const id = (name: string): string => [...labels].find(([, l]) => l.startsWith(`${name}<br/>`))?.[0] ?? name
  const group = /^ {4}subgraph (\w+)\["onExit"\]\n((?: {6}.*\n)*) {4}end$/m.exec(text)
  t.ok(group, 'a subgraph labelled onExit inside the flow\'s')
  const [, groupId = '', members = ''] = group ?? []
  t.same([...members.matchAll(/^ +(\w+)\[/gm)].map(m => labels.get(m[1] as string)?.split('<br/>')[0]),
    ['notify', 'cleanup'], 'holding the exit steps, and no step of flows')
  t.match(members, `${id('notify')}["notify<br/>Succeeded"]:::succeeded`, 'an exit step keeps its phase\'s colour')
  t.match(text, `\n    ${id('notify')} -.->|when| ${id('cleanup')}\n`, 'and its edges among exit steps')
  t.equal([...text.matchAll(new RegExp(`-\\.-> ${groupId}$`, 'gm'))].length, 1, 'one edge into the subgraph')
  t.match(text, `\n    ${id('publish')} -.-> ${groupId}\n  end\n`, 'dotted, from publish, the leaf of the DAG')
})

t.test('--output html: the exit steps framed as onExit after the DAG, a dashed connector into the frame', async t => {
  const { code, text } = await run([`${EXAMPLES}jobflow-onexit.yaml`, '--output', 'html'])
  t.equal(code, 0)
  const dag = /<svg class="dag"[\s\S]*?<\/svg>/.exec(text)?.[0] ?? ''
  const frame = /<g class="exit-group" data-group="onExit">.*?<rect x="(\d+)" y="(\d+)" width="(\d+)" height="(\d+)"/
    .exec(dag)?.slice(1).map(Number) ?? []
  t.equal(frame.length, 4, 'a frame')
  t.match(dag, /<g class="exit-group"[^]*?>onExit<\/text><\/g>/, 'labelled onExit')
  const [fx = 0, fy = 0, fw = 0, fh = 0] = frame
  const boxes = new Map([...dag.matchAll(/data-step="([^"]+)"[^]*?<rect x="(\d+)" y="(\d+)"/g)]
    .map(m => [m[1] as string, [Number(m[2]), Number(m[3])]]))
  const inside = (name: string): boolean => {
    const [x = 0, y = 0] = boxes.get(name) ?? []
    return x > fx && x + 170 < fx + fw && y > fy && y + 46 < fy + fh
  }
  t.same(['build', 'test', 'publish', 'notify', 'cleanup'].filter(inside), ['notify', 'cleanup'],
    'around the exit steps only')
  t.ok(['build', 'test', 'publish'].every(name => (boxes.get(name)?.[0] ?? 0) + 170 < fx), 'right of the DAG')
  t.match(dag, /data-step="cleanup" data-phase="Succeeded">[^]*?<rect [^>]*fill="#d4edda" stroke="#2e7d32"\/>/,
    'in its phase\'s colours')
  t.match(dag, /class="edge" data-from="notify" data-to="cleanup" [^>]*stroke-dasharray/, 'its edges kept')
  const connector = [...dag.matchAll(/<path class="exit-edge" data-from="([^"]+)" data-into="onExit" d="([^"]+)".*?>/g)]
  t.equal(connector.length, 1, 'one connector')
  t.equal(connector[0]?.[1], 'publish', 'from the leaf of the DAG')
  t.match(connector[0]?.[2], new RegExp(` ${fx},63$`), 'into the frame')
  t.match(connector[0]?.[0], 'stroke-dasharray="5 4" marker-end="url(#arrow)"', 'dashed, an arrow')
})

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

const EXITS: FlowShape = {
  namespace: 'default',
  name: 'exits',
  phase: 'Succeeded',
  attempts: [],
  steps: [
    { name: 'a', dependencies: [], phase: 'Succeeded' },
    { name: 'b', dependencies: ['a'], phase: 'Succeeded' },
    { name: 'c', dependencies: [], phase: 'Failed' },
    { name: 'x', dependencies: [], phase: 'Succeeded', exit: true },
    { name: 'y', dependencies: ['x'], phase: 'Skipped', exit: true }
  ]
}

t.test('several leaves: one edge into the exit steps, a curve from each, none through a box', async t => {
  const mermaid = mermaidText([SHAPE, EXITS])
  t.match(mermaid, '\n    subgraph f1x["onExit"]\n      f1s3["x<br/>Succeeded"]:::succeeded\n' +
    '      f1s4["y<br/>Skipped"]:::skipped\n    end\n', 'a subgraph of its own for each JobFlow')
  t.match(mermaid, '\n    f1s3 --> f1s4\n    f1s1 & f1s2 -.-> f1x\n  end\n', 'from b and c, the leaves')
  t.notMatch(mermaid, /f0x/, 'none for a JobFlow without exit steps')
  const svg = dagSvg(EXITS)
  const connector = /<path class="exit-edge" data-from="b c" data-into="onExit" d="([^"]+)"/.exec(svg)?.[1] ?? ''
  const curves = connector.split(/ (?=M)/)
  t.equal(curves.length, 2, 'a curve from each leaf, in one path')
  const frameX = /<g class="exit-group"[^]*?<rect x="(\d+)"/.exec(svg)?.[1]
  t.ok(curves.every(c => new RegExp(`[ L]${frameX},63$`).test(c)), 'each ending where the arrow is, at the frame')
  const boxes = [...svg.matchAll(/<g class="step"[^>]*>(?:<title>[^<]*<\/title>)?<rect x="(\d+)" y="(\d+)"/g)]
    .map(m => [Number(m[1]), Number(m[2])])
  const verticals = [...(curves[1] ?? '').matchAll(/Q(\d+),\d+ \1,/g)].map(m => Number(m[1]))
  t.ok(verticals.length > 0, 'c, left of the last column, goes round')
  t.ok(verticals.every(x => boxes.every(([bx = 0]) => x < bx || x > bx + 170)), 'in the gaps between columns')
})
