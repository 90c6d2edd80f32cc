// `kubectl jobhooks submit --from jobflowtemplate/<name> -p key=value`: the JobFlow made of a
// template (its steps, its arguments with -p's values or the defaults, the label), printed with -o
// or created with one POST against the fake API server, and what it says when it cannot.
import t from 'tap'
import { parse } from 'yaml'
import type { KubeObject } from '../../../src/k8s/types.js'
import { jobFlowOf, parameterValues } from '../../../src/cli/kubectl/submit.js'
import { plugin } from '../../helpers/plugin.js'

const STEP = { jobTemplate: { template: { spec: { containers: [{ name: 'main', image: 'busybox:1.36' }] } } } }

/** A JobFlowTemplate `release` in team-a: build then test, an exit step, `tag` to give, `env` with a default. */
function releaseTemplate (): KubeObject {
  return {
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'JobFlowTemplate',
    metadata: { name: 'release', namespace: 'team-a' },
    spec: {
      arguments: [{ name: 'tag', description: 'the image tag' }, { name: 'env', value: 'dev' }],
      flows: [{ name: 'build', ...STEP }, { name: 'test', dependencies: ['build'], ...STEP }],
      onExit: [{ name: 'notify', ...STEP }]
    }
  }
}

const noParameters = new Map<string, string>()

t.test('jobFlowOf: the template\'s steps, each argument with its value, the label, a generated name', async t => {
  const template = releaseTemplate()
  const flow = jobFlowOf(template, { namespace: 'team-a', parameters: new Map([['tag', 'v1.2.3']]) })
  t.same(flow, {
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'JobFlow',
    metadata: { generateName: 'release-', namespace: 'team-a', labels: { 'jobhooks.io/jobflow-template': 'release' } },
    spec: {
      arguments: [{ name: 'tag', value: 'v1.2.3' }, { name: 'env', value: 'dev' }],
      flows: (template.spec as { flows: unknown }).flows,
      onExit: (template.spec as { onExit: unknown }).onExit
    }
  })
  const named = jobFlowOf(template, {
    namespace: 'team-b', name: 'release-1', parameters: new Map([['tag', ''], ['env', 'prod']])
  })
  t.same(named.metadata,
    { name: 'release-1', namespace: 'team-b', labels: { 'jobhooks.io/jobflow-template': 'release' } })
  t.same(named.spec.arguments, [{ name: 'tag', value: '' }, { name: 'env', value: 'prod' }], '-p wins, even empty')
  ;(named.spec.flows as Array<Record<string, unknown>>)[0]!.name = 'changed'
  t.equal((template.spec as { flows: Array<{ name: string }> }).flows[0]!.name, 'build', 'the template is untouched')
  const bare = releaseTemplate()
  bare.spec = { flows: [{ name: 'only', ...STEP }] }
  t.same(jobFlowOf(bare, { namespace: 'team-a', parameters: noParameters }).spec,
    { flows: [{ name: 'only', ...STEP }] }, 'no arguments and no exit steps: neither written')
})

t.test('jobFlowOf: what it refuses, naming the arguments', async t => {
  const make = (parameters: Record<string, string>, template = releaseTemplate()): unknown =>
    jobFlowOf(template, { namespace: 'team-a', parameters: new Map(Object.entries(parameters)) })
  t.throws(() => make({}), {
    message: 'error: jobflowtemplate.jobhooks.io/release: argument "tag" has no default: give it with -p tag=<value>'
  })
  const twoMissing = releaseTemplate()
  ;(twoMissing.spec as { arguments: unknown[] }).arguments.push({ name: 'region' })
  t.throws(() => make({}, twoMissing), {
    message: 'error: jobflowtemplate.jobhooks.io/release: arguments "tag", "region" have no default: give them ' +
      'with -p tag=<value> -p region=<value>'
  })
  t.throws(() => make({ tag: 'v1', tga: 'v1' }), {
    message: 'error: jobflowtemplate.jobhooks.io/release has no argument "tga" (its arguments: tag, env)'
  })
  const bare = releaseTemplate()
  bare.spec = { flows: [{ name: 'only', ...STEP }] }
  t.throws(() => make({ tag: 'v1' }, bare),
    { message: 'error: jobflowtemplate.jobhooks.io/release has no argument "tag" (it has none)' })
  const long = releaseTemplate()
  long.metadata.name = 'r'.repeat(64)
  t.throws(() => make({ tag: 'v1' }, long), { message: /is longer than 63 characters: it cannot be the value of/ })
})

t.test('parameterValues: key=value, the value as it is, the last of a key wins', async t => {
  t.same([...parameterValues(['tag=v1', 'expr=a=b', 'empty=', 'tag=v2'])],
    [['tag', 'v2'], ['expr', 'a=b'], ['empty', '']])
  t.throws(() => parameterValues(['tag']), { message: '-p takes key=value, not "tag"' })
  t.throws(() => parameterValues(['=v1']), { message: '-p takes key=value, not "=v1"' })
})

