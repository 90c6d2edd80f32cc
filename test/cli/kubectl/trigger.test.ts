// `kubectl jobhooks trigger cjf <name>`: a run started now, as `kubectl create job --from=cronjob/…`:
// the JobFlow of the CronJobFlow's written-out template, or of the JobFlowTemplate it names (its
// arguments given or defaulted, as submit makes it), marked as the CronJobFlow's child and as
// started by hand; created with one POST against the fake API server or printed with -o, and what
// it says for another kind, a missing argument or a missing template.
import t from 'tap'
import { parse } from 'yaml'
import type { KubeObject } from '../../../src/k8s/types.js'
import { cronJobFlowObjects, plugin, runningFlow } from '../../helpers/plugin.js'

const STEP = { jobTemplate: { template: { spec: { containers: [{ name: 'main', image: 'busybox:1.36' }] } } } }
const COLLECTION = '/apis/jobhooks.io/v1alpha1/namespaces/team-a/jobflows'
/** NOW (2026-01-02T03:05:00Z) in unix seconds. */
const NOW_SECONDS = 1767323100

const posts = (requests: Array<{ method: string, url: string, body?: unknown }>): unknown[] =>
  requests.filter(r => r.method === 'POST').map(r => ({ url: r.url, body: r.body }))

const owner = (name: string): Record<string, unknown> => ({
  apiVersion: 'jobhooks.io/v1alpha1',
  kind: 'CronJobFlow',
  name,
  uid: `uid-${name}`,
  controller: true,
  blockOwnerDeletion: true
})

/** The run `trigger cjf nightly` makes of nightly's written-out template. */
function nightlyRun (name: string): Record<string, unknown> {
  return {
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'JobFlow',
    metadata: {
      name,
      namespace: 'team-a',
      labels: { team: 'a', 'jobhooks.io/cronjobflow': 'nightly', 'controller-uid': 'uid-nightly' },
      annotations: { 'example.com/owner': 'ops', 'jobhooks.io/instantiate': 'manual' },
      ownerReferences: [owner('nightly')]
    },
    spec: { flows: [{ name: 'report', ...STEP }] }
  }
}

/** The JobFlowTemplate `release`: `tag` to give, `env` defaulting to dev, an exit step. */
function releaseTemplate (): KubeObject {
  return {
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'JobFlowTemplate',
    metadata: { name: 'release', namespace: 'team-a' },
    spec: {
      arguments: [{ name: 'tag' }, { name: 'env', value: 'dev' }],
      flows: [{ name: 'build', ...STEP }, { name: 'test', dependencies: ['build'], ...STEP }],
      onExit: [{ name: 'notify', ...STEP }]
    }
  }
}

/** A CronJobFlow running `release` with these arguments. */
function byReference (name: string, args?: Array<{ name: string, value: string }>): KubeObject {
  return {
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'CronJobFlow',
    metadata: { name, namespace: 'team-a', uid: `uid-${name}` },
    spec: {
      schedule: '@daily',
      jobFlowTemplateRef: { name: 'release', ...(args !== undefined ? { arguments: args } : {}) }
    }
  }
}

t.test('trigger cjf <name>: one POST of the run of its written-out template, named for now', async t => {
  const { run, fake } = await plugin(t, cronJobFlowObjects())
  const name = `nightly-manual-${NOW_SECONDS}`
  t.same(await run(['trigger', 'cjf', 'nightly']), { code: 0, out: `jobflow.jobhooks.io/${name} created\n`, err: '' })
  t.same(posts(fake.requests), [{ url: COLLECTION, body: nightlyRun(name) }])
  t.equal(fake.requests[0]?.url, '/apis/jobhooks.io/v1alpha1/namespaces/team-a/cronjobflows/nightly', 'read first')
  t.same(await run(['trigger', 'cronjobflow', 'nightly', '--name', 'nightly-now']),
    { code: 0, out: 'jobflow.jobhooks.io/nightly-now created\n', err: '' })
  t.same(posts(fake.requests)[1], { url: COLLECTION, body: nightlyRun('nightly-now') }, '--name names it')
  const rows = (await run(['get', 'cjf', 'nightly'])).out.split('\n')
  t.match(rows.find(row => row.startsWith(name)), /^\S+ +Pending +- +manual +- +-$/,
    'get draws it as a run started by hand')
  t.same(await run(['trigger', 'cjf', 'nightly', '--name', 'nightly-now']), {
    code: 1, out: '', err: 'Error from server (AlreadyExists): jobflows.jobhooks.io "nightly-now" already exists\n'
  })
})

t.test('trigger cjf <name> -o yaml|json: the run printed, nothing created', async t => {
  const { run, fake } = await plugin(t, cronJobFlowObjects())
  const yaml = await run(['trigger', 'cjf', 'nightly', '-o', 'yaml'])
  t.equal(yaml.code, 0, yaml.err)
  t.same(parse(yaml.out), nightlyRun(`nightly-manual-${NOW_SECONDS}`))
  const json = await run(['trigger', 'cjf', 'nightly', '--name', 'x', '-o', 'json'])
  t.same(JSON.parse(json.out), nightlyRun('x'))
  t.same(posts(fake.requests), [], 'no POST')
})

