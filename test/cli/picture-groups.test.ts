// Template groups and approval steps in the pictures: a group is a Mermaid subgraph (nested for a
// nested template) holding its steps, its edges drawn to and from the subgraph, and in the SVG a
// labelled frame round its steps' boxes; an approval step is a hexagon in both, and the HTML
// legend says so. Read back from the text, for manifests/examples/jobflow-template.yaml as
// simulated and for a nested shape written here.
import t from 'tap'
import { fileURLToPath } from 'node:url'
import { main } from '../../src/cli/simulate.js'
import { mermaidText } from '../../src/cli/picture-mermaid.js'
import { dagSvg } from '../../src/cli/picture-svg.js'
import { htmlPage } from '../../src/cli/picture-html.js'
import type { FlowShape, FlowStep } from '../../src/cli/flow-shape.js'

const EXAMPLES = fileURLToPath(new URL('../../manifests/examples/', import.meta.url))

async function picture (output: 'mermaid' | 'html'): Promise<string> {
  const out: string[] = []
  const code = await main([`${EXAMPLES}jobflow-template.yaml`, '--output', output], line => out.push(line), () => {})
  if (code !== 0) throw new Error(`simulate exited ${code}`)
  return out.join('\n')
}

interface Box { x: number, y: number, width: number, height: number }

/** The boxes of an SVG graph by step name: each step's (a hexagon's bounds too) and each group's frame. */
function boxesOf (svg: string): { steps: Map<string, Box>, frames: Map<string, Box> } {
  const rect = (m: RegExpMatchArray, at: number): Box =>
    ({ x: Number(m[at]), y: Number(m[at + 1]), width: Number(m[at + 2]), height: Number(m[at + 3]) })
  const title = '(?:<title>[^<]*</title>)?'
  const box = '<rect x="(\\d+)" y="(\\d+)" width="(\\d+)" height="(\\d+)"'
  const frames = new Map([...svg.matchAll(new RegExp(`<g class="group" data-group="([^"]+)"[^>]*>${title}${box}`, 'g'))]
    .map(m => [m[1] as string, rect(m, 2)]))
  const shape = `(?:${box}|<polygon class="approval" points="([^"]+)")`
  const steps = new Map([...svg.matchAll(new RegExp(`<g class="step" data-step="([^"]+)"[^>]*>${title}${shape}`, 'g'))]
    .map(m => [m[1] as string, m[6] === undefined ? rect(m, 2) : bounds(m[6])]))
  return { steps, frames }
}

/** The bounds of a polygon's points (`x,y x,y …`). */
function bounds (points: string): Box {
  const [xs, ys] = [0, 1].map(i => points.split(' ').map(p => Number(p.split(',')[i]))) as [number[], number[]]
  const [x, y] = [Math.min(...xs), Math.min(...ys)]
  return { x, y, width: Math.max(...xs) - x, height: Math.max(...ys) - y }
}

/** Whether `inner` lies wholly inside `outer`, off its edges. */
const within = (inner: Box | undefined, outer: Box | undefined): boolean =>
  inner !== undefined && outer !== undefined && inner.x > outer.x && inner.y > outer.y &&
  inner.x + inner.width < outer.x + outer.width && inner.y + inner.height < outer.y + outer.height

const step = (name: string, phase: string, more: Partial<FlowStep> = {}): FlowStep =>
  ({ name, dependencies: [], phase, ...more })

/** A group `all` (template outer) holding `prep` and a group `inner` (template inner) with an approval step. */
const NESTED: FlowShape = {
  namespace: 'default',
  name: 'nested',
  phase: 'Running',
  attempts: [],
  steps: [
    step('start', 'Succeeded'),
    step('all', 'Running', { dependencies: ['start'], template: 'outer' }),
    step('all.prep', 'Succeeded', { group: 'all' }),
    step('all.inner', 'Running', { dependencies: ['all.prep'], template: 'inner', group: 'all' }),
    step('all.inner.compile', 'Succeeded', { group: 'all.inner' }),
    step('all.inner.gate', 'Running', { dependencies: ['all.inner.compile'], group: 'all.inner', approval: true }),
    step('all.inner.unit', 'Pending', { dependencies: ['all.inner.gate'], group: 'all.inner' }),
    step('last', 'Pending', { dependencies: ['all', 'start'] }),
    step('bye', 'Pending', { exit: true })
  ]
}

t.test('Mermaid: a template group is a subgraph titled with its template, holding its steps', async t => {
  const text = await picture('mermaid')
  t.match(text, '\n    subgraph f0s0["linux (JobFlowTemplate build-test)<br/>Succeeded"]\n' +
    '      f0s1["compile<br/>Succeeded"]:::succeeded\n' +
    '      f0s2["unit<br/>Succeeded"]:::succeeded\n' +
    '      f0s3["lint<br/>Succeeded"]:::succeeded\n' +
    '      f0s4["package<br/>Succeeded<br/>when args.target == \'linux\'"]:::succeeded\n' +
    '    end\n', 'its steps by the names the template gives them, each with its phase')
  t.match(text, '\n    f0s1 --> f0s2\n', 'the edges inside between its steps')
  t.match(text, '\n    f0s0 --> f0s5\n', 'mac after linux: an edge from subgraph to subgraph')
  t.match(text, '\n    f0s5 --> f0s10\n', 'release after mac: from the subgraph')
  t.match(text, /subgraph f0s5\["mac \(JobFlowTemplate build-test\)<br\/>Succeeded"\]\n(?: {6}.*\n){4} {4}end\n/,
    'the second group the same way')
  t.match(text, 'f0s9["package<br/>Skipped<br/>when args.target == \'linux\'"]:::skipped', 'a step inside skipped')
})

