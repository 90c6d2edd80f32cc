import t from 'tap'
import { isScriptName, loadScriptLibrary, defaultHooksDir } from '../../src/scripts/library.js'

t.test('the shipped scripts load from hooks/ and documentation does not', async t => {
  const library = loadScriptLibrary(defaultHooksDir())
  t.same([...library.keys()], ['http-check.sh', 'retry.sh', 'wait-for.sh'])
  for (const content of library.values()) t.match(content, /^#!\/bin\/sh\n/)
})

t.test('a folder with a badly named file refuses to load', async t => {
  const dir = t.testdir({ 'ok.sh': 'echo', '.hidden': 'echo', 'README.md': '# docs' })
  t.throws(() => loadScriptLibrary(dir), /hooks\/.hidden: a shipped script needs a plain file name/)
  t.same([...loadScriptLibrary(t.testdir({ 'ok.sh': 'echo', sub: {} })).keys()], ['ok.sh'], 'folders are not scripts')
})

t.test('script names are plain file names', async t => {
  for (const ok of ['a', 'wait-for.sh', 'A_b.1']) t.ok(isScriptName(ok), ok)
  for (const bad of ['', '.a', '../a', 'a/b', 'a b', '-x', 'a'.repeat(254)]) t.notOk(isScriptName(bad), bad)
})
