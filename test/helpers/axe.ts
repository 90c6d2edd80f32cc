// axe-core (a maintained accessibility checker) on a page the tests drive with playwright-core:
// the serious and critical violations, by rule and where, as a list a test expects empty.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Page } from 'playwright-core'

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

/** axe-core's serious and critical violations on the page as it is, by rule and where. */
export async function seriousViolations (page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol: the page's CSP (scripts from itself only) does not apply.
  await page.evaluate(AXE)
  const found = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: () => Promise<{ violations: unknown[] }> } }).axe
    return (await axe.run()).violations
  }) as Array<{ id: string, impact: string, nodes: Array<{ target: string[] }> }>
  return found.filter(v => v.impact === 'serious' || v.impact === 'critical')
    .map(v => `${v.id} (${v.impact}): ${v.nodes.map(n => n.target.join(' ')).join(', ')}`)
}
