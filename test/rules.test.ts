// The rules every hook keeps are numbered in docs/architecture.md, and code, tests, the bench and
// the docs cite them by number ("law 2", "rule 6", "laws 3 and 5"). A citation that names no rule
// there points a reader at nothing, so every one must resolve.
import t from 'tap'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, sep } from 'node:path'
import { lineAt, ROOT, withoutFences } from './helpers/docs.js'

const RULES_PAGE = 'docs/architecture.md'
const RULES_HEADING = '## The rules every hook keeps'

/** The numbers of the rules: the numbered items of the rules' section of the page. */
function ruleNumbers (page: string): Set<number> {
  const text = withoutFences(page)
  const start = text.indexOf(`\n${RULES_HEADING}\n`)
  if (start < 0) return new Set()
  const rest = text.slice(start + RULES_HEADING.length + 2)
  const next = rest.search(/^#{1,2} /m)
  const section = next < 0 ? rest : rest.slice(0, next)
  return new Set([...section.matchAll(/^(\d+)\. \*\*/gm)].map(m => Number(m[1])))
}

interface Citation {
  number: number
  /** Where it was cited, as `file line N`. */
  where: string
}

/** The text with comment markers between lines taken out, so that a citation broken over two lines reads as one. */
function joinedLines (text: string): string {
  return text.replace(/[ \t]*\n[ \t]*(?:\/\/|#|\*)?[ \t]*/g, m => m.replace(/[^\n]/g, ' '))
}

/** Every rule a text cites by number: "law 2", "Rule 6", "laws 3 and 5", "rules 2, 3 or 6". */
function citations (file: string, text: string): Citation[] {
  const found: Citation[] = []
  const joined = joinedLines(text)
  for (const match of joined.matchAll(/\b(?:law|rule)s?\s+(\d+(?:(?:\s*,\s*|\s+and\s+|\s+or\s+)\d+)*)\b/gi)) {
    const where = `${file} line ${lineAt(text, match.index)}`
    for (const number of (match[1] as string).match(/\d+/g) ?? []) found.push({ number: Number(number), where })
  }
  return found
}

/** The citations among them that name no rule. */
function unresolved (cited: Citation[], rules: Set<number>): Citation[] {
  return cited.filter(c => !rules.has(c.number))
}

/** Every text file under the folders that may cite a rule, as paths from the repository's root. */
function citingFiles (): string[] {
  const files: string[] = []
  const skip = new Set(['node_modules', 'dist', 'fixtures', '.tap', 'coverage', '.scratch'])
  const walk = (dir: string): void => {
    for (const name of readdirSync(join(ROOT, dir))) {
      const path = join(dir, name)
      if (statSync(join(ROOT, path)).isDirectory()) {
        if (!skip.has(name)) walk(path)
      } else if (/\.(ts|js|sh|md)$/.test(name)) {
        files.push(path.split(sep).join('/'))
      }
    }
  }
  for (const dir of ['src', 'test', 'bench', 'docs']) if (existsSync(join(ROOT, dir))) walk(dir)
  return files
}

const rules = ruleNumbers(readFileSync(join(ROOT, RULES_PAGE), 'utf8'))

t.test(`${RULES_PAGE} numbers the rules every hook keeps, 1 to 8 in order`, async t => {
  t.same([...rules], [1, 2, 3, 4, 5, 6, 7, 8])
})

t.test('every "law N" or "rule N" cited in src/, test/, bench/ and docs/ is a numbered rule', async t => {
  const cited = citingFiles().flatMap(file => citations(file, readFileSync(join(ROOT, file), 'utf8')))
  t.ok(cited.length >= 20, `${cited.length} citations found`)
  for (const citation of unresolved(cited, rules)) {
    t.fail(`${citation.where} cites rule ${citation.number}, which ${RULES_PAGE} does not number`)
  }
})

t.test('the check catches a rule that does not exist, alone, in a list and broken over lines', async t => {
  // Built from parts, so that this file cites no such rule itself.
  const made = (words: string): string => words.replace('L_W', 'law')
  const text = [
    `// a hook keeps every child (${made('L_W 42')}).`,
    `// see ${made('L_Ws 2 and 43')} for why.`,
    `// what finished stays finished (${made('L_W')}`,
    '// 44), and names fit (Rule 8).'
  ].join('\n')
  const cited = citations('in-memory.ts', text)
  t.same(cited.map(c => c.number), [42, 2, 43, 44, 8])
  t.same(unresolved(cited, rules).map(c => `${c.where}: ${c.number}`), [
    'in-memory.ts line 1: 42', 'in-memory.ts line 2: 43', 'in-memory.ts line 3: 44'
  ])
})
