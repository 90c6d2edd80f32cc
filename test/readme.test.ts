// Every curl example of the README and of docs/*.md, run as printed against the service as
// `npm start` serves it (no cluster credentials, the real clock) with the output compared to the
// page's: they pin the fixture's clock, so they stay true whatever the date. Needs curl and jq, as
// the examples do (.ci/run installs them); without them the test says so and skips. Every
// `npm run simulate` example too, and the README's examples against the headers they come from.
import t from 'tap'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseAllDocuments } from 'yaml'
import { promisify } from 'node:util'
import type { AddressInfo } from 'node:net'
import { buildApp } from '../src/app.js'
import { defaultHooksDir, loadScriptLibrary } from '../src/scripts/library.js'
import { lineAt, pages, ROOT } from './helpers/docs.js'
import { EXAMPLES_DIR, shellWords } from './helpers/example-promises.js'

const run = promisify(execFile)

/** An example of a page: `where` is `<file> line <n>`. */
interface Example {
  command: string
  output: string
  where: string
}

/** Each ```sh block whose commands are curl calls, with the fenced block right after it (what it prints). */
function curlExamples (file: string, text: string): Example[] {
  const examples: Example[] = []
  const block = /```sh\n((?:(?!```)[\s\S])*)```\n```[a-z]*\n((?:(?!```)[\s\S])*)```/g
  for (const match of text.matchAll(block)) {
    const [, command = '', output = ''] = match
    if (!command.trimStart().startsWith('curl ')) continue
    examples.push({
      command: command.trim(),
      output: output.trim(),
      where: `${file} line ${lineAt(text, match.index)}`
    })
  }
  return examples
}

async function has (tool: string): Promise<boolean> {
  return await run('sh', ['-c', `command -v ${tool}`]).then(
    () => true,
    () => false
  )
}

const tools = (await has('curl')) && (await has('jq'))
t.test(
  'every curl example of the README and docs/ prints what the page shows',
  { skip: tools ? false : 'curl and jq are needed to run the examples' },
  async t => {
    const examples = pages().flatMap(page => curlExamples(page.file, page.text))
    t.ok(examples.length >= 2, `${examples.length} curl examples`)
    t.ok(
      examples.some(e => e.where.startsWith('README.md ')),
      'the README has one'
    )
    const app = await buildApp({ scripts: loadScriptLibrary(defaultHooksDir()), logger: false })
    t.teardown(async () => await app.close())
    await app.listen({ host: '127.0.0.1', port: 0 })
    const port = (app.server.address() as AddressInfo).port
    for (const example of examples) {
      t.match(example.command, /x-jobhooks-now: \d{4}-/, `${example.where}: the example pins the fixture's clock`)
      const command = example.command.replaceAll('localhost:8080', `127.0.0.1:${port}`)
      const { stdout } = await run('sh', ['-c', command], { cwd: ROOT })
      t.equal(stdout.trim(), example.output, `${example.where}: the printed answer`)
    }
  }
)

/** Each ```sh block of one `kubectl jobhooks simulate …` line, with the block after it. */
function simulateExamples (file: string, text: string): Example[] {
  const examples: Example[] = []
  const block = /```sh\n(kubectl jobhooks simulate [^\n]*)\n```\n```[a-z]*\n((?:(?!```)[\s\S])*)```/g
  for (const match of text.matchAll(block)) {
    const [, command = '', output = ''] = match
    if (command.includes('--live') || command.includes('--kubeconfig')) continue
    examples.push({
      command: command.trim(),
      output: output.replace(/\s+$/, ''),
      where: `${file} line ${lineAt(text, match.index)}`
    })
  }
  return examples
}

/** Whether `excerpt`'s lines appear in `lines` in order, each run between `...` lines contiguous. */
function isExcerpt (excerpt: string, lines: string[]): boolean {
  let from = 0
  for (const chunk of excerpt.split(/^\.\.\.$/m).map(c =>
    c
      .split('\n')
      .map(l => l.trimEnd())
      .filter((l, i, all) => !(l === '' && (i === 0 || i === all.length - 1)))
  )) {
    if (chunk.length === 0) continue
    let found = -1
    for (let i = from; i + chunk.length <= lines.length && found < 0; i++) {
      if (chunk.every((l, j) => lines[i + j] === l)) found = i
    }
    if (found < 0) return false
    from = found + chunk.length
  }
  return true
}

t.test('every simulate example of the README and docs/ prints what the page shows', async t => {
  const { main } = await import('../src/cli/simulate.js')
  const examples = pages().flatMap(page => simulateExamples(page.file, page.text))
  t.ok(examples.length >= 5, `${examples.length} simulate examples`)
  const cwd = process.cwd()
  process.chdir(ROOT)
  t.teardown(() => process.chdir(cwd))
  for (const example of examples) {
    const out: string[] = []
    const code = await main(
      shellWords(example.command).slice(3),
      line => out.push(...line.split('\n')),
      () => {}
    )
    t.equal(code, 0, `${example.where}: ${example.command}`)
    const lines = out.map(l => l.trimEnd())
    t.ok(isExcerpt(example.output, lines), `${example.where}: the printed output is what it prints`, {
      found: lines.join('\n'),
      wanted: example.output
    })
  }
})

/** The comment lines an example file starts with, without their `#` and the blanks around. */
function headerLines (file: string): string[] {
  const lines: string[] = []
  for (const line of readFileSync(join(EXAMPLES_DIR, file), 'utf8').split('\n')) {
    if (!line.startsWith('#')) break
    lines.push(line.replace(/^#/, '').trim())
  }
  return lines
}

/** Whether `part` is a run of consecutive entries of `whole`. */
function isRun (part: string[], whole: string[]): boolean {
  for (let i = 0; i + part.length <= whole.length; i++) if (part.every((l, j) => whole[i + j] === l)) return true
  return false
}

t.test("the README's examples are quoted from the headers of manifests/examples, and cover every kind", async t => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const kinds = new Set<string>()
  let quoted = 0
  for (const match of readme.matchAll(/```console\n((?:(?!```)[\s\S])*)```/g)) {
    const block = (match[1] as string)
      .trimEnd()
      .split('\n')
      .map(l => l.trim())
    const where = `README.md line ${lineAt(readme, match.index)}`
    const file = block
      .map(l => /^\$ kubectl apply -f manifests\/examples\/([\w.-]+\.yaml)$/.exec(l)?.[1])
      .find(f => f !== undefined)
    if (file === undefined) continue
    quoted++
    t.ok(isRun(block, headerLines(file)), `${where}: the lines of ${file}'s header, as they are`, {
      wanted: headerLines(file).join('\n'),
      found: block.join('\n')
    })
    t.ok(
      block.some(l => l.startsWith('$ kubectl jobhooks simulate ')),
      `${where}: with its simulate line`
    )
    t.ok(
      block.some(l => l.startsWith('$ kubectl get ')),
      `${where}: with the kubectl get table it ends with`
    )
    for (const doc of parseAllDocuments(readFileSync(join(EXAMPLES_DIR, file), 'utf8'))) {
      const object = doc.toJS() as { apiVersion?: string; kind?: string } | null
      if (object?.apiVersion?.startsWith('jobhooks.io/') === true && object.kind !== undefined) kinds.add(object.kind)
    }
  }
  t.ok(quoted >= 5, `${quoted} examples quoted`)
  t.same(
    [...kinds].sort(),
    ['CollaSet', 'DaemonJob', 'EphemeralJob', 'JobFlow', 'JobTemplate', 'OperationJob'],
    'an example of every kind'
  )
})
