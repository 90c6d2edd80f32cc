// Versions side by side (docs/architecture.md): every kind carries forward the top-level status
// fields it does not know, as another version wrote them, and writes a field of its own only when
// it says something, so that two versions answering the same parent agree on its status.
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseAllDocuments } from 'yaml'
import { testApp } from '../helpers/app.js'
import { FIXTURES, fixture } from '../helpers/fixtures.js'
import { ALL_KINDS } from '../../src/controllers/kinds.js'
import { withUnknownStatusFields } from '../../src/controllers/common/status-fields.js'
import type { SyncRequest } from '../../src/protocol/hooks.js'

const ROOT = join(import.meta.dirname, '..', '..')

/** What a newer version might have written: fields this one has never heard of, of every JSON type. */
const UNKNOWN = {
  shardsPlanned: 0,
  lastVerdict: { by: 'a newer version', reasons: ['one', 'two'], at: '2026-01-02T03:00:00Z' },
  tags: [],
  note: null
}

/** The sync fixtures of a kind, by file name. */
function syncFixtures (kind: string): string[] {
  return readdirSync(join(FIXTURES, kind)).filter(f => f.startsWith('sync')).sort()
}

/** The top-level status properties of the kind's CRD (manifests/crds/<kind>.yaml). */
function crdStatusFields (kind: string): string[] {
  const crd = parseAllDocuments(readFileSync(join(ROOT, 'manifests', 'crds', `${kind}.yaml`), 'utf8'))
    .map(d => d.toJS()).find(d => d?.kind === 'CustomResourceDefinition')
  return Object.keys(crd.spec.versions[0].schema.openAPIV3Schema.properties.status.properties).sort()
}

t.test('each kind knows exactly the status fields its CRD has', async t => {
  for (const kind of ALL_KINDS) {
    t.same([...kind.statusFields].sort(), crdStatusFields(kind.kind), `${kind.kind}: statusFields is its CRD's status`)
  }
})

t.test('every status field a fixture\'s answer writes is one its kind knows', async t => {
  const app = await testApp(t)
  for (const kind of ALL_KINDS) {
    for (const file of syncFixtures(kind.kind)) {
      const response = await app.inject({
        method: 'POST', url: `/hooks/${kind.kind}/sync`, payload: fixture(`${kind.kind}/${file}`)
      })
      const unknown = Object.keys(response.json().status).filter(f => !kind.statusFields.includes(f))
      t.same(unknown, [], `${kind.kind}/${file}: no field outside statusFields`)
    }
  }
})

t.test('a status field unknown to the kind survives a sync of every kind, unchanged, and changes nothing else',
  async t => {
    const app = await testApp(t)
    let checked = 0
    for (const kind of ALL_KINDS) {
      for (const file of syncFixtures(kind.kind)) {
        const plain = fixture<SyncRequest>(`${kind.kind}/${file}`)
        const withUnknown = fixture<SyncRequest>(`${kind.kind}/${file}`)
        withUnknown.parent.status = { ...(withUnknown.parent.status as object | undefined), ...UNKNOWN }
        const url = `/hooks/${kind.kind}/sync`
        const before = (await app.inject({ method: 'POST', url, payload: plain })).json()
        const after = (await app.inject({ method: 'POST', url, payload: withUnknown })).json()
        t.same(after.status, { ...before.status, ...UNKNOWN }, `${kind.kind}/${file}: the unknown fields as they were`)
        t.same(after.children, before.children, `${kind.kind}/${file}: the same children`)
        checked++
      }
    }
    t.ok(checked >= 50, `${checked} fixtures of ${ALL_KINDS.length} kinds`)
  })

t.test('the unknown fields survive an internal error and a finalize too', async t => {
  const app = await testApp(t)
  const request = fixture<SyncRequest>('operationjob/sync-exited.v2.json')
  request.parent.status = { ...(request.parent.status as object), ...UNKNOWN }
  const finalized = (await app.inject({ method: 'POST', url: '/hooks/operationjob/finalize', payload: request })).json()
  t.match(finalized.status, UNKNOWN, 'finalize')

  const broken = await testApp(t, {
    kinds: [{ kind: 'jobflow', phaseField: 'phase', statusFields: [], sync: () => { throw new Error('boom') } }]
  })
  const flow = fixture<SyncRequest>('jobflow/sync-job1-done.v2.json')
  flow.parent.status = { ...(flow.parent.status as object), ...UNKNOWN }
  const failed = (await broken.inject({ method: 'POST', url: '/hooks/jobflow/sync', payload: flow })).json()
  t.match(failed.status, { ...UNKNOWN, phase: 'Invalid' }, 'an internal error')
})

