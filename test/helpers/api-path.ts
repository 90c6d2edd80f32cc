// An API server path as both fake API servers of the tests read it: `/api/v1/namespaces/ns/pods/x`
// or `/apis/batch/v1/jobs`, into its apiVersion, its namespace if any, and what follows.
export interface ApiPath {
  apiVersion: string
  namespace?: string
  /** The resource, then the name and a subresource when the path has them. */
  rest: string[]
}

export function parseApiPath (pathname: string): ApiPath {
  const parts = pathname.split('/').filter(p => p !== '').map(decodeURIComponent)
  const apiVersion = (parts[0] === 'api' ? parts[1] : `${parts[1] ?? ''}/${parts[2] ?? ''}`) ?? ''
  const rest = parts.slice(parts[0] === 'api' ? 2 : 3)
  if (rest[0] === 'namespaces' && rest.length >= 3) return { apiVersion, namespace: rest[1], rest: rest.slice(2) }
  return { apiVersion, rest }
}
