// Field errors as the API server words them (k8s.io/apimachinery's util/validation/field, as of
// Kubernetes 1.36): `<path>: <Type words>[: <value>][: <detail>]`. A validator builds them; the
// CLI prints them as kubectl does (`The JobFlow "x" is invalid: …`).

/** What went wrong, as the API server's field error types name it. */
export type FieldErrorType =
  | 'Required' | 'Invalid' | 'TypeInvalid' | 'NotSupported' | 'TooLong' | 'TooShort'
  | 'TooMany' | 'Duplicate' | 'Forbidden'

/** A value the API server leaves out of the message (an object's or a list's). */
export const OMIT: unique symbol = Symbol('omitted value')

export interface FieldError {
  type: FieldErrorType
  /** The field's path as the API server prints it: `spec.flows[1].name`. */
  field: string
  value?: unknown
  detail?: string
}

const WORDS: Record<FieldErrorType, string> = {
  Required: 'Required value',
  Invalid: 'Invalid value',
  TypeInvalid: 'Invalid value',
  NotSupported: 'Unsupported value',
  TooLong: 'Too long',
  TooShort: 'Too short',
  TooMany: 'Too many',
  Duplicate: 'Duplicate value',
  Forbidden: 'Forbidden'
}

/** Types whose message never shows the value. */
const VALUELESS = new Set<FieldErrorType>(['Required', 'Forbidden', 'TooLong', 'TooShort'])

/** JSON with keys in order, as Go's encoding/json writes a map. */
export function goJson (value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(goJson).join(',')}]`
  if (typeof value === 'object' && value !== null) {
    const entries = Object.keys(value).sort()
      .map(key => `${JSON.stringify(key)}:${goJson((value as Record<string, unknown>)[key])}`)
    return `{${entries.join(',')}}`
  }
  if (typeof value === 'bigint') return value.toString()
  return JSON.stringify(value) ?? 'null'
}

/** A value as the field error prints it: numbers and booleans bare, strings quoted, the rest as JSON. */
export function shownValue (value: unknown): string {
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value)
  if (typeof value === 'string') return JSON.stringify(value)
  return goJson(value)
}

/** The message without its path: `Unsupported value: "Stop": supported values: "FailFast", "Continue"`. */
export function errorBody (error: FieldError): string {
  let body = WORDS[error.type]
  if (!VALUELESS.has(error.type) && error.value !== OMIT) body += `: ${shownValue(error.value)}`
  if (error.detail !== undefined && error.detail !== '') body += `: ${error.detail}`
  return body
}

/** The whole message: `spec.flows[0].name: Required value`. */
export function fieldErrorText (error: FieldError): string {
  return `${error.field}: ${errorBody(error)}`
}

/** `supported values: "FailFast", "Continue"`: each value quoted, a non-string as its JSON first. */
export function supportedValues (values: readonly unknown[]): string {
  return `supported values: ${values.map(v => JSON.stringify(typeof v === 'string' ? v : goJson(v))).join(', ')}`
}

/** `must have at most 2 items` (TooMany's detail). */
export function atMostItems (max: number): string {
  return `must have at most ${max} ${max === 1 ? 'item' : 'items'}`
}

/** `may not be more than 63 bytes` (TooLong's detail). */
export function atMostBytes (max: number): string {
  return `may not be more than ${max} ${max === 1 ? 'byte' : 'bytes'}`
}
