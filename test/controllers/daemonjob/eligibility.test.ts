// Which nodes get a Job: every rule of eligibility, one case at a time.
import t from 'tap'
import type { NodeSelectorTerm, PodSpec } from 'kubernetes-types/core/v1.js'
import type { KubeObject } from '../../../src/k8s/types.js'
import {
  affinityProblems, ineligibility, matchesRequirement, tolerates
} from '../../../src/controllers/daemonjob/eligibility.js'
import { parseExcludeNodeList } from '../../../src/controllers/daemonjob/spec.js'

function node (
  name: string,
  extra: { labels?: Record<string, string>, unschedulable?: boolean, taints?: unknown[] } = {}
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...extra.labels } },
    spec: {
      ...(extra.unschedulable === true ? { unschedulable: true } : {}),
      ...(extra.taints !== undefined ? { taints: extra.taints } : {})
    },
    status: { conditions: [{ type: 'Ready', status: 'True' }] }
  }
}
function pod (extra: Partial<PodSpec> = {}): PodSpec {
  return { containers: [{ name: 'main', image: 'busybox' }], ...extra }
}
const none = new Set<string>()
const required = (...terms: unknown[]): Partial<PodSpec> => ({
  affinity: {
    nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms as NodeSelectorTerm[] } }
  }
})

t.test('excludeNodeList: comma-separated, blanks around names ignored, empty entries dropped', async t => {
  const problems: string[] = []
  t.same([...parseExcludeNodeList('node-1 , node-2', problems)], ['node-1', 'node-2'])
  t.same([...parseExcludeNodeList(' a,,b ,\tc\n, ', problems)], ['a', 'b', 'c'])
  t.same([...parseExcludeNodeList('', problems)], [])
  t.same([...parseExcludeNodeList(undefined, problems)], [])
  t.same(problems, [])
  parseExcludeNodeList(['node-1'], problems)
  t.match(problems[0], /excludeNodeList must be one string of node names separated by commas .* not a list/)
  t.equal(ineligibility(node('node-1'), pod(), new Set(['node-1'])), 'excluded by excludeNodeList')
  t.equal(ineligibility(node('node-10'), pod(), new Set(['node-1'])), undefined, 'names match whole, not by prefix')
})

t.test('a plain node with a plain pod is eligible', async t => {
  t.equal(ineligibility(node('n'), pod(), none), undefined)
})

t.test('nodeSelector: every label must match', async t => {
  const p = pod({ nodeSelector: { disk: 'ssd', zone: 'a' } })
  t.equal(ineligibility(node('n', { labels: { disk: 'ssd', zone: 'a' } }), p, none), undefined)
  t.equal(ineligibility(node('n', { labels: { disk: 'ssd' } }), p, none), 'does not match nodeSelector zone=a')
  t.equal(
    ineligibility(node('n', { labels: { disk: 'hdd', zone: 'a' } }), p, none),
    'does not match nodeSelector disk=ssd'
  )
})

t.test('nodeName in the template (or from globalParams) allows only that node', async t => {
  t.equal(ineligibility(node('a'), pod({ nodeName: 'a' }), none), undefined)
  t.equal(ineligibility(node('b'), pod({ nodeName: 'a' }), none), 'the pod template names node a')
})

t.test('required node affinity: terms are ORed, expressions ANDed', async t => {
  const p = pod(required(
    { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }, { key: 'disk', operator: 'Exists' }] },
    { matchExpressions: [{ key: 'role', operator: 'In', values: ['batch'] }] }
  ))
  t.equal(ineligibility(node('n', { labels: { zone: 'a', disk: 'x' } }), p, none), undefined, 'first term')
  t.equal(ineligibility(node('n', { labels: { role: 'batch' } }), p, none), undefined, 'second term')
  t.equal(
    ineligibility(node('n', { labels: { zone: 'a' } }), p, none),
    'does not match the required node affinity',
    'first term half matched'
  )
  t.equal(
    ineligibility(node('n', { labels: { zone: 'c', disk: 'x' } }), p, none),
    'does not match the required node affinity'
  )
  t.equal(
    ineligibility(node('n'), pod(required({})), none),
    'does not match the required node affinity',
    'an empty term matches no node'
  )
})

