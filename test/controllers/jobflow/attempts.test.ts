import t from 'tap'
import {
  attemptJobName, attemptNameClashes, backoffSeconds, parseRetry, retriesUsed, retryDueAt, MAX_RETRY_LIMIT
} from '../../../src/controllers/jobflow/attempts.js'
import type { JobRecord } from '../../../src/controllers/jobflow/records.js'

t.test('parseRetry: limit required; backoff defaults; bad values are problems', async t => {
  const problems: string[] = []
  t.same(parseRetry({ limit: 3 }, 'flow "a"', problems), { limit: 3, backoffSeconds: 10, maxBackoffSeconds: 300 })
  t.same(
    parseRetry({ limit: 0, backoffSeconds: 600 }, 'flow "a"', problems),
    { limit: 0, backoffSeconds: 600, maxBackoffSeconds: 600 },
    'the cap is never below the first wait'
  )
  t.same(problems, [])
  t.equal(parseRetry(undefined, 'flow "a"', problems), undefined)
  for (const [raw, expected] of [
    [{}, /retry.limit is required/],
    [{ limit: MAX_RETRY_LIMIT + 1 }, /retry.limit must be a whole number from 0 to 20/],
    [{ limit: 1, backoffSeconds: -1 }, /retry.backoffSeconds/],
    [
      { limit: 1, backoffSeconds: 20, maxBackoffSeconds: 10 },
      /maxBackoffSeconds \(10\) is less than retry.backoffSeconds \(20\)/
    ],
    ['3', /retry must be an object/]
  ] as const) {
    const found: string[] = []
    t.equal(parseRetry(raw, 'flow "a"', found), undefined, JSON.stringify(raw))
    t.match(found.join('\n'), expected)
  }
})

t.test('attempt names: the first is the flow\'s Job name, later ones end in the attempt; long names fit', async t => {
  t.equal(attemptJobName('jf', 'build', 1), 'jf-build')
  t.equal(attemptJobName('jf', 'build', 3), 'jf-build-3')
  const long = attemptJobName('a'.repeat(60), 'build', 12)
  t.ok(long.length <= 63)
  t.not(long, attemptJobName('a'.repeat(60), 'build', 13), 'different attempts, different names')
})

t.test('a flow named like another flow\'s attempt is refused', async t => {
  t.same(attemptNameClashes(['a', 'b', 'a-1', 'c-2']), [], 'a-1 is no attempt name; c-2 has no flow c')
  t.match(attemptNameClashes(['a', 'a-2']), [/flow "a-2" has the Job name of attempt 2 of flow "a"/])
})

t.test('backoff doubles from backoffSeconds up to maxBackoffSeconds; a run counts its retries from its first attempt ' +
  'or its rerun', async t => {
  const policy = { limit: 5, backoffSeconds: 10, maxBackoffSeconds: 60 }
  t.same([1, 2, 3, 4, 5].map(n => backoffSeconds(policy, n)), [10, 20, 40, 60, 60])
  const failed = (
    attempt: number,
    extra: Partial<JobRecord> = {}
  ): JobRecord => ({
    name: 'a',
    jobName: `x-a-${attempt}`,
    phase: 'Failed',
    completionTime: '2026-01-01T00:00:00Z',
    ...(attempt > 1 ? { attempt } : {}),
    ...extra
  })
  t.equal(retriesUsed([failed(1)]), 0)
  t.equal(retriesUsed([failed(1), failed(2), failed(3)]), 2)
  t.equal(retriesUsed([failed(1), failed(2), failed(3, { rerun: 'x' }), failed(4)]), 1, 'a rerun starts a new run')
  t.equal(retryDueAt(policy, 2, failed(1)), Date.parse('2026-01-01T00:00:20Z'))
  t.equal(retryDueAt(policy, 1, { name: 'a', jobName: 'x-a', phase: 'Failed' }), 0, 'no completion time: at once')
})
