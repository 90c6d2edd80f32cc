// The memo of built objects, seen from the service: a second sync of the same objects takes them
// from it, gets the same answer, and /metrics says so.
import t from 'tap'
import { testApp } from './helpers/app.js'
import { fixture } from './helpers/fixtures.js'

const metric = async (app: Awaited<ReturnType<typeof testApp>>, name: string): Promise<number> => {
  const line = ((await app.inject({ url: '/metrics' })).body).split('\n').find(l => l.startsWith(name + ' '))
  return Number(line?.slice(name.length + 1))
}

t.test('a second sync of the same Jobs and Nodes takes them from the memo, and /metrics counts it', async t => {
  const app = await testApp(t)
  const payload = fixture('daemonjob/sync-running.v2.json')
  const headers = { 'content-type': 'application/json' }
  const post = async (): Promise<string> =>
    (await app.inject({ method: 'POST', url: '/hooks/daemonjob/sync?effects=show', payload, headers })).body
  const first = await post()
  const hits = await metric(app, 'jobhooks_object_memo_lookups_total{result="hit"}')
  const misses = await metric(app, 'jobhooks_object_memo_lookups_total{result="miss"}')
  const objects = await metric(app, 'jobhooks_object_memo_objects')
  t.equal(hits, 0, 'nothing remembered on the first sync')
  type Groups = Record<string, Record<string, unknown>>
  const request = payload as unknown as { children: Groups, related: Groups }
  const count = (groups: Groups): number => Object.values(groups).reduce((n, group) => n + Object.keys(group).length, 0)
  t.equal(misses, count(request.children) + count(request.related) + 2,
    'each object looked up once: the Jobs, the Nodes, the parent\'s spec and status')
  t.equal(objects, misses, 'and each remembered: the Nodes, of which a DaemonJob reads little, by what is kept of them')
  t.ok(await metric(app, 'jobhooks_object_memo_bytes') > 0)
  t.equal(await metric(app, 'jobhooks_object_memo_limit_bytes'), app.wire.memo.limit)
  t.equal(await post(), first, 'the same answer')
  t.equal(await metric(app, 'jobhooks_object_memo_lookups_total{result="hit"}'), objects,
    'every remembered object from the memo the second time')
  t.equal(await metric(app, 'jobhooks_object_memo_lookups_total{result="miss"}'), misses, 'no more misses')
})

t.test('two apps in one process share no memo: what one remembers, the other builds', async t => {
  const one = await testApp(t)
  const two = await testApp(t)
  t.not(one.wire, two.wire)
  const payload = fixture('daemonjob/sync-running.v2.json')
  const headers = { 'content-type': 'application/json' }
  const post = async (app: Awaited<ReturnType<typeof testApp>>): Promise<string> =>
    (await app.inject({ method: 'POST', url: '/hooks/daemonjob/sync', payload, headers })).body
  const answer = await post(one)
  t.equal(await post(one), answer)
  t.ok(one.wire.memo.hits > 0, 'the first app\'s second sync hits')
  t.equal(await post(two), answer, 'the same answer')
  t.equal(two.wire.memo.hits, 0, 'the same request in the second app: every lookup a miss')
  t.equal(two.wire.memo.misses, one.wire.memo.misses)
})
