// `npm run simulate -- <manifest> --output html` and `kubectl jobhooks get jf <name> -o html`: one
// self-contained page (inline CSS and SVG, no script, nothing fetched) with each JobFlow's graph
// and the Gantt chart of its Jobs, under a legend of the graph's colours, lines and shapes.
import type { FlowShape } from './flow-shape.js'
import { PHASE_COLOURS } from './picture-mermaid.js'
import { dagSvg, escapeXml, ganttSvg } from './picture-svg.js'

const STYLE = `body { font: 14px system-ui, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 18px; } h2 { font-size: 16px; margin-top: 28px; } h3 { font-size: 14px; color: #555; }
svg text { font: 12px system-ui, sans-serif; fill: #222; } svg text.name { font-weight: 600; }
svg text.phase, svg text.tick { fill: #555; font-size: 11px; }
.legend span { display: inline-block; padding: 2px 8px; margin-right: 6px; border: 1px solid; border-radius: 4px; }`

/** What the graph's colours, lines and shapes mean (the ui page shows it above its graph too). */
export function legend (): string {
  return '<p class="legend">' + Object.entries(PHASE_COLOURS).map(([phase, { fill, stroke }]) =>
    `<span style="background:${fill};border-color:${stroke}">${phase}</span>`).join('') +
    '<span style="border-style:dashed">- - - when</span><span>⬡ approval step</span>' +
    '<span style="border-radius:8px;background:#f3f4f5">a frame: a template group\'s steps</span></p>'
}

function flowSection (flow: FlowShape, endSeconds: number, clock: string): string {
  const title = escapeXml(`${flow.namespace}/${flow.name}: ${flow.phase}`)
  return `<section class="jobflow" data-jobflow="${escapeXml(flow.name)}"><h2>${title}</h2>\n` +
    `<h3>Steps and dependencies</h3>\n${dagSvg(flow)}\n<h3>Jobs over time (${clock})</h3>\n` +
    `${ganttSvg(flow, endSeconds)}</section>`
}

/**
 * The page: the run's summary line, a legend, and a section per JobFlow; `clock` says what the
 * Gantt chart's seconds count (simulated ones, or since a live flow started).
 */
export function htmlPage (
  summary: string, flows: FlowShape[], endSeconds: number, clock = 'simulated seconds'
): string {
  const body = flows.length === 0
    ? '<p>No JobFlow was simulated: nothing to draw.</p>'
    : flows.map(flow => flowSection(flow, endSeconds, clock)).join('\n')
  return [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<title>${escapeXml(flows.map(f => f.name).join(', ') || 'jobhooks simulation')}</title>`,
    `<style>\n${STYLE}\n</style></head><body>`,
    `<h1>${escapeXml(summary)}</h1>`,
    legend(),
    body,
    '</body></html>'
  ].join('\n')
}
