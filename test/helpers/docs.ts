// The documentation as the tests read it: the README (the front page) and the pages of docs/,
// with their headings and the anchors GitHub gives them.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

export const ROOT = join(import.meta.dirname, '..', '..')

export interface Page {
  /** The path from the repository's root, with `/`. */
  file: string
  text: string
}

/** README.md, then every docs/*.md in name order. */
export function pages (): Page[] {
  const docs = readdirSync(join(ROOT, 'docs')).filter(f => f.endsWith('.md')).sort().map(f => `docs/${f}`)
  return ['README.md', ...docs].map(file => ({ file, text: readFileSync(join(ROOT, file), 'utf8') }))
}

/** The text with every fenced code block blanked (its lines kept, so line numbers still count). */
export function withoutFences (text: string): string {
  let fenced = false
  return text.split('\n').map(line => {
    const fence = /^\s*```/.test(line)
    const blank = fenced || fence
    if (fence) fenced = !fenced
    return blank ? '' : line
  }).join('\n')
}

/** The headings of a Markdown text (ATX headings outside code blocks), as written. */
export function headings (text: string): string[] {
  return [...withoutFences(text).matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)].map(m => m[1] as string)
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, each blank a hyphen. */
export function slug (heading: string): string {
  return heading.toLowerCase().replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '').replace(/\s/g, '-')
}

/** Every anchor of a Markdown text; a repeated heading gets -1, -2… as on GitHub. */
export function anchors (text: string): Set<string> {
  const seen = new Map<string, number>()
  const result = new Set<string>()
  for (const heading of headings(text)) {
    const base = slug(heading)
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    result.add(n === 0 ? base : `${base}-${n}`)
  }
  return result
}

/** The 1-based line of a position in a text. */
export function lineAt (text: string, index: number): number {
  return text.slice(0, index).split('\n').length
}
