// `npm run simulate` called in-process through its exported main, as the tests of test/cli/ call it.
import { main } from '../../src/cli/simulate.js'

export interface Run {
  code: number
  out: string[]
  err: string[]
}

export async function run (argv: string[]): Promise<Run> {
  const out: string[] = []
  const err: string[] = []
  const code = await main(argv, line => out.push(line), line => err.push(line))
  return { code, out, err }
}

/** Job names in the order the output says they were created. */
export function creations (lines: string[]): string[] {
  return lines.flatMap(line => {
    const match = /created Jobs? ([^;]+)/.exec(line)
    return match?.[1] === undefined ? [] : match[1].split(', ').map(s => s.trim())
  })
}
