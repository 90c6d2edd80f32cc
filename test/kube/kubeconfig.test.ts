// Kubeconfig files read as kubectl reads them (src/kube/kubeconfig.ts): which files, how a
// KUBECONFIG list merges, --context, and what is said when none can be used.
import t from 'tap'
import { delimiter, join } from 'node:path'
import { writeFileSync } from 'node:fs'
import { stringify } from 'yaml'
import { kubeconfigFiles, loadKubeconfig, readKubeconfigFiles } from '../../src/kube/kubeconfig.js'

interface Part { cluster?: string, server?: string, user?: string, context?: string, namespace?: string }

/** A kubeconfig with one cluster, user and context named as given, and maybe a current context. */
function file (dir: string, name: string, part: Part, current?: string): string {
  const path = join(dir, name)
  const cluster = part.cluster ?? 'c'
  const user = part.user ?? 'u'
  writeFileSync(path, stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster, cluster: { server: part.server ?? 'https://one:6443' } }],
    users: [{ name: user, user: { token: `token-of-${name}` } }],
    contexts: [{
      name: part.context ?? 'ctx',
      context: { cluster, user, ...(part.namespace !== undefined ? { namespace: part.namespace } : {}) }
    }],
    ...(current !== undefined ? { 'current-context': current } : {})
  }))
  return path
}

t.test('a KUBECONFIG list merges as kubectl merges it: the first to name a thing wins', async t => {
  const dir = t.testdir({})
  const first = file(dir, 'first', { server: 'https://first:6443' })
  const second = file(dir, 'second', { server: 'https://second:6443', context: 'other', namespace: 'b' }, 'other')
  const merged = await readKubeconfigFiles([first, second])
  t.equal(merged.getCluster('c')?.server, 'https://first:6443', 'the cluster named in both is the first file\'s')
  t.same(merged.contexts.map(c => c.name), ['ctx', 'other'])
  t.equal(merged.getCurrentContext(), 'other', 'the current context: the first file that sets one')
  t.equal(merged.getCurrentUser()?.token, 'token-of-first', 'the user named in both is the first file\'s')

  const loaded = await loadKubeconfig({ env: { KUBECONFIG: [first, join(dir, 'absent'), second].join(delimiter) } })
  t.equal(loaded.server.href, 'https://first:6443/', 'a file of the list that does not exist is skipped')
  t.equal(loaded.contextNamespace, 'b')
  t.equal(loaded.source, [first, second].join(delimiter))
})

t.test('--kubeconfig, then $KUBECONFIG, then ~/.kube/config; --context', async t => {
  const dir = t.testdir({})
  const one = file(dir, 'one', { context: 'a' }, 'a')
  const two = file(dir, 'two', { context: 'b', namespace: 'team-b' }, 'b')
  t.same(kubeconfigFiles({ kubeconfig: one, env: { KUBECONFIG: two } }), [one], '--kubeconfig first')
  t.same(kubeconfigFiles({ env: { KUBECONFIG: two } }), [two])
  t.throws(() => kubeconfigFiles({ kubeconfig: join(dir, 'none') }), /--kubeconfig .*none: no such file/)
  t.throws(() => kubeconfigFiles({ env: { KUBECONFIG: join(dir, 'none') } }), /none of KUBECONFIG=.*none exists/)
  const both = [one, two].join(delimiter)
  const chosen = await loadKubeconfig({ env: { KUBECONFIG: both }, context: 'b' })
  t.equal(chosen.contextNamespace, 'team-b')
  await t.rejects(loadKubeconfig({ env: { KUBECONFIG: both }, context: 'c' }),
    { message: 'context was not found for specified context: c' })
})

t.test('a kubeconfig that cannot be used says why', async t => {
  const dir = t.testdir({ 'broken.yaml': 'clusters: [', 'empty.yaml': 'apiVersion: v1\nkind: Config\n' })
  await t.rejects(loadKubeconfig({ kubeconfig: join(dir, 'broken.yaml') }), /broken\.yaml cannot be read/)
  await t.rejects(loadKubeconfig({ kubeconfig: join(dir, 'empty.yaml') }),
    /has no current context with a cluster and a user/)
  const bad = file(dir, 'bad', { server: 'not a url' }, 'ctx')
  await t.rejects(loadKubeconfig({ kubeconfig: bad }), /names no usable server \("not a url"\)/)
})
