// `kubectl jobhooks ui` against the fake API server: the page it serves and only to its own
// address, the token every API request needs, the live lists and views (a change arrives without
// a reload; a dropped watch resumes and says so), the writes (the plugin's own patches), the logs.
import t from 'tap'
import { request } from 'node:http'
import type { KubeObject } from '../../../src/k8s/types.js'
import { collaSetObjects, daemonJobObjects, operationJob, runningFlow } from '../../helpers/plugin.js'
import { job2Pod, readEvents, runningUi, type RunningUi, type SseEvent, type SseReader } from '../../helpers/ui.js'

const FLOW_PATH = '/apis/jobhooks.io/v1alpha1/namespaces/team-a/jobflows/jobflow-example'

interface Answer { status: number, headers: Record<string, string | string[] | undefined>, body: string }

async function send (url: string, options: { method?: string, headers?: Record<string, string>, body?: string } = {}):
Promise<Answer> {
  return await new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers ?? {} }, res => {
      let body = ''
      res.on('data', (chunk: Buffer) => { body += chunk.toString('utf8') })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
    })
    req.on('error', reject)
    req.end(options.body)
  })
}

function finished (phase: 'Failed' | 'Succeeded'): KubeObject {
  const flow = runningFlow()
  ;(flow.status as Record<string, unknown>).phase = phase
  ;(flow.status as Record<string, unknown>).completionTime = '2026-01-02T03:04:00Z'
  return flow
}

async function act (ui: RunningUi, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return await send(`${ui.origin}/api/act`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-jobhooks-token': ui.token, ...headers },
    body: JSON.stringify(body)
  })
}

const listOf = (kind: string) => (e: SseEvent): boolean => e.event === 'list' && e.data.kind === kind

/** The first table of each kind, whatever order they came in. */
async function firstTables (events: SseReader): Promise<Map<string, Record<string, unknown>>> {
  const tables = new Map<string, Record<string, unknown>>()
  while (tables.size < 6) {
    const { data } = await events.next(e => e.event === 'list' && !tables.has(e.data.kind as string))
    tables.set(data.kind as string, data)
  }
  return tables
}

