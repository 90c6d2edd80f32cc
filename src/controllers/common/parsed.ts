// Reading a spec: every problem is collected, none thrown, so the hook can report them all in
// status and keep every child (law 2).

/** A spec read into its typed form, or every problem that makes it invalid. */
export type Parsed<T> = { ok: true, value: T } | { ok: false, problems: string[] }

/**
 * An optional whole number in [min, max] (no upper bound when `max` is undefined): undefined when
 * absent, and undefined with a problem pushed when it is anything else.
 */
export function optionalWholeNumber (
  value: unknown,
  where: string,
  min: number,
  max: number | undefined,
  problems: string[]
): number | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || (max !== undefined && value > max)) {
    problems.push(`${where} must be a whole number ` +
      `${max === undefined ? `of at least ${min}` : `from ${min} to ${max}`} (got ${JSON.stringify(value)})`)
    return undefined
  }
  return value
}