const posts = (requests: Array<{ method: string, url: string, body?: unknown }>): unknown[] =>
  requests.filter(r => r.method === 'POST').map(r => ({ url: r.url, body: r.body }))

t.test('submit --from jft/<name>: one POST of the JobFlow, the created name said as kubectl says it', async t => {
  const { run, fake } = await plugin(t, [releaseTemplate()])
  t.same(await run(['submit', '--from', 'jft/release', '-p', 'tag=v1.2.3']),
    { code: 0, out: 'jobflow.jobhooks.io/release-xxxx1 created\n', err: '' })
  t.same(posts(fake.requests), [{
    url: '/apis/jobhooks.io/v1alpha1/namespaces/team-a/jobflows',
    body: jobFlowOf(releaseTemplate(), { namespace: 'team-a', parameters: new Map([['tag', 'v1.2.3']]) })
  }])
  t.ok(fake.requests.some(r => r.method === 'GET' &&
    r.url === '/apis/jobhooks.io/v1alpha1/namespaces/team-a/jobflowtemplates/release'), 'the template read')
  t.equal(fake.requests.find(r => r.method === 'POST')?.contentType, 'application/json')
  const created = fake.objects.find(o => o.kind === 'JobFlow')
  t.equal(created?.metadata.labels?.['jobhooks.io/jobflow-template'], 'release', 'created, with the label')
  t.same(await run(['submit', '--from', 'jobflowtemplate/release', '-p', 'tag=v2', '--name', 'release-v2']),
    { code: 0, out: 'jobflow.jobhooks.io/release-v2 created\n', err: '' })
  t.same(await run(['submit', '--from', 'JobFlowTemplates/release', '-p', 'tag=v2', '--name', 'release-v2']), {
    code: 1, out: '', err: 'Error from server (AlreadyExists): jobflows.jobhooks.io "release-v2" already exists\n'
  })
})

t.test('submit -o yaml|json: the JobFlow printed, nothing created', async t => {
  const { run, fake } = await plugin(t, [releaseTemplate()])
  const expected = jobFlowOf(releaseTemplate(), { namespace: 'team-a', parameters: new Map([['tag', 'v1']]) })
  const yaml = await run(['submit', '--from', 'jft/release', '-p', 'tag=v1', '-o', 'yaml'])
  t.equal(yaml.code, 0, yaml.err)
  t.same(parse(yaml.out), expected)
  const json = await run(['submit', '--from', 'jft/release', '-p', 'tag=v1', '-o', 'json'])
  t.same(JSON.parse(json.out), expected)
  t.same(posts(fake.requests), [], 'no POST')
})

t.test('submit: usage errors, a missing template, no permission', async t => {
  const { run, fake } = await plugin(t, [releaseTemplate()])
  const usage = (message: string): string => `error: ${message}\nSee 'kubectl jobhooks --help' for usage.\n`
  const fromUsage = (from: string): string => usage(`--from takes jobflowtemplate/<name> or jft/<name>, not "${from}"`)
  const cases: Array<[string[], string]> = [
    [['submit'], usage('submit needs a template: submit --from jobflowtemplate/<name>')],
    [['submit', '--from', 'release'], fromUsage('release')],
    [['submit', '--from', 'jt/release'], fromUsage('jt/release')],
    [['submit', '--from', 'jft/'], fromUsage('jft/')],
    [['submit', '--from', 'jft/release', '-p', 'tag'], usage('-p takes key=value, not "tag"')],
    [['submit', '--from', 'jft/release', 'extra'],
      usage('submit takes no arguments, not extra: submit --from jft/<name>')],
    [['submit', '--from', 'jft/release', '-o', 'html'],
      usage('submit prints the JobFlow with -o yaml or -o json only')],
    [['get', 'jf', '-p', 'tag=v1'], usage('--from and -p are flags of submit')],
    [['submit', '--from', 'jft/release', '-p', 'nope=1'],
      'error: jobflowtemplate.jobhooks.io/release has no argument "nope" (its arguments: tag, env)\n'],
    [['submit', '--from', 'jft/release'],
      'error: jobflowtemplate.jobhooks.io/release: argument "tag" has no default: give it with -p tag=<value>\n'],
    [['submit', '--from', 'jft/nope'], 'Error from server (NotFound): jobflowtemplates.jobhooks.io "nope" not found\n']
  ]
  for (const [argv, err] of cases) t.same(await run(argv), { code: 1, out: '', err }, argv.join(' '))
  t.same(posts(fake.requests), [], 'nothing created')
  fake.deny = method => method === 'POST'
  t.same(await run(['submit', '--from', 'jft/release', '-p', 'tag=v1']), {
    code: 1,
    out: '',
    err: 'Error from server (Forbidden): jobflows.jobhooks.io is forbidden: User "tester" cannot create resource ' +
      '"jobflows" in API group "jobhooks.io" in the namespace "team-a"\n'
  })
  t.match((await run(['--help'])).out, /kubectl jobhooks submit --from jft\/<template> \[-p K=V …\]/, 'in the usage')
})
