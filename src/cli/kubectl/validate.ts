// `kubectl jobhooks validate -f <manifest> [-f …]`: every object of our kinds checked against the
// project's CRDs (their schemas and CEL rules) as the API server checks a create with strict field
// validation, with no cluster. Prints `<resource>/<name> valid` for each good object and, on
// standard error, each refusal as `kubectl apply --validate=strict` prints it (../validate/check.ts).
// Objects of other kinds are not checked (said on standard error). Exit 0 when every object
// checked is valid, 1 otherwise (a refusal, a file that cannot be read, a usage error).
import { parseArgs } from 'node:util'
import type { KubeObject } from '../../k8s/types.js'
import { ManifestError } from '../../simulator/manifest.js'
import { checkObjects, isRefused, readManifest, refusal, resourceName } from '../validate/check.js'
import { UsageError } from './options.js'
import type { Io } from './session.js'

export const VALIDATE_USAGE = `usage: kubectl jobhooks validate -f <manifest.yaml> [-f <manifest.yaml>...]

  Checks every JobFlow, JobTemplate, JobFlowTemplate, DaemonJob, EphemeralJob, OperationJob and
  CollaSet of the manifests against the jobhooks CRDs (their OpenAPI schemas and CEL rules) as the
  API server does with kubectl apply --validate=strict, with no cluster. Exit 0 when all are valid,
  1 otherwise.`

function filesOf (argv: string[]): string[] | 'help' {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { filename: { type: 'string', short: 'f', multiple: true }, help: { type: 'boolean', short: 'h' } }
    })
  } catch (error) {
    throw new UsageError((error as Error).message.split('\n')[0] ?? String(error))
  }
  if (parsed.values.help === true) return 'help'
  const files = [...(parsed.values.filename ?? []), ...parsed.positionals]
  if (files.length === 0) throw new UsageError('validate needs a manifest: validate -f <manifest.yaml>')
  return files
}

/** The command after the word `validate`; its exit code. */
export function validateCommand (argv: string[], io: Io): number {
  const files = filesOf(argv)
  if (files === 'help') {
    io.out(`${VALIDATE_USAGE}\n`)
    return 0
  }
  const objects: Array<{ object: KubeObject, source: string }> = []
  let failed = false
  for (const file of files) {
    try {
      objects.push(...readManifest(file).map(object => ({ object, source: file })))
    } catch (error) {
      if (!(error instanceof ManifestError)) throw error
      io.err(`error: ${error.message}\n`)
      failed = true
    }
  }
  const warned = new Set<string>()
  for (const check of checkObjects(objects)) {
    for (const warning of check.warnings.filter(w => !warned.has(w))) {
      warned.add(warning)
      io.err(`Warning: ${warning}\n`)
    }
    if (check.outcome === 'other') {
      io.err(`${check.object.kind}/${check.object.metadata.name} not checked: not a jobhooks kind\n`)
    } else if (isRefused(check)) {
      failed = true
      for (const line of refusal(check)) io.err(`${line}\n`)
    } else {
      io.out(`${resourceName(check)} valid\n`)
    }
  }
  return failed ? 1 : 0
}
