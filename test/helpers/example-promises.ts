// What each example under manifests/examples/ promises in its header comment, read the way a
// person reads it: the commands to run (`#   $ …`), and the table the last `kubectl get` prints
// when the example is done. The unit tier checks the promise against the simulator (the
// `npm run simulate` line), the end-to-end tier against a real API server (the kubectl lines).
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseAllDocuments } from 'yaml'
import { parseDepends } from '../../src/controllers/jobflow/depends.js'
import { cell, printerColumns } from '../../src/cli/printer-columns.js'

export const EXAMPLES_DIR = join(import.meta.dirname, '..', '..', 'manifests', 'examples')

export interface ExamplePromise {
  file: string
  /** The commands of the header, in order, without the `$ `. */
  commands: string[]
  /** The arguments of the `kubectl jobhooks simulate` line. */
  simulate: string[]
  /** The last `kubectl get <resource> <name>`: what it names. */
  get: { resource: string; name: string }
  /**
   * Its table: column name → the cell promised, empty for a field left out. `AGE` is left out,
   * `<…>` cells vary by cluster.
   */
  columns: Record<string, string>
}

/** Every example file with its promise. */
export function examplePromises (): ExamplePromise[] {
  return readdirSync(EXAMPLES_DIR)
    .filter(f => f.endsWith('.yaml'))
    .sort()
    .map(file => promiseOf(file, readFileSync(join(EXAMPLES_DIR, file), 'utf8')))
}

/**
 * Splits a command line as a shell would for these simple lines: a word runs to the next blank,
 * '…' and "…" quote blanks, and the quotes go, also inside a word: the header's
 * `--for=jsonpath='{.status.availableReplicas}'=2` reaches kubectl without them, as from a shell
 * (kubectl refuses a jsonpath that still has them).
 */
export function shellWords (line: string): string[] {
  const words: string[] = []
  for (const match of line.matchAll(/(?:'[^']*'|"[^"]*"|[^\s'"]+)+/g)) {
    words.push(
      match[0].replace(/'([^']*)'|"([^"]*)"/g, (_, single?: string, double?: string) => single ?? double ?? '')
    )
  }
  return words
}

export function promiseOf (file: string, text: string): ExamplePromise {
  const header: string[] = []
  for (const line of text.split('\n')) {
    if (!line.startsWith('#')) break
    header.push(line.replace(/^#\s?/, ''))
  }
  const commands: string[] = []
  let get: ExamplePromise['get'] | undefined
  let table: string[] = []
  for (let i = 0; i < header.length; i++) {
    const line = (header[i] as string).trim()
    if (!line.startsWith('$ ')) continue
    const command = line.slice(2)
    commands.push(command)
    const words = shellWords(command)
    if (words[0] === 'kubectl' && words[1] === 'get' && words.length === 4) {
      get = { resource: words[2] as string, name: words[3] as string }
      table = []
      for (
        let j = i + 1;
        j < header.length && (header[j] as string).trim() !== '' && !(header[j] as string).trim().startsWith('$ ');
        j++
      ) {
        table.push((header[j] as string).trim())
      }
    }
  }
  const simulateLine = commands.find(isSimulateLine)
  if (simulateLine === undefined) throw new Error(`${file}: no "$ kubectl jobhooks simulate -f …" line in its header`)
  if (get === undefined || table.length !== 2) {
    throw new Error(`${file}: no "$ kubectl get <resource> <name>" line followed by a header row and one row`)
  }
  // kubectl aligns each cell under its column's name, and leaves a cell empty when the field is
  // absent (QUEUED while no Job waits): a cell is what stands between its column's start and the next.
  const [head, row] = table as [string, string]
  // A column's name may be two words (LAST SCHEDULE): kubectl puts three blanks between columns.
  const starts = [...head.matchAll(/\S+(?: \S+)*/g)].map(m => m.index)
  const names = head.split(/\s{2,}/)
  const cells = starts.map((start, i) => row.slice(start, starts[i + 1]).trim())
  if (cells.join(' ').split(/\s+/).filter(c => c !== '').join(' ') !== row.split(/\s+/).join(' ')) {
    throw new Error(`${file}: the kubectl get table's row is not aligned under its ${names.length} columns`)
  }
  if (cells[0] !== get.name) throw new Error(`${file}: the table's row is ${String(cells[0])}, not ${get.name}`)
  const columns: Record<string, string> = {}
  names.forEach((name, i) => {
    if (name !== 'NAME' && name !== 'AGE') columns[name] = cells[i] as string
  })
  return { file, commands, simulate: shellWords(simulateLine).slice(3), get, columns }
}

/** A header's simulator line: the unit tier plays it, the real tier skips it. */
export function isSimulateLine (command: string): boolean {
  return command.startsWith('kubectl jobhooks simulate ')
}

/**
 * The promised cells this object does not show, as `COLUMN: promised X, shows Y` (empty when
 * the promise holds). A `<…>` cell matches any value, but equal placeholders must show equal values.
 */
export function brokenPromises (promise: ExamplePromise, object: unknown): string[] {
  const columns = printerColumns(promise.get.resource)
  const problems: string[] = []
  const placeholders = new Map<string, string>()
  for (const [name, promised] of Object.entries(promise.columns)) {
    const column = columns.find(c => c.name === name)
    if (column === undefined) {
      problems.push(`${name}: not a column of ${promise.get.resource}`)
      continue
    }
    const shown = cell(object, column.jsonPath)
    if (/^<[a-z]+>$/.test(promised)) {
      const seen = placeholders.get(promised)
      if (shown === '' || (seen !== undefined && seen !== shown)) {
        problems.push(`${name}: promised ${promised}${seen !== undefined ? ` (= ${seen})` : ''}, shows ${shown}`)
      }
      placeholders.set(promised, shown)
    } else if (shown !== promised) {
      problems.push(`${name}: promised ${promised}, shows ${shown}`)
    }
  }
  return problems
}

/** The objects of an example file. */
export function exampleObjects (file: string): any[] {
  return parseAllDocuments(readFileSync(join(EXAMPLES_DIR, file), 'utf8'))
    .map(d => d.toJS())
    .filter(d => d !== null)
}

/** A JobFlow step's dependencies as written: its list, or the steps its `depends` names. */
export function stepDependencies (flow: { dependencies?: string[], depends?: string }): string[] {
  const parsed = flow.depends === undefined ? undefined : parseDepends(flow.depends)
  return typeof parsed === 'object' ? parsed.steps : flow.dependencies ?? []
}
