// `npm run crds` (with operationjob-crd.ts): writes the batch/v1 JobSpec into the DaemonJob CRD
// (manifests/crds/daemonjob.yaml), from Kubernetes' OpenAPI as @kubernetes/client-node ships it
// (job-spec-schema.ts), so that the API server refuses a field a Job does not have instead of
// keeping it for every node's Job. It also writes the same fields, without their descriptions,
// as the table the hook checks a spec with (src/k8s/job-spec-fields.ts): a spec that never went
// through this schema (a fixture, the simulator, a CRD not yet upgraded) gets the same answer.
//
// Everything else in the CRD (comments, the DaemonJob's own fields and rules, the status) stays
// as written. The test suite fails while either file is out of date.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { isMap, isScalar, isSeq, parseDocument, visit, type Document, type Node } from 'yaml'
import { DAEMONJOB_FIELDS } from '../controllers/daemonjob/spec.js'
import { packageRoot } from '../scripts/library.js'
import { jobSpecSchemas, modelOf, type ModelTable, type Schema } from './job-spec-schema.js'
import { clientNodeVersion, openApiVersion } from './kube-models.js'

export const DAEMONJOB_CRD = join(packageRoot(), 'manifests', 'crds', 'daemonjob.yaml')
export const JOB_SPEC_FIELDS = join(packageRoot(), 'src', 'k8s', 'job-spec-fields.ts')

const SPEC = ['spec', 'versions', 0, 'schema', 'openAPIV3Schema', 'properties', 'spec']

/**
 * What a DaemonJob says of the JobSpec beyond Kubernetes: its own descriptions where it treats a
 * field its own way, the bounds the hook checks, and what a CEL rule needs (a bounded list).
 * Paths are below `spec`; each patch is merged into the generated node.
 */
const OVERLAYS: Record<string, Schema> = {
  parallelism: {
    description: "Pods each node's Job runs at once (the Job's own parallelism). How many nodes' Jobs run at " +
      'once is nodeParallelism.',
    minimum: 0
  },
  completions: { minimum: 0 },
  backoffLimit: { minimum: 0 },
  activeDeadlineSeconds: { minimum: 1 },
  ttlSecondsAfterFinished: {
    description: "Seconds after a node's Job finished before it is deleted. Applied by jobhooks, not by " +
      'Kubernetes: the Job carries it as the label jobhooks.io/ttl-seconds-after-finished and is deleted ' +
      "only once its outcome is in this DaemonJob's status, so it never runs twice.",
    minimum: 0
  },
  template: {
    description: 'The pod template of every Job. Pods restart Never unless it says OnFailure.',
    required: ['spec']
  },
  'template.spec': {
    description: 'The pod spec. Its nodeSelector, node affinity and tolerations also decide which nodes are eligible.'
  },
  'template.spec.containers': { minItems: 1, maxItems: 100 },
  'template.spec.restartPolicy': { description: "A Job's pods cannot restart Always.", enum: ['Never', 'OnFailure'] }
}

/** The JobSpec's fields with the overlays merged in. */
export function daemonJobSpecFields (): { fields: Record<string, Schema>, table: ModelTable } {
  const { fields, table } = jobSpecSchemas()
  for (const [path, patch] of Object.entries(OVERLAYS)) {
    const [first, ...rest] = path.split('.')
    let node = fields[first as string]
    for (const part of rest) node = (node?.properties as Record<string, Schema> | undefined)?.[part]
    if (node === undefined) throw new Error(`the JobSpec has no ${path}`)
    Object.assign(node, patch)
  }
  return { fields, table }
}

/** globalParams.env's items: EnvVars, as the containers' own, from the same OpenAPI. */
function envVarSchema (fields: Record<string, Schema>): Schema {
  let node: Schema | undefined = fields.template
  for (const step of ['spec', 'containers', 'env']) {
    node = (node?.properties as Record<string, Schema> | undefined)?.[step]
    if (step !== 'spec') node = node?.items as Schema | undefined
  }
  if (node === undefined) throw new Error('the JobSpec has no template.spec.containers[].env[]')
  return { ...node, description: "A core/v1 EnvVar; a variable of the same name in the template's container wins." }
}

/** A schema as YAML nodes: short lists of scalars on one line, as the rest of the file. */
function schemaNode (doc: Document, schema: unknown): Node {
  const node = doc.createNode(JSON.parse(JSON.stringify(schema))) as Node
  visit(node, { Seq: (_, seq) => { if (seq.items.every(isScalar)) seq.flow = true } })
  return node
}

