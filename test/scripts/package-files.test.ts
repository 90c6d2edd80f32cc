// The package's own files as the code reads them while it runs (outside a single executable: from
// the package folder; the single-file plugin's embedded copy is run by test/e2e/plugin-binary.e2e.ts).
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { packageFolder, packageRoot, packageText, packageVersion } from '../../src/scripts/package-files.js'

const ROOT = join(import.meta.dirname, '..', '..')

t.test('the package root holds package.json, and its version is read from it', async t => {
  t.equal(packageRoot(), ROOT)
  const json = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }
  t.equal(packageVersion(), json.version)
  t.equal(packageText('package.json'), readFileSync(join(ROOT, 'package.json'), 'utf8'))
})

t.test('a folder: its regular files by name, sorted; a file of it as text', async t => {
  const crds = packageFolder('manifests/crds')
  t.same(crds, readdirSync(join(ROOT, 'manifests', 'crds')).sort())
  t.ok(crds.includes('jobflow.yaml'))
  t.match(packageText('manifests/crds/jobflow.yaml'), /kind: CustomResourceDefinition/)
  t.ok(packageFolder('hooks').includes('retry.sh'))
  t.throws(() => packageFolder('no/such/folder'), /ENOENT/)
})
