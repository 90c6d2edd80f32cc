// `kubectl jobhooks ui` in a real browser: headless Chromium (Debian's `chromium`, or the binary
// CHROMIUM names), driven by playwright-core, on the page the command serves against the fake API
// server. The list fills, a change arrives without a reload, a JobFlow's step turns green, a step's
// logs stream, Rerun asks and sends the plugin's patch, and axe-core finds no serious accessibility
// violation. With UI_SCREENSHOTS=<folder> it writes the pictures docs/cli.md shows
// (`npm run ui:screenshots`). CI installs Chromium; where there is none, this file says it skipped.
import t, { type Test } from 'tap'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type Browser, type Page } from 'playwright-core'
import { seriousViolations } from '../../helpers/axe.js'
import type { KubeObject } from '../../../src/k8s/types.js'
import { collaSetObjects, daemonJobObjects, operationJob, runningFlow } from '../../helpers/plugin.js'
import { CHROMIUM_FLAGS, chromiumBinary, NO_CHROMIUM } from '../../../bench/chromium.js'
import { job2Pod, runningUi, type RunningUi } from '../../helpers/ui.js'

const binary = chromiumBinary()
const skip = binary === undefined ? NO_CHROMIUM : false
const shots = process.env.UI_SCREENSHOTS

function withRecord (flow: KubeObject, name: string, attempt: number, change: Record<string, unknown>): KubeObject {
  const copy = structuredClone(flow)
  const status = copy.status as { jobs: Array<Record<string, unknown>> }
  status.jobs = status.jobs.map(r => r.name === name && (r.attempt ?? 1) === attempt ? { ...r, ...change } : r)
  return copy
}

async function openPage (t: Test, ui: RunningUi): Promise<{ page: Page, errors: string[] }> {
  const browser: Browser = await chromium.launch({ executablePath: binary as string, args: CHROMIUM_FLAGS })
  t.teardown(async () => await browser.close())
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  const errors: string[] = []
  page.on('pageerror', error => errors.push(error.message))
  page.on('console', message => { if (message.type() === 'error') errors.push(message.text()) })
  await page.goto(`${ui.origin}/#token=${ui.token}`)
  return { page, errors }
}

t.test('the list: every kind, a change without a reload, the filters, no serious a11y violation', { skip }, async t => {
  const ui = await runningUi(t, [runningFlow(), ...daemonJobObjects(), operationJob(), ...collaSetObjects()])
  const { page, errors } = await openPage(t, ui)
  const flowRow = page.locator('table[data-kind="JobFlow"] tbody tr', { hasText: 'jobflow-example' })
  await flowRow.waitFor()
  t.equal(new URL(page.url()).hash, '#/', 'the token left the address bar')
  t.match(await flowRow.innerText(), 'Running')
  await page.evaluate(() => { (globalThis as unknown as { kept: boolean }).kept = true })
  const done = runningFlow()
  ;(done.status as Record<string, unknown>).phase = 'Succeeded'
  ui.fake.change(done)
  await page.locator('table[data-kind="JobFlow"] td', { hasText: 'Succeeded' }).waitFor({ timeout: 5000 })
  const kept = await page.evaluate(() => (globalThis as unknown as { kept?: boolean }).kept)
  t.equal(kept, true, 'the same page: no reload')
  for (const kind of ['DaemonJob', 'OperationJob', 'CollaSet']) {
    t.equal(await page.locator(`table[data-kind="${kind}"] tbody tr`).count(), 1, kind)
  }
  await page.selectOption('#phase', 'Succeeded')
  t.equal(await page.locator('table[data-kind="OperationJob"] td.empty').count(), 1, 'the phase filter hides the rest')
  await page.selectOption('#phase', '')
  await page.fill('#namespace', 'other')
  t.equal(await page.locator('table[data-kind="JobFlow"] td.empty').count(), 1, 'and the namespace filter')
  await page.fill('#namespace', '')
  t.same(await seriousViolations(page), [], 'axe-core: no serious violation')
  if (shots !== undefined) {
    mkdirSync(shots, { recursive: true })
    await page.screenshot({ path: join(shots, 'ui-list.png'), fullPage: true })
  }
  await page.evaluate("location.hash = '#/JobFlow/team-a/nope'")
  await page.locator('#status.failure', { hasText: 'jobflows.jobhooks.io "nope" not found' }).waitFor()
  // EventSource would open an ended stream again after about 3 s: the page must not.
  await page.waitForTimeout(4000)
  t.equal(ui.fake.requests.filter(r => r.url.endsWith('/jobflows/nope')).length, 1, 'a missing object is read once')
  t.same(errors, [], 'no error in the page')
})

t.test('a JobFlow: its step turns green as it runs, its logs, Rerun asks and sends', { skip }, async t => {
  const ui = await runningUi(t, [runningFlow(), job2Pod()])
  ui.fake.logs.set('job2-2-abc/main', 'fetching v1.2.3\nuploading 3 files\n')
  const { page, errors } = await openPage(t, ui)
  await page.click('a[href="#/JobFlow/team-a/jobflow-example"]')
  const job2 = page.locator('svg.dag g.step[data-step="job2"]')
  t.equal(await job2.getAttribute('data-phase'), 'Running')
  ui.fake.change(withRecord(runningFlow(), 'job2', 2, { phase: 'Succeeded', completionTime: '2026-01-02T03:03:00Z' }))
  await page.locator('svg.dag g.step[data-step="job2"][data-phase="Succeeded"]').waitFor({ timeout: 5000 })
  t.pass('job2 turned Succeeded without a reload')
  await page.click('tr:has(td:text-is("job2")) >> nth=1 >> button.logs')
  await page.locator('#logs-text', { hasText: 'uploading 3 files' }).waitFor({ timeout: 5000 })
  t.pass('its logs streamed into the page')
  t.same(await seriousViolations(page), [], 'axe-core: no serious violation')
  if (shots !== undefined) await page.screenshot({ path: join(shots, 'ui-jobflow.png'), fullPage: true })
  const failed = runningFlow()
  ;(failed.status as Record<string, unknown>).phase = 'Failed'
  ui.fake.change(failed)
  const rerun = page.locator('.acts button[data-act="rerun"]')
  await rerun.waitFor({ timeout: 5000 })
  const asked: string[] = []
  page.once('dialog', dialog => { asked.push(dialog.message()); void dialog.accept() })
  await rerun.click()
  await page.locator('#status', { hasText: 'rerun requested' }).waitFor({ timeout: 5000 })
  t.match(asked[0], 'This runs: kubectl jobhooks rerun JobFlow jobflow-example -n team-a')
  t.match(ui.fake.requests.filter(r => r.method === 'PATCH').map(r => r.body),
    [{ metadata: { annotations: { 'jobhooks.io/rerun': /^\d+$/ } } }], 'the plugin\'s patch')
  page.once('dialog', dialog => { void dialog.dismiss() })
  await page.locator('.acts button[data-act="suspend"]').click()
  t.equal(ui.fake.requests.filter(r => r.method === 'PATCH').length, 1, 'a dismissed question sends nothing')
  t.same(errors, [], 'no error in the page')
})
