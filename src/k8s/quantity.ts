// Kubernetes resource quantities ("500m", "1Gi", "2e3", "0.5"), read as numbers so that two
// spellings of one amount compare equal: the API server stores a quantity in its canonical form
// ("0.5" becomes "500m"), so a template and the Pod made from it may spell the same amount apart.
// Decimal suffixes by power of 10^3 from n (10^-9): the one-step gap at 10^0 is no suffix.
const DECIMAL = 'num_kMGTPE'
const BINARY = ['Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei']

/** What a suffix multiplies by: n (10^-9) to E (10^18) in steps of 10^3, Ki (2^10) to Ei (2^60). */
function multiplier (suffix: string): number {
  if (suffix === '') return 1
  const binary = BINARY.indexOf(suffix)
  return binary >= 0 ? 2 ** (10 * (binary + 1)) : 10 ** (3 * (DECIMAL.indexOf(suffix) - 3))
}
const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/

/** The amount a quantity stands for, in base units; undefined when it is not a quantity. */
export function parseQuantity (value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined
  if (typeof value !== 'string' || value.length > 64) return undefined
  const match = QUANTITY.exec(value.trim())
  if (match === null) return undefined
  const [, number, exponent, suffix] = match
  const base = Number(number)
  if (exponent !== undefined) return base * 10 ** Number(exponent.slice(1))
  return base * multiplier(suffix ?? '')
}

/** Two quantities of the same amount, within a part in 10^12 (a double's reach); equal text always. */
export function sameQuantity (a: unknown, b: unknown): boolean {
  if (a === b) return true
  const x = parseQuantity(a)
  const y = parseQuantity(b)
  if (x === undefined || y === undefined) return false
  return Math.abs(x - y) <= Math.abs(x) * 1e-12
}

function quantities (value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : {}
}

/** Two `resources` blocks that ask for the same requests and limits, however spelled. */
export function sameResources (a: unknown, b: unknown): boolean {
  const x = quantities(a)
  const y = quantities(b)
  for (const part of ['requests', 'limits']) {
    const p = quantities(x[part])
    const q = quantities(y[part])
    const names = new Set([...Object.keys(p), ...Object.keys(q)])
    for (const name of names) if (!sameQuantity(p[name], q[name])) return false
  }
  return true
}
