import { createHash } from 'node:crypto'

/** Job names (their pods carry a `job-name` label) and label values hold at most 63 characters. */
export const MAX_LABEL_VALUE = 63
/** Most object names are DNS subdomains: at most 253 characters. */
export const MAX_OBJECT_NAME = 253

const HASH_LENGTH = 10

/** A short, stable hex digest of `text`: the same input always gives the same suffix. */
export function shortHash (text: string, length = HASH_LENGTH): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length)
}

/**
 * Fits a generated name into `max` characters. A name that fits is returned unchanged; a longer
 * one keeps as much of its start as fits and ends in a hash of the whole name, so two long names
 * that share a prefix still differ, and the same input always gives the same output (law 8).
 */
export function fitName (name: string, max: number = MAX_LABEL_VALUE): string {
  if (name.length <= max) return name
  const suffix = shortHash(name)
  // A cut can leave a '-' or '.' at the end of the prefix; DNS names may not have "-." or ".-".
  const prefix = name.slice(0, max - suffix.length - 1).replace(/[-.]+$/, '')
  return `${prefix}-${suffix}`
}

/** `<a>-<b>` fitted to a label-sized name: the names of per-flow and per-node Jobs. */
export function childName (parentName: string, part: string, max: number = MAX_LABEL_VALUE): string {
  return fitName(`${parentName}-${part}`, max)
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/

/** RFC 1123 label: what a flow name must be so that it can become part of a Job name. */
export function isDnsLabel (value: string): boolean {
  return value.length <= MAX_LABEL_VALUE && DNS_LABEL.test(value)
}
