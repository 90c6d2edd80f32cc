// What an exit step's Job is told of the DAG: JOBHOOKS_FLOW_FAILURES stays within a termination
// message's size however many steps failed, listing them in step order while they fit.
import t from 'tap'
import { exitEnv, failuresJSON, FLOW_FAILURES_MAX_BYTES } from '../../../src/controllers/jobflow/exit.js'

t.test('the failures fit in 4 KiB: the first steps whole, the rest left out', async t => {
  const failures = Array.from({ length: 100 }, (_, i) => ({ name: `step-${i}`, message: 'x'.repeat(500) }))
  const json = failuresJSON({ phase: 'Failed', failures })
  t.ok(Buffer.byteLength(json) <= FLOW_FAILURES_MAX_BYTES, `${Buffer.byteLength(json)} bytes`)
  const listed = JSON.parse(json) as Array<{ name: string }>
  t.same(listed.map(f => f.name), ['step-0', 'step-1', 'step-2', 'step-3', 'step-4', 'step-5', 'step-6'])
  t.same(JSON.parse(failuresJSON({ phase: 'Failed', failures: failures.slice(0, 2) })), failures.slice(0, 2))
  t.same(exitEnv({ phase: 'Succeeded', failures: [] }), [
    { name: 'JOBHOOKS_FLOW_PHASE', value: 'Succeeded' }, { name: 'JOBHOOKS_FLOW_FAILURES', value: '[]' }
  ])
})