t.test('ui: a page on 127.0.0.1 at a free port, its URL printed with the session token', async t => {
  const ui = await runningUi(t, [runningFlow()])
  t.match(ui.printed,
    /^Serving the jobhooks page for namespace team-a at http:\/\/127\.0\.0\.1:\d+\/#token=[\w-]{32}\n/)
  t.not(ui.origin.endsWith(':0'), true, 'a real port')
  let size = 0
  for (const [path, type] of [['/', 'text/html'], ['/ui.js', 'text/javascript'], ['/ui.css', 'text/css']] as const) {
    const page = await send(`${ui.origin}${path}`)
    t.equal(page.status, 200, path)
    t.match(page.headers['content-type'], type)
    t.match(page.headers['content-security-policy'], "script-src 'self'", 'nothing loaded from elsewhere')
    t.notMatch(page.body, ui.token, 'the token is not in the files: only in the URL printed')
    t.notMatch(page.body, /https?:\/\/(?!127)/, 'no address elsewhere')
    size += Buffer.byteLength(page.body)
  }
  t.ok(size < 200 * 1024, `the page's files are ${size} bytes, under 200 KiB`)
  const other = await runningUi(t, [runningFlow()])
  t.not(other.token, ui.token, 'a token per session')
})

t.test('ui: another Host (DNS rebinding) and a missing or wrong token are refused', async t => {
  const ui = await runningUi(t, [runningFlow()])
  const port = new URL(ui.origin).port
  t.equal((await send(`${ui.origin}/`, { headers: { host: `evil.example:${port}` } })).status, 421)
  t.equal((await send(`${ui.origin}/`, { headers: { host: `localhost:${port}` } })).status, 200, 'localhost is ours')
  t.equal((await send(`${ui.origin}/api/stream/list`)).status, 401)
  t.equal((await send(`${ui.origin}/api/stream/list?token=${ui.token.slice(1)}x`)).status, 401)
  const flow = { action: 'suspend', kind: 'jf', namespace: 'team-a', name: 'jobflow-example' }
  t.equal((await act(ui, flow, { 'x-jobhooks-token': 'nope' })).status, 401)
  const queryOnly = await send(`${ui.origin}/api/act?token=${ui.token}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(flow)
  })
  t.equal(queryOnly.status, 401, 'a write carries the token in its header, never the URL')
  t.equal((await act(ui, flow, { origin: 'http://evil.example' })).status, 403, 'a write from another origin')
  t.equal((await act(ui, flow, { 'content-type': 'text/plain' })).status, 415, 'a form post is not JSON')
  t.equal((await act(ui, { ...flow, name: '--all' })).status, 400, 'a name is a name, never a flag')
  t.same(ui.fake.requests.filter(r => r.method === 'PATCH'), [], 'nothing written')
})

t.test('ui: every kind listed with kubectl get\'s columns, and a change arrives without a reload', async t => {
  const ui = await runningUi(t, [runningFlow(), ...daemonJobObjects(), operationJob(), ...collaSetObjects()])
  const events = await readEvents(`${ui.origin}/api/stream/list?token=${ui.token}`)
  t.teardown(events.close)
  t.same((await events.next(e => e.event === 'scope')).data,
    { namespace: 'team-a', kinds: ['JobFlow', 'CronJobFlow', 'DaemonJob', 'EphemeralJob', 'OperationJob', 'CollaSet'] })
  const tables = await firstTables(events)
  const flows = tables.get('JobFlow') as Record<string, unknown>
  t.match(flows, { head: ['NAME', 'STATUS', 'JOBS'], rows: [{ namespace: 'team-a', name: 'jobflow-example' }] })
  t.equal((flows.head as string[])[flows.phaseColumn as number], 'STATUS', 'the column the phase filter reads')
  t.match(tables.get('DaemonJob'), { rows: [{ name: 'audit' }] })
  t.match(tables.get('OperationJob'),
    { head: ['NAME', 'ACTION', 'PROGRESS'], phaseColumn: 2, rows: [{ name: 'opj-replace' }] })
  t.match(tables.get('CollaSet'), { rows: [{ name: 'foo', cells: ['foo', '2', '3'] }] })
  t.match(tables.get('CronJobFlow'), { rows: [] })
  const done = finished('Succeeded')
  ui.fake.change(done)
  const changed = await events.next(e => listOf('JobFlow')(e) &&
    (e.data.rows as Array<{ cells: string[] }>)[0]?.cells.includes('Succeeded') === true)
  t.ok(changed, 'the new phase, pushed by the watch')
  const watchesOfFlows = (): number => ui.fake.requests.filter(r => r.url.includes('/jobflows?watch=1')).length
  ui.fake.dropWatches()
  t.match((await events.next(e => e.event === 'notice')).data.message,
    /^The watch of \w+ dropped \(the server closed the watch\); resumed from resourceVersion \d+\.$/)
  // The fake replays nothing: change the flow once the watch is open again.
  while (watchesOfFlows() < 2) await new Promise(resolve => setTimeout(resolve, 20))
  t.match(ui.fake.requests.filter(r => r.url.includes('/jobflows?watch=1'))[1]?.url, /resourceVersion=\d+$/,
    'opened again from the version last seen')
  ui.fake.change(finished('Failed'))
  await events.next(e => listOf('JobFlow')(e) && JSON.stringify(e.data.rows).includes('Failed'))
  t.pass('and the resumed watch carries the next change')
})

t.test('ui: a kind RBAC keeps from the user says so as kubectl would, and the rest are listed', async t => {
  const ui = await runningUi(t, [runningFlow(), ...collaSetObjects()])
  ui.fake.deny = (method, url) => method === 'GET' && url.includes('/collasets')
  const events = await readEvents(`${ui.origin}/api/stream/list?token=${ui.token}`)
  t.teardown(events.close)
  t.same((await events.next(e => e.event === 'failure')).data, {
    kind: 'CollaSet',
    message: 'Error from server (Forbidden): collasets.jobhooks.io is forbidden: User "tester" cannot list ' +
      'resource "collasets" in API group "jobhooks.io" in the namespace "team-a"'
  })
  t.match((await events.next(listOf('JobFlow'))).data, { rows: [{ name: 'jobflow-example' }] })
})

t.test('ui -A: every namespace, with a NAMESPACE column', async t => {
  const ui = await runningUi(t, [runningFlow()], ['-A'])
  t.match(ui.printed, 'for every namespace')
  const events = await readEvents(`${ui.origin}/api/stream/list?token=${ui.token}`)
  t.teardown(events.close)
  t.same((await events.next(e => e.event === 'scope')).data.namespace, null)
  t.match((await events.next(listOf('JobFlow'))).data, { head: ['NAMESPACE', 'NAME'] })
  t.ok(ui.fake.requests.some(r => r.url.startsWith('/apis/jobhooks.io/v1alpha1/jobflows?watch=1')), 'a watch of all')
})

t.test('ui: a JobFlow\'s view with its graph, Gantt chart and attempts, drawn again as it runs', async t => {
  const ui = await runningUi(t, [runningFlow()])
  const url = `${ui.origin}/api/stream/object?token=${ui.token}&kind=JobFlow&namespace=team-a&name=jobflow-example`
  const events = await readEvents(url)
  t.teardown(events.close)
  const html = (await events.next(e => e.event === 'detail')).data.html as string
  t.match(html, '<svg class="dag"')
  t.match(html, '<svg class="gantt"')
  t.match(html, /<button type="button" class="logs" data-step="job2" data-attempt="2">Logs<\/button>/)
  t.match(html, /<tbody class="fan-out" data-step="shard">.*shard: 2 items/)
  t.match(html, /<g class="step" data-step="shard" data-phase="Running">.*?class="phase">Running · 2 items</,
    'the fan-out step counts its items in the graph')
  t.match(html, 'data-act="suspend"')
  t.notMatch(html, 'data-act="rerun"', 'a running flow offers no rerun')
  ui.fake.change(finished('Failed'))
  const again = (await events.next(e => e.event === 'detail')).data.html as string
  t.match(again, 'data-act="rerun"')
  t.match(again, 'Rerun from here')
  ui.fake.change(finished('Failed'), 'DELETED')
  t.match((await events.next(e => e.event === 'gone')).data, { message: 'JobFlow team-a/jobflow-example was deleted.' })
})

t.test('ui: the other kinds drawn as kubectl jobhooks get draws them', async t => {
  const ui = await runningUi(t, [...daemonJobObjects(), operationJob(), ...collaSetObjects()])
  for (const [kind, name, seen] of [['dj', 'audit', 'NODE'], ['OperationJob', 'opj-replace', 'TARGET'],
    ['cls', 'foo', 'SERVICE-READY']] as const) {
    const events = await readEvents(`${ui.origin}/api/stream/object?token=${ui.token}&kind=${kind}` +
      `&namespace=team-a&name=${name}`)
    t.match((await events.next(e => e.event === 'detail')).data.html, seen, kind)
    events.close()
  }
  const missing = await readEvents(
    `${ui.origin}/api/stream/object?token=${ui.token}&kind=jf&namespace=team-a&name=nope`)
  t.same((await missing.next(e => e.event === 'failure')).data,
    { message: 'Error from server (NotFound): jobflows.jobhooks.io "nope" not found' })
  await missing.next(e => e.event === 'end')
  t.pass('and the stream ends saying so: the page does not open it again')
  missing.close()
})

t.test('ui: acts are the plugin\'s own patches; a refusal reads as kubectl prints it', async t => {
  const ui = await runningUi(t, [finished('Failed')])
  const rerun = await act(ui, { action: 'rerun', kind: 'JobFlow', namespace: 'team-a', name: 'jobflow-example' })
  t.equal(rerun.status, 200)
  t.match(JSON.parse(rerun.body),
    { message: /^jobflow\.jobhooks\.io\/jobflow-example rerun requested \(jobhooks\.io\/rerun=\d+\)$/ })
  const flow = { kind: 'jf', namespace: 'team-a', name: 'jobflow-example' }
  const from = await act(ui, { action: 'rerun', ...flow, steps: ['job2'] })
  t.equal(from.status, 200)
  await act(ui, { action: 'suspend', kind: 'jf', namespace: 'team-a', name: 'jobflow-example' })
  const patches = ui.fake.requests.filter(r => r.method === 'PATCH')
  t.same(patches.map(p => p.url), [FLOW_PATH, FLOW_PATH, FLOW_PATH])
  t.match(patches[0]?.body, { metadata: { annotations: { 'jobhooks.io/rerun': /^\d+$/ } } })
  t.match(patches[1]?.body, { metadata: { annotations: { 'jobhooks.io/rerun-steps': 'job2' } } })
  t.same(patches[2]?.body, { spec: { suspend: true } })
  const unknown = await act(ui, { action: 'approve', ...flow, steps: ['x'] })
  t.equal(unknown.status, 409)
  t.match(JSON.parse(unknown.body).message, /^error: jobflow\.jobhooks\.io\/jobflow-example has no approval step "x"/)
  ui.fake.deny = method => method === 'PATCH'
  const denied = await act(ui, { action: 'resume', kind: 'jf', namespace: 'team-a', name: 'jobflow-example' })
  t.equal(denied.status, 403)
  t.match(JSON.parse(denied.body).message,
    /^Error from server \(Forbidden\): jobflows\.jobhooks\.io "jobflow-example" is forbidden/)
})

t.test('ui: a step\'s logs streamed, and what stops them said', async t => {
  const ui = await runningUi(t, [runningFlow(), job2Pod()])
  ui.fake.logs.set('job2-2-abc/main', 'retrying\ndone\n')
  const base = `${ui.origin}/api/stream/logs?token=${ui.token}&namespace=team-a&name=jobflow-example`
  const logs = await readEvents(`${base}&step=job2`)
  t.same((await logs.next(e => e.event === 'log')).data, { text: 'retrying\ndone\n' })
  await logs.next(e => e.event === 'end')
  const followed = await readEvents(`${base}&step=job2&follow=1`)
  t.same((await followed.next(e => e.event === 'log')).data, { text: 'retrying\ndone\n' })
  followed.close()
  const none = await readEvents(`${base}&step=job9`)
  t.match((await none.next(e => e.event === 'failure')).data.message,
    /^error: jobflow jobflow-example has no step "job9"/)
  const bad = await readEvents(`${base}&step=job2&attempt=-1`)
  t.match((await bad.next(e => e.event === 'failure')).data.message, 'not a name')
})