/** The CRD text `text` with the JobSpec written in. Rendering twice gives the same text. */
export function renderDaemonJobCrd (text: string, fields: Record<string, Schema>, source: string): string {
  const doc = parseDocument(text)
  const properties = doc.getIn([...SPEC, 'properties'])
  if (!isMap(properties)) throw new Error('the DaemonJob CRD has no spec.properties')
  const own = DAEMONJOB_FIELDS as readonly string[]
  properties.items = properties.items.filter(
    pair => own.includes(String(isScalar(pair.key) ? pair.key.value : pair.key))
  )
  const spec = doc.getIn(SPEC)
  if (isMap(spec)) spec.delete('x-kubernetes-preserve-unknown-fields')
  let first = true
  for (const [name, schema] of Object.entries(fields)) {
    const key = doc.createNode(name) as Node
    if (first) {
      key.commentBefore = ` The batch/v1 JobSpec: written by npm run crds from ${source} (src/cli/daemonjob-crd.ts);` +
        '\n edit that file, not these lines.'
      first = false
    }
    properties.items.push(doc.createPair(key, schemaNode(doc, schema)))
  }
  const envItems = [...SPEC, 'properties', 'globalParams', 'properties', 'env', 'items']
  doc.setIn(envItems, schemaNode(doc, envVarSchema(fields)))
  const rules = doc.getIn([...SPEC, 'x-kubernetes-validations'])
  if (!isSeq(rules)) throw new Error('the DaemonJob CRD lost its spec rules')
  return doc.toString({ lineWidth: 0, flowCollectionPadding: false })
}

/**
 * The table the hook reads (k8s/job-spec-fields.ts): per model, its fields, each followed by the
 * model of its value (`:V1Container`, `:[]V1Container` for a list, `:{}V1X` for a map) when it has one.
 */
export function renderJobSpecFields (table: ModelTable, source: string): string {
  const lines = [
    '// Generated by npm run crds (src/cli/daemonjob-crd.ts): edit that file, not this one. From',
    `// ${source}.`,
    "// The fields of the batch/v1 JobSpec and every model it reaches, as `name` or `name:Model` ('[]' a",
    "// list of, '{}' a map of); the DaemonJob hook refuses what is not here (k8s/job-spec-check.ts).",
    'export const JOB_SPEC_MODELS: Readonly<Record<string, string>> = {'
  ]
  const names = [...table.models.keys()]
  names.forEach((name, i) => {
    const model = table.models.get(name)
    const fields = (model?.fields ?? []).map(field => {
      const reference = modelOf(field.type)
      if (reference === undefined) return field.name
      const shape = field.type.startsWith('Array<') ? '[]' : field.type.startsWith('{') ? '{}' : ''
      return `${field.name}:${shape}${reference}`
    })
    lines.push(...wrapped(`  ${name}: `, fields, i === names.length - 1 ? '' : ','))
  })
  lines.push('}', '')
  return lines.join('\n')
}

/** `head'a b c'tail` as lines of at most 110 characters, joined with `+`, words kept whole. */
function wrapped (head: string, words: string[], tail: string): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of words) {
    if (line !== '' && head.length + line.length + word.length > 104) {
      lines.push(`${line} `)
      line = ''
    }
    line = line === '' ? word : `${line} ${word}`
  }
  lines.push(line)
  return lines.map((text, i) => `${i === 0 ? head : '    '}'${text}'${i === lines.length - 1 ? tail : ' +'}`)
}

/** Where the schema comes from, as the generated files say it. */
export function schemaSource (): string {
  return `the Kubernetes ${openApiVersion()} OpenAPI as @kubernetes/client-node ${clientNodeVersion()} ships it`
}

function main (): void {
  const source = schemaSource()
  const { fields, table } = daemonJobSpecFields()
  const outputs: Array<[string, string]> = [
    [DAEMONJOB_CRD, renderDaemonJobCrd(readFileSync(DAEMONJOB_CRD, 'utf8'), fields, source)],
    [JOB_SPEC_FIELDS, renderJobSpecFields(table, source)]
  ]
  for (const [file, after] of outputs) {
    const before = existsSync(file) ? readFileSync(file, 'utf8') : ''
    if (after === before) process.stdout.write(`${file}: up to date (${source})\n`)
    else {
      writeFileSync(file, after)
      process.stdout.write(`${file}: written (${source})\n`)
    }
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) main()
