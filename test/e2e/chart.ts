// The Helm chart (charts/jobhooks) for the tier's tests: helm and kubectl as the tier built them
// (test/e2e/build-binaries.sh), or from PATH against a cluster of one's own (E2E_KUBECONFIG).
import { join } from 'node:path'
import { parseAllDocuments } from 'yaml'
import { ROOT, run, type Result } from './cluster.js'

export const CHART = join(ROOT, 'charts', 'jobhooks')

/** The release and namespace the tests install as, the names the kustomize install uses. */
export const RELEASE = 'jobhooks'
export const NAMESPACE = 'jobhooks-system'

export function helmBinary (): string {
  return process.env.E2E_HELM ?? 'helm'
}

export function kubectlBinary (): string {
  return process.env.E2E_BIN !== undefined ? join(process.env.E2E_BIN, 'kubectl') : 'kubectl'
}

/**
 * helm with `args`. Helm warns on every command that files/ holds links into manifests/ (the
 * chart's one source for what it shares with the kustomize install); that line is dropped.
 */
export async function helm (args: string[], env: NodeJS.ProcessEnv = process.env): Promise<Result> {
  const result = await run(helmBinary(), args, { env })
  return {
    ...result,
    stderr: result.stderr
      .split('\n')
      .filter(line => !/found symbolic link in path: .*Contents of linked file included and used/.test(line))
      .join('\n')
  }
}

/** helm template of the chart with `args` (--set ...), as the objects it renders; throws with helm's message. */
export async function renderChart (args: string[] = []): Promise<any[]> {
  const result = await helm(['template', RELEASE, CHART, '--namespace', NAMESPACE, ...args])
  if (result.code !== 0) throw new Error(`helm template ${args.join(' ')} failed: ${result.stderr}`)
  return parseObjects(result.stdout)
}

/** kubectl kustomize manifests: the objects of the kustomize install. */
export async function kustomizeObjects (): Promise<any[]> {
  const result = await run(kubectlBinary(), ['kustomize', join(ROOT, 'manifests')])
  if (result.code !== 0) throw new Error(`kubectl kustomize manifests failed: ${result.stderr}`)
  return parseObjects(result.stdout)
}

/**
 * Every object of a YAML stream, read as the API server reads YAML (1.1: `0440` is octal, as the
 * manifests mean a Secret volume's mode), so that two tools' spellings of one value compare equal.
 */
export function parseObjects (yaml: string): any[] {
  return parseAllDocuments(yaml, { version: '1.1' }).map(d => d.toJS()).filter(o => o !== null && o !== undefined)
}

/** `Kind namespace/name`, or `Kind name` for a cluster-scoped object. */
export function objectKey (object: any): string {
  const { namespace, name } = object.metadata ?? {}
  return `${String(object.kind)} ${namespace !== undefined ? `${String(namespace)}/` : ''}${String(name)}`
}
