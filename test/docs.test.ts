// The documentation holds together: its links lead somewhere, the repository paths it names
// exist, and every place in the code that points a reader at a section of a page names a heading
// that page has.
import t from 'tap'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, normalize, sep } from 'node:path'
import { anchors, headings, lineAt, pages, ROOT, withoutFences } from './helpers/docs.js'

/** The text with inline code and HTML comments blanked, so that neither is read as a link. */
function prose (text: string): string {
  return withoutFences(text)
    .replace(/<!--[\s\S]*?-->/g, m => m.replace(/[^\n]/g, ' '))
    .replace(/`[^`\n]*`/g, m => ' '.repeat(m.length))
}

t.test(
  'every relative link of the README and docs/ leads to a file of the repository, and every #anchor to a heading',
  async t => {
    let links = 0
    for (const page of pages()) {
      for (const match of prose(page.text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const target = match[1] as string
        if (/^[a-z][a-z+.-]*:/i.test(target)) continue // https:, mailto:
        links++
        const where = `${page.file} line ${lineAt(page.text, match.index)}: ${target}`
        const [path = '', anchor] = target.split('#')
        const file = path === '' ? page.file : normalize(join(dirname(page.file), decodeURIComponent(path)))
        if (file.startsWith('..') || file.startsWith(sep)) {
          t.fail(`${where} leaves the repository`)
          continue
        }
        if (!existsSync(join(ROOT, file))) {
          t.fail(`${where}: no ${file}`)
          continue
        }
        if (anchor === undefined) continue
        if (!file.endsWith('.md')) {
          t.fail(`${where}: an anchor into a file that is not Markdown`)
          continue
        }
        t.ok(anchors(readFileSync(join(ROOT, file), 'utf8')).has(anchor), `${where}: ${file} has a heading #${anchor}`)
      }
    }
    t.ok(links >= 50, `${links} relative links`)
  }
)

t.test('every repository path the README and docs/ name in code exists', async t => {
  let paths = 0
  for (const page of pages()) {
    const text = withoutFences(page.text)
    for (const match of text.matchAll(/`((?:src|test|manifests|hooks|bench|docs|\.ci)\/[^`\s]*)`/g)) {
      const path = match[1] as string
      if (/[<>*…]/.test(path)) continue // a pattern, not a path: src/controllers/<kind>/
      paths++
      t.ok(existsSync(join(ROOT, path)), `${page.file} line ${lineAt(page.text, match.index)}: ${path} exists`)
    }
  }
  t.ok(paths >= 50, `${paths} paths`)
})

/** The repository's own text files a reader may be pointed from: code, manifests, tests, docs. */
function sources (): string[] {
  const files: string[] = ['README.md', 'Dockerfile', 'package.json', '.ci/run'].filter(f => existsSync(join(ROOT, f)))
  const skip = new Set(['node_modules', 'dist', 'fixtures', '.tap', 'coverage', '.scratch'])
  const walk = (dir: string): void => {
    for (const name of readdirSync(join(ROOT, dir))) {
      const path = join(dir, name)
      if (statSync(join(ROOT, path)).isDirectory()) {
        if (!skip.has(name)) walk(path)
      } else if (/\.(ts|js|sh|ya?ml|md|json|tpl|txt)$/.test(name)) {
        files.push(path)
      }
    }
  }
  for (const dir of ['src', 'test', 'manifests', 'hooks', 'bench', 'docs', 'charts']) {
    if (existsSync(join(ROOT, dir))) walk(dir)
  }
  return files.map(f => f.split(sep).join('/'))
}

/**
 * A file's text with comment markers between lines taken out, so that a reference broken over
 * two comment lines reads as one.
 */
function joined (file: string, text: string): string {
  if (file.endsWith('.md')) return text.replace(/\s+/g, ' ')
  return text.replace(/[ \t]*\n[ \t]*(?:\/\/|#|\*)?[ \t]*/g, ' ')
}

t.test('every reference to a section of the README or a docs/ page names a heading that page has', async t => {
  const headingsOf = new Map<string, Set<string>>()
  const sectionsOf = (page: string): Set<string> | undefined => {
    if (!headingsOf.has(page) && existsSync(join(ROOT, page))) {
      headingsOf.set(page, new Set(headings(readFileSync(join(ROOT, page), 'utf8')).map(h => h.replaceAll('`', ''))))
    }
    return headingsOf.get(page)
  }
  let references = 0
  for (const file of sources()) {
    const text = joined(file, readFileSync(join(ROOT, file), 'utf8'))
    // The README or a docs/ page, then a comma or 's, then the section's title in double quotes.
    for (const match of text.matchAll(/\b(README|docs\/[\w-]+\.md)(?:'s)?,? "([^"]{2,80})"/g)) {
      const page = match[1] === 'README' ? 'README.md' : (match[1] as string)
      const section = match[2] as string
      references++
      const sections = sectionsOf(page)
      if (sections === undefined) t.fail(`${file}: "${section}" of ${page}, which does not exist`)
      else t.ok(sections.has(section), `${file}: ${page} has a section "${section}"`, { sections: [...sections] })
    }
    // A page named alone must exist too.
    for (const match of text.matchAll(/\bdocs\/[\w-]+\.md\b/g)) {
      if (!existsSync(join(ROOT, match[0]))) t.fail(`${file} names ${match[0]}, which does not exist`)
    }
  }
  t.ok(references >= 10, `${references} references to sections`)
})

t.test('the README stays a front page: short, every docs/ page linked from it', async t => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const lines = readme.split('\n').length
  t.ok(lines <= 250, `${lines} lines`)
  for (const page of pages().filter(p => p.file !== 'README.md')) {
    t.ok(readme.includes(`](${page.file})`) || readme.includes(`](${page.file}#`), `the README links ${page.file}`)
  }
})

t.test('following a JobFlow sync takes at most 12 ideas, each naming the module it lives in', async t => {
  const text = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8')
  const section = /## Following a JobFlow sync\n([\s\S]*?)\n## /.exec(text)?.[1] ?? ''
  const ideas = [...section.matchAll(/^(\d+)\. \*\*([^*]+)\*\*(.*)$/gm)]
  t.ok(ideas.length >= 1 && ideas.length <= 12, `${ideas.length} ideas`)
  t.same(ideas.map(m => Number(m[1])), ideas.map((_, i) => i + 1), 'numbered in order')
  for (const [, number, , rest] of ideas) {
    const idea = section.slice(section.indexOf(`${String(number)}. **`)).split(/\n\d+\. /)[0] ?? rest
    t.match(idea, /`[a-z/-]+\.ts`|`[a-zA-Z]+`/, `idea ${String(number)} names where it lives`)
  }
})
