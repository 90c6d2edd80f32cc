// Quantities compared by amount: the API server's canonical spelling against a template's.
import t from 'tap'
import { parseQuantity, sameQuantity, sameResources } from '../../src/k8s/quantity.js'

t.test('quantities read as amounts', async t => {
  const cases: Array<[string, number]> = [
    ['1', 1], ['500m', 0.5], ['0.5', 0.5], ['1k', 1000], ['1Ki', 1024], ['1Gi', 2 ** 30], ['2e3', 2000],
    ['1.5M', 1.5e6], ['100n', 1e-7], ['.5', 0.5]
  ]
  for (const [text, amount] of cases) t.ok(Math.abs((parseQuantity(text) ?? NaN) - amount) <= amount * 1e-12, text)
  for (const bad of ['', 'abc', '1Kb', '1 Gi', '--1', 'Gi']) t.equal(parseQuantity(bad), undefined, JSON.stringify(bad))
})

t.test('resources compared by amount, requests and limits alike', async t => {
  t.ok(sameQuantity('0.5', '500m'))
  t.notOk(sameQuantity('1Gi', '1G'))
  t.ok(sameResources({ requests: { cpu: '0.5', memory: '1Gi' } }, { requests: { cpu: '500m', memory: '1024Mi' } }))
  t.notOk(sameResources({ requests: { cpu: '1' } }, { requests: { cpu: '2' } }))
  t.notOk(sameResources({ limits: { cpu: '1' } }, {}), 'a limit added')
  t.ok(sameResources(undefined, {}), 'none and empty')
})