t.test('every operator on labels', async t => {
  const cases: Array<[string, string[] | undefined, string | undefined, boolean]> = [
    ['In', ['a', 'b'], 'a', true], ['In', ['a'], 'c', false], ['In', ['a'], undefined, false],
    ['NotIn', ['a'], 'c', true], ['NotIn', ['a'], 'a', false], ['NotIn', ['a'], undefined, true],
    ['Exists', undefined, '', true], ['Exists', undefined, undefined, false],
    ['DoesNotExist', undefined, undefined, true], ['DoesNotExist', undefined, 'x', false],
    ['Gt', ['5'], '6', true], ['Gt', ['5'], '5', false], ['Gt', ['5'], 'x', false], ['Gt', ['5'], undefined, false],
    ['Lt', ['5'], '4', true], ['Lt', ['5'], '-1', true], ['Lt', ['5'], '5', false], ['Lt', ['5'], '40', false],
    ['Bogus', ['a'], 'a', false]
  ]
  for (const [operator, values, value, expected] of cases) {
    t.equal(
      matchesRequirement({ key: 'k', operator, ...(values !== undefined ? { values } : {}) }, value),
      expected,
      `${operator} ${JSON.stringify(values)} on ${JSON.stringify(value)}`
    )
  }
})

t.test('matchFields on metadata.name', async t => {
  const p = pod(required({ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['a', 'b'] }] }))
  t.equal(ineligibility(node('a'), p, none), undefined)
  t.equal(ineligibility(node('c'), p, none), 'does not match the required node affinity')
  const notIn = pod(required({ matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['a'] }] }))
  t.equal(ineligibility(node('a'), notIn, none), 'does not match the required node affinity')
  t.equal(ineligibility(node('b'), notIn, none), undefined)
  const both = pod(required({
    matchFields: [{ key: 'metadata.name', operator: 'In', values: ['a'] }],
    matchExpressions: [{ key: 'zone', operator: 'In', values: ['x'] }]
  }))
  t.equal(
    ineligibility(node('a', { labels: { zone: 'x' } }), both, none),
    undefined,
    'fields and expressions of one term are ANDed'
  )
  t.equal(ineligibility(node('a'), both, none), 'does not match the required node affinity')
})

t.test('preferred affinity does not restrict', async t => {
  const p = pod({
    affinity: {
      nodeAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          { weight: 1, preference: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['x'] }] } }
        ]
      }
    }
  })
  t.equal(ineligibility(node('n'), p, none), undefined)
})

t.test('a cordoned node is skipped unless the pod tolerates unschedulable', async t => {
  const cordoned = node(
    'n',
    { unschedulable: true, taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }] }
  )
  t.equal(ineligibility(cordoned, pod(), none), 'cordoned (spec.unschedulable)')
  t.equal(
    ineligibility(node('n', { unschedulable: true }), pod(), none),
    'cordoned (spec.unschedulable)',
    'even without the taint'
  )
  t.equal(
    ineligibility(
      cordoned,
      pod({ tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }] }),
      none
    ),
    undefined
  )
  t.equal(
    ineligibility(cordoned, pod({ tolerations: [{ operator: 'Exists' }] }), none),
    undefined,
    'tolerate-everything'
  )
  t.equal(
    ineligibility(
      cordoned,
      pod({ tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoExecute' }] }),
      none
    ),
    'cordoned (spec.unschedulable)',
    'wrong effect'
  )
})

