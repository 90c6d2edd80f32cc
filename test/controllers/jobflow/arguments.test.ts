// spec.arguments: parsed with a clear answer for each mistake, named as variables every container
// gets (escaped for Kubernetes' $(VAR) expansion), and read by a `when` only as the spec gives them.
import t from 'tap'
import {
  argumentEnv, argumentEnvName, argumentsRead, argumentValues, parseArguments, unknownArguments
} from '../../../src/controllers/jobflow/arguments.js'

t.test('arguments are names and strings; each mistake is said', async t => {
  const problems: string[] = []
  t.same(parseArguments([{ name: 'release-tag', value: 'v1.2' }, { name: 'env', value: '' }], problems), [
    { name: 'release-tag', value: 'v1.2' }, { name: 'env', value: '' }
  ])
  t.same(problems, [])
  t.same(parseArguments(undefined, problems), [])
  const bad: string[] = []
  parseArguments([
    { name: '1st', value: 'x' },
    { name: 'count', value: 3 },
    { name: 'big', value: 'x'.repeat(5000) },
    { name: 'a-b', value: 'x' },
    { name: 'a_b', value: 'y' }
  ], bad)
  t.same(bad, [
    'spec.arguments[0].name must be a letter or _ then letters, digits, _ or - (at most 63)',
    'spec.arguments[1].value must be a string (quote numbers and booleans), not 3',
    'spec.arguments[2].value is 5,000 bytes, more than 4096',
    'spec.arguments[4]: "a_b" and "a-b" both make JOBHOOKS_ARG_A_B'
  ])
  const many: string[] = []
  parseArguments(Array.from({ length: 65 }, (_, i) => ({ name: `a${i}`, value: '' })), many)
  t.same(many, ['spec.arguments has 65 arguments, more than 64'])
  const notList: string[] = []
  parseArguments({ env: 'prod' }, notList)
  t.same(notList, ['spec.arguments must be a list of {name, value}'])
})

t.test('every container reads them as JOBHOOKS_ARG_<NAME>, as written', async t => {
  t.equal(argumentEnvName('release-tag'), 'JOBHOOKS_ARG_RELEASE_TAG')
  t.same(argumentEnv([{ name: 'cmd', value: 'echo $(HOME)' }]), [{ name: 'JOBHOOKS_ARG_CMD', value: 'echo $$(HOME)' }],
    'escaped: the container sees $(HOME), not the expansion')
  t.same(argumentValues([{ name: 'env', value: 'prod' }]), { env: 'prod' })
})

t.test('a when may read only the arguments the spec gives', async t => {
  t.same(argumentsRead("args.env == 'prod' && args['release-tag'] != '' && item.args.x"), ['env', 'release-tag'])
  const args = [{ name: 'env', value: 'prod' }]
  t.same(unknownArguments([{ name: 'deploy', when: "args.env == 'prod'" }], args), [])
  t.same(unknownArguments([{ name: 'deploy', when: 'args.region == "eu"' }, { name: 'other' }], args), [
    'flow "deploy": when reads args.region, which spec.arguments does not give'
  ])
})
