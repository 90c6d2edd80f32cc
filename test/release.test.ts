// One version everywhere a user or a tool reads it: package.json is the source (jobhooks_build_info
// reports it, test/app.test.ts), and every copy of it is held equal here, so a release is one
// edit that this test completes the list of.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse, parseAllDocuments } from 'yaml'

const ROOT = join(import.meta.dirname, '..')
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8')
const version = String(JSON.parse(read('package.json')).version)

t.test('the version is a release version', async t => {
  t.match(version, /^\d+\.\d+\.\d+$/, 'MAJOR.MINOR.PATCH')
})

t.test('every copy of the version equals package.json', async t => {
  const lock = JSON.parse(read('package-lock.json'))
  t.equal(lock.version, version, 'package-lock.json')
  t.equal(lock.packages[''].version, version, 'package-lock.json, the root package')

  const chart = parse(read('charts/jobhooks/Chart.yaml'))
  t.equal(String(chart.version), version, 'the chart\'s version')
  t.equal(String(chart.appVersion), version, 'the chart\'s appVersion')
  t.equal(String(parse(read('charts/jobhooks/values.yaml')).image.tag), version, 'the chart\'s default image tag')

  const kustomization = parse(read('manifests/kustomization.yaml'))
  t.equal(String(kustomization.images[0].newTag), version, 'the image tag kubectl apply -k installs')
  const deployment = parseAllDocuments(read('manifests/deploy/deployment.yaml')).map(d => d.toJS())[0]
  t.equal(String(deployment.metadata.labels['app.kubernetes.io/version']), version, 'the Deployment\'s version label')
})

t.test('the documents name this version wherever they name one of the image', async t => {
  for (const path of [
    'README.md',
    'Dockerfile',
    'charts/jobhooks/README.md',
    'manifests/kustomization.yaml',
    'docs/operations.md',
    'docs/development.md'
  ]) {
    const named = [...read(path).matchAll(/jobhooks:(\d+\.\d+\.\d+)/g)].map(m => m[1])
    t.same(
      named.filter(v => v !== version),
      [],
      `${path} names no other version of the image`
    )
  }
})

t.test('the changelog has this release, each with an Upgrading note', async t => {
  const changelog = read('CHANGELOG.md')
  const releases = [...changelog.matchAll(/^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$/gm)].map(m => m[1])
  t.equal(releases[0], version, 'the newest release is this version')
  const sections = changelog.split(/^## /m).slice(1).filter(s => /^\[\d/.test(s))
  t.equal(sections.length, releases.length, 'every release heading is well formed')
  for (const section of sections) {
    t.match(section, /^### Upgrading$/m, `${section.split('\n')[0]} says what a user must do to upgrade`)
  }
})