t.test('NoSchedule and NoExecute taints must be tolerated; PreferNoSchedule does not matter', async t => {
  const gpu = node('n', { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] })
  t.equal(ineligibility(gpu, pod(), none), 'taint dedicated=gpu:NoSchedule is not tolerated')
  t.equal(
    ineligibility(
      gpu,
      pod({ tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }] }),
      none
    ),
    undefined
  )
  t.equal(
    ineligibility(gpu, pod({ tolerations: [{ key: 'dedicated', value: 'gpu' }] }), none),
    undefined,
    'Equal is the default operator; no effect matches all'
  )
  t.equal(
    ineligibility(gpu, pod({ tolerations: [{ key: 'dedicated', value: 'fpga' }] }), none),
    'taint dedicated=gpu:NoSchedule is not tolerated',
    'another value'
  )
  t.equal(
    ineligibility(gpu, pod({ tolerations: [{ key: 'dedicated', operator: 'Exists' }] }), none),
    undefined,
    'Exists ignores the value'
  )
  const noExecute = node('n', { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }] })
  t.equal(ineligibility(noExecute, pod(), none), 'taint node.kubernetes.io/not-ready:NoExecute is not tolerated')
  t.equal(
    ineligibility(
      noExecute,
      pod({
        tolerations: [
          { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }
        ]
      }),
      none
    ),
    undefined
  )
  t.equal(ineligibility(node('n', { taints: [{ key: 'soft', effect: 'PreferNoSchedule' }] }), pod(), none), undefined)
  const two = node('n', { taints: [{ key: 'a', effect: 'NoSchedule' }, { key: 'b', effect: 'NoExecute' }] })
  t.equal(
    ineligibility(two, pod({ tolerations: [{ key: 'a', operator: 'Exists' }] }), none),
    'taint b:NoExecute is not tolerated',
    'every taint, not just one'
  )
  t.equal(ineligibility(two, pod({ tolerations: [{ operator: 'Exists' }] }), none), undefined)
})

t.test('toleration semantics', async t => {
  const taint = { key: 'k', value: 'v', effect: 'NoSchedule' }
  t.ok(tolerates({ operator: 'Exists' }, taint), 'empty key with Exists tolerates everything')
  t.notOk(tolerates({ operator: 'Equal', value: 'v' }, taint), 'empty key with Equal tolerates nothing')
  t.ok(tolerates({ key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule' }, taint))
  t.ok(tolerates({ key: 'k', operator: 'Exists', effect: '' }, taint), 'an empty effect matches all effects')
  t.notOk(tolerates({ key: 'k', operator: 'Exists', effect: 'NoExecute' }, taint))
  t.notOk(tolerates({ key: 'other', operator: 'Exists' }, taint))
  t.ok(tolerates({ key: 'k' }, { key: 'k', effect: 'NoSchedule' }), 'no value on either side is equal')
  t.notOk(tolerates({ key: 'k', operator: 'Bogus' }, taint))
})

t.test('the checks run in order and name the first reason', async t => {
  const everything = node('node-1', { unschedulable: true, taints: [{ key: 'x', effect: 'NoSchedule' }] })
  t.equal(
    ineligibility(everything, pod({ nodeSelector: { a: 'b' } }), new Set(['node-1'])),
    'excluded by excludeNodeList'
  )
  t.equal(ineligibility(everything, pod({ nodeSelector: { a: 'b' } }), none), 'does not match nodeSelector a=b')
})

t.test('node constraints the API server would refuse are spec problems', async t => {
  t.same(
    affinityProblems(pod(required({ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] })), 's'),
    []
  )
  const bad: Array<[Partial<PodSpec>, RegExp]> = [
    [required(), /required node affinity needs at least one nodeSelectorTerm/],
    [
      required({ matchExpressions: [{ key: 'zone', operator: 'Near', values: ['a'] }] }),
      /nodeSelectorTerms\[0\]\.matchExpressions\[0\]: unknown operator "Near"/
    ],
    [
      required({ matchExpressions: [{ key: 'n', operator: 'Gt', values: ['five'] }] }),
      /Gt needs exactly one integer value/
    ],
    [required({ matchExpressions: [{ key: 'n', operator: 'In', values: [] }] }), /In needs at least one value/],
    [required({ matchExpressions: [{ key: 'n', operator: 'Exists', values: ['x'] }] }), /Exists takes no values/],
    [
      required({ matchFields: [{ key: 'metadata.labels', operator: 'In', values: ['x'] }] }),
      /matchFields supports only metadata.name/
    ],
    [
      required({ matchFields: [{ key: 'metadata.name', operator: 'Exists' }] }),
      /unknown operator "Exists" \(use In, NotIn\)/
    ],
    [{ nodeSelector: { a: 1 } as unknown as Record<string, string> }, /nodeSelector must map label names to strings/]
  ]
  for (const [extra, message] of bad) t.match(affinityProblems(pod(extra), 's').join('; '), message)
})