t.test('a field the kind knows but leaves out this time is not carried forward', async t => {
  const app = await testApp(t)
  const sync = async (kind: string, request: SyncRequest): Promise<Record<string, unknown>> =>
    (await app.inject({ method: 'POST', url: `/hooks/${kind}/sync`, payload: request })).json().status

  // A rerun starts the flow again: no completion time, though the observed status has one.
  const rerun = fixture<SyncRequest>('jobflow/sync-rerun.v2.json')
  t.ok(typeof (rerun.parent.status as Record<string, unknown>).completionTime === 'string', 'the fixture had finished')
  t.notOk('completionTime' in await sync('jobflow', rerun), 'no completionTime after a rerun')

  // A stale count (a Job that waited and was admitted since) goes: nothing waits now.
  const flow = fixture<SyncRequest>('jobflow/sync-job1-done.v2.json')
  flow.parent.status = { ...(flow.parent.status as object), jobsQueued: 2 }
  t.notOk('jobsQueued' in await sync('jobflow', flow), 'JobFlow: jobsQueued left out')
  const cycle = fixture<SyncRequest>('jobflow/sync-cycle.v2.json')
  cycle.parent.status = { ...(cycle.parent.status as object | undefined), jobsQueued: 2 }
  const invalid = await sync('jobflow', cycle)
  t.equal(invalid.phase, 'Invalid')
  t.notOk('jobsQueued' in invalid, 'JobFlow with an invalid spec: jobsQueued left out')
  const daemon = fixture<SyncRequest>('daemonjob/sync-running.v2.json')
  daemon.parent.status = { ...(daemon.parent.status as object), queued: 2 }
  t.notOk('queued' in await sync('daemonjob', daemon), 'DaemonJob: queued left out')
})

t.test('jobsQueued and queued are written only when a Job waits', async t => {
  const app = await testApp(t)
  for (const [kind, field] of [['jobflow', 'jobsQueued'], ['daemonjob', 'queued']] as const) {
    const seen: unknown[] = []
    for (const file of syncFixtures(kind)) {
      const { status } = (await app.inject({
        method: 'POST', url: `/hooks/${kind}/sync`, payload: fixture(`${kind}/${file}`)
      })).json()
      if (field in status) {
        t.ok(status[field] > 0, `${kind}/${file}: ${field} ${String(status[field])} says something`)
        seen.push(status[field])
      }
    }
    t.ok(seen.length > 0, `${kind}: some fixture has a Job that waits (${field} ${seen.join(', ')})`)
  }
  const daemon = (await app.inject({
    method: 'POST', url: '/hooks/daemonjob/sync', payload: fixture('daemonjob/sync-running.v2.json')
  })).json()
  t.same(Object.keys(daemon.status).slice(0, 5), ['phase', 'desired', 'active', 'succeeded', 'failed'],
    'DaemonJob: no queued count between active and succeeded')
})

t.test('withUnknownStatusFields adds what the kind does not know, and nothing else', async t => {
  const status = { phase: 'Running' }
  t.equal(withUnknownStatusFields(status, undefined, ['phase']), status, 'no observed status: the answer as it is')
  t.equal(withUnknownStatusFields(status, { phase: 'Pending', count: 0 }, ['phase', 'count']), status,
    'only known fields: the answer as it is, the same object')
  t.same(withUnknownStatusFields(status, { phase: 'Pending', extra: { a: 1 } }, ['phase']),
    { phase: 'Running', extra: { a: 1 } }, 'the answer\'s own value wins; the unknown one follows it')
  t.same(withUnknownStatusFields({ extra: 2 }, { extra: 1 }, []), { extra: 2 },
    'a field the answer holds is the answer\'s')
  t.same(status, { phase: 'Running' }, 'the answer is not changed in place')
})
