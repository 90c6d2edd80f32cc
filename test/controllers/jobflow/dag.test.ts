import t from 'tap'
import { orderByDependencies } from '../../../src/controllers/jobflow/dag.js'

const node = (name: string, ...dependencies: string[]) => ({ name, dependencies })

t.test('a DAG is ordered by dependencies, ties in spec order', async t => {
  const { order, problems } = orderByDependencies(
    [node('job1'), node('job2', 'job1'), node('job3', 'job1', 'job2'), node('job4'), node('job5', 'job4', 'job2')]
  )
  t.same(problems, [])
  t.same(order.map(n => n.name), ['job1', 'job4', 'job2', 'job3', 'job5'])
  t.same(
    orderByDependencies([node('a', 'b', 'b'), node('b')]).order.map(n => n.name),
    ['b', 'a'],
    'a repeated dependency counts once'
  )
})

t.test('cycles, self-dependencies and unknown names are named', async t => {
  t.same(
    orderByDependencies([node('a', 'c'), node('b', 'a'), node('c', 'b'), node('d')]).problems,
    ['dependency cycle: a → c → b → a']
  )
  t.same(orderByDependencies([node('a', 'a')]).problems, ['flow "a" depends on itself'])
  t.same(orderByDependencies([node('a', 'zz')]).problems, ['flow "a" depends on unknown flow "zz"'])
  const tail = orderByDependencies([node('x', 'a'), node('a', 'b'), node('b', 'a')])
  t.same(tail.problems, ['dependency cycle: a → b → a'], 'a node hanging off a cycle is not part of it')
})

t.test('ordering is linear in nodes and edges (10,000 flows in a chain)', async t => {
  const chain = Array.from({ length: 10_000 }, (_, i) => node(`n${i}`, ...(i > 0 ? [`n${i - 1}`] : [])))
  const { order, problems } = orderByDependencies(chain.reverse())
  t.same(problems, [])
  t.equal(order[0]?.name, 'n0')
  t.equal(order.at(-1)?.name, 'n9999')
})
