// `matches` in linear time: RE2 (re2js, a pure-JavaScript port of RE2/J), as Kubernetes' CEL.
// Searching is linear in the subject; compiling is linear in the program, which counted repeats
// expand (`[^c]{1,1000}` is a thousand instructions), so a pattern's expanded size is read from
// its text first and a pattern too large is refused before it is compiled.
import { RE2JS } from 're2js'

/** The largest expanded pattern compiled: a thousand-fold repeat of one character class. */
export const REGEX_MAX_SIZE = 1000
/** Units a search charges per character of its subject (measured, docs/security.md). */
export const REGEX_UNITS_PER_CHAR = 1
/** Units compiling charges per unit of expanded size (measured, docs/security.md). */
export const REGEX_COMPILE_UNITS = 32
/** Compiled patterns kept between evaluations: `when`s repeat their few literal patterns. */
const CACHE_SIZE = 64

/** What a `matches` costs beyond reading its operands: compiling the pattern, then one search. */
export function regexUnits (subjectLength: number, patternSize: number): number {
  return patternSize * REGEX_COMPILE_UNITS + Math.ceil(subjectLength * REGEX_UNITS_PER_CHAR)
}

/**
 * A pattern's size once its counted repeats are expanded, at most: a unit per character, times
 * each enclosing `{n,m}`'s larger count. Escapes and classes are read loosely (a `\Q...\E` or a
 * class counts every character), which only errs large.
 */
export function expandedSize (pattern: string): number {
  const stack: number[] = [0]
  let last = 0
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i] as string
    if (char === '\\') {
      i++
      last = 1
      stack[stack.length - 1] = (stack[stack.length - 1] as number) + 1
    } else if (char === '(') {
      stack.push(0)
    } else if (char === ')' && stack.length > 1) {
      last = (stack.pop() as number) + 1
      stack[stack.length - 1] = (stack[stack.length - 1] as number) + last
    } else if (char === '{' && /^\{(\d+)(,(\d*))?\}/.test(pattern.slice(i))) {
      const [text, low, , high] = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i)) as RegExpExecArray
      const count = Math.max(Number(low), high === undefined || high === '' ? 1 : Number(high), 1)
      stack[stack.length - 1] = (stack[stack.length - 1] as number) + last * (count - 1)
      last = last * count
      i += text.length - 1
    } else {
      last = 1
      stack[stack.length - 1] = (stack[stack.length - 1] as number) + 1
    }
  }
  return stack.reduce((sum, size) => sum + size, 0)
}

/** Why RE2 will not run `pattern`: too large once expanded, or not RE2 syntax (backreferences, lookaround). */
export function patternProblem (pattern: string): string | undefined {
  const size = expandedSize(pattern)
  if (size > REGEX_MAX_SIZE) return `its size once repeats are expanded, ${size}, is over ${REGEX_MAX_SIZE}`
  try {
    RE2JS.compile(pattern)
    return undefined
  } catch (error) {
    return error instanceof Error ? error.message.split('\n')[0] : String(error)
  }
}

/** Compiled patterns, the last few kept: compiling costs more than searching a short subject. */
export class PatternCache {
  readonly #compiled = new Map<string, RE2JS | Error>()

  /** The compiled pattern, or the error a `matches` over it fails with. */
  get (pattern: string): RE2JS | Error {
    const known = this.#compiled.get(pattern)
    if (known !== undefined) return known
    const problem = expandedSize(pattern) > REGEX_MAX_SIZE ? 'too large' : undefined
    let compiled: RE2JS | Error
    try {
      if (problem !== undefined) throw new Error(problem)
      compiled = RE2JS.compile(pattern)
    } catch {
      compiled = new Error(`Invalid regular expression: ${pattern}`)
    }
    if (this.#compiled.size >= CACHE_SIZE) this.#compiled.delete(this.#compiled.keys().next().value as string)
    this.#compiled.set(pattern, compiled)
    return compiled
  }
}