t.test('trigger cjf <name> of a JobFlowTemplate: made as submit makes it, the reference\'s arguments', async t => {
  const { run, fake } = await plugin(t, [releaseTemplate(), byReference('weekly', [{ name: 'tag', value: 'v1.2.3' }])])
  t.same(await run(['trigger', 'cjf', 'weekly', '--name', 'weekly-1']),
    { code: 0, out: 'jobflow.jobhooks.io/weekly-1 created\n', err: '' })
  t.ok(fake.requests.some(r => r.method === 'GET' &&
    r.url === '/apis/jobhooks.io/v1alpha1/namespaces/team-a/jobflowtemplates/release'), 'the template read')
  const spec = releaseTemplate().spec as Record<string, unknown>
  t.same(posts(fake.requests), [{
    url: COLLECTION,
    body: {
      apiVersion: 'jobhooks.io/v1alpha1',
      kind: 'JobFlow',
      metadata: {
        name: 'weekly-1',
        namespace: 'team-a',
        labels: {
          'jobhooks.io/jobflow-template': 'release', 'jobhooks.io/cronjobflow': 'weekly', 'controller-uid': 'uid-weekly'
        },
        annotations: { 'jobhooks.io/instantiate': 'manual' },
        ownerReferences: [owner('weekly')]
      },
      spec: {
        arguments: [{ name: 'tag', value: 'v1.2.3' }, { name: 'env', value: 'dev' }],
        flows: spec.flows,
        onExit: spec.onExit
      }
    }
  }], 'tag as given, env its default')
  const both = await plugin(t, [releaseTemplate(),
    byReference('prod', [{ name: 'env', value: 'prod' }, { name: 'tag', value: 'v2' }])])
  const printed = parse((await both.run(['trigger', 'cjf', 'prod', '-o', 'yaml'])).out)
  t.same(printed.spec.arguments, [{ name: 'tag', value: 'v2' }, { name: 'env', value: 'prod' }],
    'every argument given: in the template\'s order')
})

t.test('trigger cjf <name> of a JobFlowTemplate: a missing argument, an unknown one, no template', async t => {
  const { run, fake } = await plugin(t, [releaseTemplate(), byReference('bare'),
    byReference('typo', [{ name: 'tag', value: 'v1' }, { name: 'tga', value: 'v1' }])])
  t.same(await run(['trigger', 'cjf', 'bare']), {
    code: 1,
    out: '',
    err: 'error: jobflowtemplate.jobhooks.io/release: argument "tag" has no default: give it in ' +
      'spec.jobFlowTemplateRef.arguments of cronjobflow.jobhooks.io/bare\n'
  })
  t.same(await run(['trigger', 'cjf', 'typo', '-o', 'yaml']), {
    code: 1,
    out: '',
    err: 'error: jobflowtemplate.jobhooks.io/release has no argument "tga" (its arguments: tag, env)\n'
  })
  fake.change(releaseTemplate(), 'DELETED')
  t.same(await run(['trigger', 'cjf', 'typo']),
    { code: 1, out: '', err: 'Error from server (NotFound): jobflowtemplates.jobhooks.io "release" not found\n' })
  t.same(posts(fake.requests), [], 'nothing created')
})

t.test('trigger: another kind, usage errors, a missing CronJobFlow, no permission', async t => {
  const { run, fake } = await plugin(t, [...cronJobFlowObjects(), runningFlow()])
  const usage = (message: string): string => `error: ${message}\nSee 'kubectl jobhooks --help' for usage.\n`
  const cases: Array<[string[], string]> = [
    [['trigger', 'jf', 'jobflow-example'], 'error: this command acts on CronJobFlow, not JobFlow\n'],
    [['trigger', 'dj', 'audit'], 'error: this command acts on CronJobFlow, not DaemonJob\n'],
    [['trigger', 'cronjobs', 'nightly'], 'error: the server doesn\'t have a resource type "cronjobs"\n'],
    [['trigger'], 'error: trigger needs a CronJobFlow: kubectl jobhooks trigger cjf <name>\n'],
    [['trigger', 'cjf'], 'error: trigger needs a name: kubectl jobhooks trigger cjf <name>\n'],
    [['trigger', 'cjf', 'nightly', 'weekly'], 'error: trigger takes one name, not nightly weekly\n'],
    [['trigger', 'cjf', 'nightly', '-o', 'html'],
      usage('trigger prints the JobFlow with -o yaml or -o json only')],
    [['trigger', 'cjf', 'nightly', '-p', 'tag=v1'], usage('--from and -p are flags of submit')],
    [['get', 'cjf', '--name', 'x'], usage('--name is a flag of submit and trigger')],
    [['trigger', 'cjf', 'nope'], 'Error from server (NotFound): cronjobflows.jobhooks.io "nope" not found\n']
  ]
  for (const [argv, err] of cases) t.same(await run(argv), { code: 1, out: '', err }, argv.join(' '))
  t.same(posts(fake.requests), [], 'nothing created')
  fake.deny = method => method === 'POST'
  t.same(await run(['trigger', 'cjf', 'nightly']), {
    code: 1,
    out: '',
    err: 'Error from server (Forbidden): jobflows.jobhooks.io is forbidden: User "tester" cannot create resource ' +
      '"jobflows" in API group "jobhooks.io" in the namespace "team-a"\n'
  })
  const help = (await run(['--help'])).out
  t.match(help, 'kubectl jobhooks trigger cjf <name> [--name N] [-o yaml|json]', 'in the usage')
  t.match(help, 'a kind: jf, cjf, dj, ejob, opj, cls')
})