t.test('Mermaid: a nested template\'s subgraph inside its group\'s; an approval step a hexagon', async t => {
  const text = mermaidText([NESTED])
  t.match(text, '\n    f0s0["start<br/>Succeeded"]:::succeeded\n' +
    '    subgraph f0s1["all (JobFlowTemplate outer)<br/>Running"]\n' +
    '      f0s2["prep<br/>Succeeded"]:::succeeded\n' +
    '      subgraph f0s3["inner (JobFlowTemplate inner)<br/>Running"]\n' +
    '        f0s4["compile<br/>Succeeded"]:::succeeded\n' +
    '        f0s5{{"gate<br/>Running"}}:::running\n' +
    '        f0s6["unit<br/>Pending"]:::pending\n' +
    '      end\n' +
    '    end\n' +
    '    f0s7["last<br/>Pending"]:::pending\n')
  t.match(text, '\n    f0s2 --> f0s3\n', 'into the nested subgraph')
  t.match(text, '\n    f0s1 --> f0s7\n    f0s0 --> f0s7\n', 'out of the outer one')
  t.match(text, '\n    f0s7 -.-> f0x\n', 'the exit steps after the flow\'s own leaf, not after a group\'s step')
})

t.test('SVG: a template group is a frame round its steps\' boxes, labelled with its template', async t => {
  const page = await picture('html')
  const dag = /<svg class="dag"[\s\S]*?<\/svg>/.exec(page)?.[0] ?? ''
  const { steps, frames } = boxesOf(dag)
  t.same([...frames.keys()], ['linux', 'mac'], 'a frame per group')
  t.match(dag, /data-group="linux" data-template="build-test" data-phase="Succeeded">.*?<text [^>]*>linux \(/,
    'labelled with its name, its template and its phase')
  t.match(dag, /<text [^>]*>linux \(JobFlowTemplate build-test\) · Succeeded<\/text><\/g>/)
  for (const group of ['linux', 'mac']) {
    const inside = [...steps.keys()].filter(name => within(steps.get(name), frames.get(group)))
    t.same(inside, ['compile', 'unit', 'lint', 'package'].map(s => `${group}.${s}`), `${group}'s frame holds its steps`)
  }
  t.match(dag, /data-step="linux\.compile"[^>]*>.*?class="name">compile<\/text>/, 'named as the template names them')
  const linux = frames.get('linux') as Box
  const mac = frames.get('mac') as Box
  const edge = /class="edge" data-from="linux" data-to="mac" d="M(\d+),(\d+) [^"]* (\d+),(\d+)"/.exec(dag)?.slice(1)
    .map(Number)
  t.same(edge, [linux.x + linux.width, linux.y + linux.height / 2, mac.x, mac.y + mac.height / 2],
    'mac after linux: from the right of one frame to the left of the other')
  t.match(page, '<span>⬡ approval step</span>', 'the legend names the approval step\'s shape')
})

t.test('SVG: a nested group\'s frame inside its group\'s; an approval step a hexagon', async t => {
  const svg = dagSvg(NESTED)
  const { steps, frames } = boxesOf(svg)
  t.ok(within(frames.get('all.inner'), frames.get('all')), 'inner inside all')
  t.same([...steps.keys()].filter(name => within(steps.get(name), frames.get('all.inner'))),
    ['all.inner.compile', 'all.inner.gate', 'all.inner.unit'])
  t.same([...steps.keys()].filter(name => within(steps.get(name), frames.get('all'))),
    ['all.prep', 'all.inner.compile', 'all.inner.gate', 'all.inner.unit'])
  t.notOk(within(steps.get('start'), frames.get('all')) || within(steps.get('last'), frames.get('all')),
    'the flow\'s own steps outside')
  t.match(svg, /data-step="all\.inner\.gate" data-phase="Running"><polygon class="approval" points="(\d+,\d+ ?){6}"/,
    'the approval step a hexagon')
  t.match(svg, /class="phase">Running · approval</, 'and it says so')
  t.match(svg, /data-step="all\.inner\.compile"[^>]*><rect /, 'the others boxes')
  const skip = /class="edge" data-from="start" data-to="last" d="([^"]+)"/.exec(svg)?.[1] ?? ''
  const lane = Number(/ V(\d+) /.exec(skip)?.[1] ?? NaN) - 10
  t.ok([...steps.values(), ...frames.values()].every(box => lane < box.y), 'an edge over a column runs above its boxes')
  t.match(htmlPage('nested', [NESTED], 0), /data-group="all\.inner"/, 'the page draws them')
})
