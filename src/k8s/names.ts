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

/** A label value: empty, or up to 63 letters, digits, '-', '_' and '.', alphanumeric at both ends. */
export const LABEL_VALUE_PATTERN = '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$'
const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/

/** A label key, as the API server reads one: `[prefix/]name`, the prefix a DNS subdomain. */
export function isLabelKey (key: string): boolean {
  const parts = key.split('/')
  if (parts.length > 2) return false
  const name = parts[parts.length - 1] as string
  const prefix = parts.length === 2 ? parts[0] as string : undefined
  if (prefix !== undefined && (prefix.length > MAX_OBJECT_NAME || !DNS_SUBDOMAIN.test(prefix))) return false
  return name.length <= MAX_LABEL_VALUE && LABEL_NAME.test(name)
}

const LABEL_VALUE = new RegExp(LABEL_VALUE_PATTERN)

/** A label value, as the API server reads one. */
export function isLabelValue (value: string): boolean {
  return value.length <= MAX_LABEL_VALUE && LABEL_VALUE.test(value)
}
