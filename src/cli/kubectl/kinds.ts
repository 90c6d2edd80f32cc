// The kinds the plugin shows, named as kubectl accepts them: kind, plural, singular or short name,
// read from the CRDs of manifests/crds/ (jf, cjf, dj, ejob, opj, cls; jft for submit --from), and the
// paths of their objects.
import { loadCrds, type CrdNames } from '../printer-columns.js'

export type Kind = CrdNames

/** The kinds `get` draws; a JobTemplate is data and has nothing to draw. */
export const DRAWN = ['JobFlow', 'CronJobFlow', 'DaemonJob', 'EphemeralJob', 'OperationJob', 'CollaSet']

/** The CRD of `among` (the drawn kinds unless said) that `name` answers to (any case), or undefined. */
export function kindNamed (name: string, among: readonly string[] = DRAWN): Kind | undefined {
  const lower = name.toLowerCase()
  return loadCrds().find(c => among.includes(c.kind) &&
    [c.kind.toLowerCase(), c.plural, c.singular, ...c.shortNames].includes(lower))
}

/** `jobflows.jobhooks.io`: how the API server names a resource in its messages. */
export function qualified (kind: Kind): string {
  return `${kind.plural}.${kind.group}`
}

/** The collection of `kind` in `namespace`, or in every namespace without one. */
export function collection (kind: Pick<Kind, 'group' | 'version' | 'plural'>, namespace: string | undefined): string {
  const prefix = kind.group === '' ? `/api/${kind.version}` : `/apis/${kind.group}/${kind.version}`
  return namespace === undefined
    ? `${prefix}/${kind.plural}`
    : `${prefix}/namespaces/${encodeURIComponent(namespace)}/${kind.plural}`
}

/** One object's path. */
export function objectPath (kind: Pick<Kind, 'group' | 'version' | 'plural'>, namespace: string, name: string): string {
  return `${collection(kind, namespace)}/${encodeURIComponent(name)}`
}

/** The built-in types the views read beside ours. */
export const PODS = { group: '', version: 'v1', plural: 'pods' }
export const JOBS = { group: 'batch', version: 'v1', plural: 'jobs' }
export const CONFIGMAPS = { group: '', version: 'v1', plural: 'configmaps' }
