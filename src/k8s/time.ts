/** A time as Kubernetes writes it (RFC 3339, whole seconds), so our times and the API server's compare alike. */
export function timestamp (date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z')
}
