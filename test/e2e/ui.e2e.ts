// `kubectl jobhooks ui` against the real tier, in headless Chromium (playwright-core driving Debian's
// `chromium`): the list shows a running JobFlow, its view turns job1 green without a reload as the
// real hooks record it, a step's Logs button says what the tier can show, and Rerun on the failed
// flow makes the new attempt appear. kwok pods run no container and have no log: the API server
// asks the pod's node for it, a kwok node has no kubelet to answer, and the page shows that error
// as kubectl prints it (a real log is covered against the fake API server, test/cli/ui/).
import t from 'tap'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import { seriousViolations } from '../helpers/axe.js'
import { CHROMIUM_FLAGS, chromiumBinary, NO_CHROMIUM } from '../../bench/chromium.js'
import { apply, ROOT } from './cluster.js'
import { slowFailingFlow, startScenarios } from './scenario.js'
import { startUiProcess } from './ui-process.js'

const binary = chromiumBinary()

const skip = binary === undefined ? NO_CHROMIUM : false

t.test('the page against the real tier: live, logs, rerun', { skip }, async t => {
  const { cluster, namespace } = await startScenarios(t)
  const ns = await namespace('ui')
  // job1 runs 15 s, so the page sees it run; job2 fails, so the flow can be rerun.
  const flow = slowFailingFlow(cluster)
  const ui = await startUiProcess(t, process.execPath, [join(ROOT, 'bin', 'kubectl-jobhooks.mjs'), 'ui', '-n', ns,
    '--kubeconfig', cluster.kubeconfig])
  const browser = await chromium.launch({ executablePath: binary as string, args: CHROMIUM_FLAGS })
  t.teardown(async () => await browser.close())
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  await page.goto(ui.url)
  await apply(cluster.kubectl, JSON.stringify(flow), ns)
  await page.locator('table[data-kind="JobFlow"] a', { hasText: 'jobflow-example' }).click({ timeout: 60_000 })
  await page.evaluate(() => { (globalThis as unknown as { kept: boolean }).kept = true })
  await page.locator('svg.dag g.step[data-step="job1"][data-phase="Running"]').waitFor({ timeout: 60_000 })
  t.pass('job1 running, as the hooks recorded it')
  await page.locator('svg.dag g.step[data-step="job1"][data-phase="Succeeded"]').waitFor({ timeout: 90_000 })
  t.equal(await page.evaluate(() => (globalThis as unknown as { kept?: boolean }).kept), true,
    'job1 turned green on the same page: no reload')
  t.same(await seriousViolations(page), [], 'axe-core: no serious violation on a live JobFlow\'s view')

  await page.locator('tr:has(td:text-is("job1")) button.logs').click()
  const said = page.locator('#status.failure, #logs-text:not(:empty)')
  await said.first().waitFor({ timeout: 30_000 })
  const status = await page.locator('#status').innerText()
  t.comment(`job1's Logs on a kwok pod: status "${status}", logs "${await page.locator('#logs-text').innerText()}"`)
  t.ok(/^(Error from server|Unable to connect)/.test(status) || status === '',
    'kwok pods have no log: the API server\'s error shown as kubectl prints it, or nothing')

  const rerun = page.locator('.acts button[data-act="rerun"]')
  await rerun.waitFor({ timeout: 180_000 })
  page.once('dialog', dialog => { void dialog.accept() })
  await rerun.click()
  await page.locator('#status', { hasText: 'rerun requested' }).waitFor({ timeout: 30_000 })
  await page.locator('table.attempts tr:has(td:text-is("job2")):has(td:nth-child(2):text-is("2"))')
    .waitFor({ timeout: 60_000 })
  t.pass('the rerun\'s new attempt of job2 appeared')
  t.equal(await ui.interrupt(), 0, 'Ctrl-C ends ui quietly')
})
